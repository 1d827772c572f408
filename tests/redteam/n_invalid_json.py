# redteam: a notebook that is not valid JSON (a truncated upload)
# kind: notebook
# notebook: invalid_json
# score: quiz=- amdahl=-
# message: log: __STUDENT__
# why: nbgrader cannot read it: no autograded notebook, 0 in the gradebook, the error in nbgrader's log for the TA, and every other student is graded as usual (kit.classrun preflights it and says so)
