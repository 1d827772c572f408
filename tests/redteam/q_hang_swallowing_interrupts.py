# redteam: sleeps forever in the grader, swallowing KeyboardInterrupt, SystemExit and every other exception
# kind: cell
# target: quiz
# score: quiz=0
# message: quiz: your code never finished
# why: the hang guard SIGKILLs the whole job (it cannot be caught); tests without a verdict score 0 with the reason
import os
import time

q1 = 1 / ((1 - 0.9) + 0.9 / 10)
if "CH13_DEVICE" in os.environ:        # in the grader only (the kernel has its own entry)
    while True:
        try:
            time.sleep(3600)
        except BaseException:
            pass
