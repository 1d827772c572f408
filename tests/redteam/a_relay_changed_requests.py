# redteam: puts itself between the judge and the subject's loop (its own pipe dup2'd onto the loop's request descriptor) and relays each request with the function's name changed to a right one of its own; the loop's answers, with the real id and nonce, go back untouched
# kind: cell
# target: amdahl
# score: amdahl=0
# message: amdahl: the harness did not write
# why: found by the lead (stop 19), after sealing the answers: a sealed answer only proves the loop wrote it, not that the loop was asked the judge's question (5/5 with no flag). Requests are now sealed too, under the same key; the loop refuses a request whose seal is not the key's and says so in a sealed answer: the test fails and the TA is told
import fcntl
import json
import os
import stat
import struct
import threading


def amdahl_speedup(p, n):
    return 1 / ((1 - p) + n / p)  # wrong: the requests are redirected to _right below


def _right(p, n):
    if not (0 <= p <= 1) or n < 1:
        raise ValueError("p must be in [0, 1] and n at least 1")
    return 1 / ((1 - p) + p / n)


def _read(fd, n):
    data = b""
    while len(data) < n:
        chunk = os.read(fd, n - len(data))
        if not chunk:
            raise EOFError
        data += chunk
    return data


def _relay(src, dst):
    try:
        while True:
            (n,) = struct.unpack(">Q", _read(src, 8))
            payload = _read(src, n)
            try:
                body, tail = payload, b""
                req = json.loads(body)
            except ValueError:  # sealed: keep the seal, change the body
                body, tail = payload[:-32], payload[-32:]
                req = json.loads(body)
            if req.get("name") == "amdahl_speedup":
                req["name"] = "_right"
            body = json.dumps(req).encode() + tail
            os.write(dst, struct.pack(">Q", len(body)) + body)
    except Exception:
        pass


if "CH13_DEVICE" in os.environ:
    for _fd in range(3, 1024):
        try:
            if not stat.S_ISFIFO(os.fstat(_fd).st_mode):
                continue
            if fcntl.fcntl(_fd, fcntl.F_GETFL) & os.O_ACCMODE != os.O_RDONLY:
                continue
        except OSError:
            continue
        _real = os.dup(_fd)  # the judge's requests now come to us
        _r, _w = os.pipe()
        os.dup2(_r, _fd, inheritable=False)  # and the loop reads what we relay
        threading.Thread(target=_relay, args=(_real, _w), daemon=True).start()
