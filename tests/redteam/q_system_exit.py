# redteam: sys.exit(0) while the grader loads the cell, hoping the grader exits "successfully"
# kind: cell
# target: quiz
# score: quiz=0
# message: quiz: your code raised SystemExit
# why: SystemExit from student code is caught per test and fails that test; an exit status of 0 proves nothing
import sys

q1 = 1 / ((1 - 0.9) + 0.9 / 10)
sys.exit(0)
