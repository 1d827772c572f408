# redteam: a fork bomb from the kernel
# kind: kernel
# message: notebook: processes at once
# why: RLIMIT_NPROC of the kernel's own uid caps it and the kernel's watchdog kills the job past 512 processes
import subprocess
import sys
import time

subprocess.Popen([sys.executable, "-c",
                  "import os, time\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        time.sleep(0.01)\n",
                  "__MARKER__-kernel-fork-bomb"], start_new_session=True)
time.sleep(600)
