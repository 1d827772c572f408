# redteam: the kernel ignores SIGINT, SIGTERM and SIGHUP, then sleeps forever
# kind: kernel
# message: notebook: [kit] execution stopped
# why: nbclient's interrupt is ignored; the cell times out, the kernel's job is SIGKILLed by uid, the outputs so far are kept and grading goes on outside the kernel
import signal
import time

for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
    signal.signal(sig, signal.SIG_IGN)
while True:
    time.sleep(1)
