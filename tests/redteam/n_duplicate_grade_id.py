# redteam: the answer cell duplicated (grade_id twice): a right answer in the copy, the wrong one in place
# kind: notebook
# notebook: duplicate_grade_id
# score: quiz=10 amdahl=4
# known-bug: nbgrader 0.9.6 OverwriteCells.add_missing_task_cells raises KeyError('grade_id') on the cell DeduplicateIds demoted (nbgrader: {}), so the whole submission fails; fix in kit/overwrite.py (see docs/sandbox.md)
# why: nbgrader's DeduplicateIds keeps the LAST cell with the id (the right copy) and demotes the first; the kit grades the one kept
