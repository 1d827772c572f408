# redteam: every locked test cell deleted
# kind: notebook
# notebook: deleted_locked_cells
# score: quiz=0 amdahl=4
# why: RobustOverwriteCells puts them back from the gradebook (add_missing_cells), and they are graded
