# redteam: every locked test cell edited to print full marks
# kind: notebook
# notebook: edited_locked_cells
# score: quiz=0 amdahl=4
# why: locked cells are restored from the gradebook; their outputs are the graders' verdicts anyway
