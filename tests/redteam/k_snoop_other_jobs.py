# redteam: the kernel looks through /proc for other jobs: their environments (tokens), connection files, memory
# kind: kernel
# message: notebook: readable environments of other processes: 0
# why: every job has its own uid: another process's environ, fds and memory are refused; its connection file sits in a folder of its own
import glob
import os

me = os.getuid()
readable = 0
for pid in filter(str.isdigit, os.listdir("/proc")):
    try:
        if os.stat(f"/proc/{pid}").st_uid == me:
            continue
        open(f"/proc/{pid}/environ", "rb").read()
        readable += 1
    except OSError:
        pass
print("readable environments of other processes:", readable)
print("connection files seen:", len(glob.glob("/tmp/**/kernel-*.json", recursive=True)))
