# redteam: the kernel phones home (a TCP connection to the TA's machine, the internet, DNS)
# kind: kernel
# message: notebook: no network
# why: the kernel lives in its own network namespace too; it talks to nbgrader over unix sockets (ZMQ ipc transport)
import socket

for address in [("127.0.0.1", __PORT__), ("1.1.1.1", 53), ("pypi.org", 443)]:
    try:
        with socket.create_connection(address, timeout=2) as s:
            s.sendall(b"leak\n")
            print("connected", address)
    except OSError:
        print("no network:", address)
