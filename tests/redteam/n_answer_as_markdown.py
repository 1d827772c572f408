# redteam: the answer cell turned into markdown
# kind: notebook
# notebook: answer_as_markdown
# score: quiz=10 amdahl=4
# why: graders take the answer cell's SOURCE (by its grade_id), whatever its type: the right answer the student wrote earns its points although the kernel never ran it; nothing crashes
