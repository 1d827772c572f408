# redteam: a memory bomb spread over several processes, each under the per-process limit
# kind: cell
# target: amdahl
# score: amdahl=0
# message: amdahl: not graded
# why: the job's watchdog sums the resident memory of all its processes and kills the job past the limit
import os
import subprocess
import sys
import time

if "CH13_DEVICE" in os.environ:
    hog = "import time\nx = b'\\1' * (400 * 2**20)\ntime.sleep(600)\n"
    for _ in range(6):
        subprocess.Popen([sys.executable, "-S", "-c", hog, "__MARKER__-memory-hog"])
    time.sleep(600)


def amdahl_speedup(p, n):
    return 1 / ((1 - p) + p / n)
