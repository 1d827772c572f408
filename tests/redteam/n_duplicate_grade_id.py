# redteam: the answer cell duplicated (grade_id twice): a right answer in the copy, the wrong one in place
# kind: notebook
# notebook: duplicate_grade_id
# score: quiz=10 amdahl=4
# why: nbgrader's DeduplicateIds keeps the LAST cell with the id (the right copy) and demotes the first; the kit grades the one kept
