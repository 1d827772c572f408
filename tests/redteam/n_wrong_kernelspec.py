# redteam: a wrong kernelspec (a kernel that does not exist here)
# kind: notebook
# notebook: wrong_kernelspec
# score: quiz=0 amdahl=4
# why: OverwriteKernelspec restores the assignment's kernelspec before execution
