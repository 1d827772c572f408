# redteam: a segfault through ctypes
# kind: cell
# target: quiz
# score: quiz=0
# message: quiz: not graded: this cell reaches into the process that grades it
# message: quiz: imports ctypes
# why: the static screen refuses ctypes before any of the cell runs in the grader
import ctypes

q1 = 1 / ((1 - 0.9) + 0.9 / 10)
ctypes.string_at(0)
