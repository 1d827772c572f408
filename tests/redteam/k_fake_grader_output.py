# redteam: the notebook prints a fake full-marks report and fake scores from a cell of its own
# kind: kernel
# message: notebook: quiz: 10 / 10 points
# why: the TA sees the fake text in that cell's output, but only the locked test cells carry scores and the kit writes them after execution (the cells graded with this one keep exactly their own scores)
print("quiz: 10 / 10 points")
print("amdahl: 5 / 5 points")
10.0
