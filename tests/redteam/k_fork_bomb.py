# redteam: a fork bomb from the kernel
# kind: kernel
# message: notebook: processes at once
# why: RLIMIT_NPROC of the kernel's own uid caps it and the kernel's watchdog kills the job past 512 processes. The bomb is a shell function in a new session: it starts in a millisecond and doubles with each fork, so it passes the watchdog's limit well within the cell's few seconds even on a loaded machine (a Python bomb spent them starting its interpreter there, and the cell's clock ended it first); every process it forks keeps the marker in its command line
import subprocess
import time

subprocess.Popen(["/bin/sh", "-c", "b() { b | b & }; b", "__MARKER__-kernel-fork-bomb"], start_new_session=True)
time.sleep(600)
