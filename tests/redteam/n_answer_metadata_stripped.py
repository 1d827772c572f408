# redteam: the answer cell's nbgrader metadata stripped (a right answer in it)
# kind: notebook
# notebook: answer_metadata_stripped
# score: quiz=0 amdahl=4
# message: quiz: no answer cell `quiz`
# why: without its metadata the cell is not the answer cell: 0 with a message that says so, for the TA to review
