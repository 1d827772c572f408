# redteam: starts a daemon in its own session with an empty environment, to outlive grading
# kind: cell
# target: quiz
# score: quiz=0
# message: quiz: not graded
# why: in the subject the audit hook refuses starting processes from the cell (no exercise needs it), so the daemon never starts; and the job is pid 1 of its own PID namespace and killed by uid (kill_job), so nothing could outlive it anyway
import os
import subprocess
import sys

if "CH13_DEVICE" in os.environ:
    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)", "__MARKER__-grader-daemon"],
                     env={}, start_new_session=True, stdin=subprocess.DEVNULL,
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
q1 = 1 / ((1 - 0.9) + 0.9 / 10)
q2 = q3 = q4 = q5 = None
