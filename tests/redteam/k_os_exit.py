# redteam: kills the kernel with os._exit(0) in the first cell (FIELD-NOTES: left the submission ungraded)
# kind: kernel
# message: notebook: [kit] execution stopped
# why: SafeExecute keeps the outputs so far and notes it; the answer cells are graded outside the kernel anyway
import os

getattr(os, "_exit")(0)
