# redteam: starts a daemon in its own session with an empty environment, to outlive grading
# kind: cell
# target: quiz
# score: quiz=2
# message: quiz: `q2` is not answered yet
# why: the job's processes are found by their uid (each job has its own), not only by environment or session; kill_job sweeps them all
import os
import subprocess
import sys

if "CH13_DEVICE" in os.environ:
    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)", "__MARKER__-grader-daemon"],
                     env={}, start_new_session=True, stdin=subprocess.DEVNULL,
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
q1 = 1 / ((1 - 0.9) + 0.9 / 10)
q2 = q3 = q4 = q5 = None
