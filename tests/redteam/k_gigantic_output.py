# redteam: prints 30 MB (30 times the cap) in a notebook cell
# kind: kernel
# message: notebook: output of this cell cut at
# why: SafeExecute drops a cell's output past 1 MB as it arrives, so nbgrader's memory and the feedback stay small
line = "spam " * 20_000 + "\n"
for _ in range(300):
    print(line, end="")
