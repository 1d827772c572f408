# redteam: a notebook with no cells at all
# kind: notebook
# notebook: empty_notebook
# score: quiz=0 amdahl=0
# message: quiz: no answer cell `quiz`
# message: amdahl: no answer cell `amdahl`
# why: the locked cells are put back, the answers are missing: 0 with the reason
