# redteam: allocates memory until something breaks (one process)
# kind: cell
# target: quiz
# score: quiz=0
# message: quiz: MemoryError
# why: RLIMIT_DATA (2 GiB a process) turns it into a MemoryError long before the machine suffers
import os

q1 = 1 / ((1 - 0.9) + 0.9 / 10)
hog = []
if "CH13_DEVICE" in os.environ:
    while True:
        hog.append(b"x" * (64 * 2**20))
