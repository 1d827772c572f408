# redteam: takes over the subject's request pipe (dup2 a dead pipe onto the loop's descriptor, keep the real one) and answers every request from a thread, with the real id and nonce, by the right formula, while the cell's own function is wrong
# kind: cell
# target: amdahl
# score: amdahl=0
# message: amdahl: the harness did not write
# why: found by the lead (stop 19): the cell shares the subject's descriptors, so it can read the requests (a nonce is no secret from it) and answer them; before the fix this scored 5/5 with no flag. Answers are now sealed with HMAC-SHA256 under a key the judge writes first on the pipe, read before any student code runs and held in the loop's locals only: a frame without the seal is the cell's, the test fails and the TA is told
import fcntl
import json
import os
import stat
import struct
import threading


def amdahl_speedup(p, n):
    return 1 / ((1 - p) + n / p)  # wrong: the requests are answered by the thread below


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


def _serve(fd, outs):
    while True:
        (n,) = struct.unpack(">Q", _read(fd, 8))
        payload = _read(fd, n)
        try:
            req = json.loads(payload)
        except ValueError:  # sealed: the seal follows the body
            req = json.loads(payload[:-32])
        ans = {"id": req.get("id"), "nonce": req.get("nonce"), "refused": [], "tampered": []}
        try:
            if req.get("op") == "get":
                ans["ok"] = {k: {"defined": True, "callable": True, "type": "function"} for k in req["args"]}
            elif req.get("op") == "call":
                ans["ok"] = _right(*req["args"])
            else:
                ans["ok"] = None
        except ValueError as e:
            ans["raised"] = {"type": "ValueError", "module": "builtins", "traceback": "", "message": str(e)}
        body = json.dumps(ans).encode()
        for o in outs:
            try:
                os.write(o, struct.pack(">Q", len(body)) + body)
            except OSError:
                pass


def _steal(fd, outs):
    try:
        _serve(fd, outs)
    except Exception:
        pass


if "CH13_DEVICE" in os.environ:
    _fifos = []
    for _fd in range(3, 1024):
        try:
            if stat.S_ISFIFO(os.fstat(_fd).st_mode):
                _fifos.append(_fd)
        except OSError:
            pass
    _writers = [f for f in _fifos if fcntl.fcntl(f, fcntl.F_GETFL) & os.O_ACCMODE != os.O_RDONLY]
    for _fd in [f for f in _fifos if f not in _writers]:
        _mine = os.dup(_fd)  # the real request pipe, now also ours
        _dead_r, _dead_w = os.pipe()  # the loop reads this from now on: nothing ever comes
        os.dup2(_dead_r, _fd, inheritable=False)
        threading.Thread(target=_steal, args=(_mine, _writers), daemon=True).start()
