# redteam: a memory bomb in the kernel, spread over processes
# kind: kernel
# message: notebook: MiB of memory
# why: the kernel's watchdog kills its whole job past the memory limit; SafeExecute notes why
import subprocess
import sys
import time

hog = "import time\nx = bytearray(400 * 2**20)\nfor i in range(0, len(x), 4096):\n    x[i] = 1\ntime.sleep(600)\n"
procs = [subprocess.Popen([sys.executable, "-c", hog, "__MARKER__-kernel-hog"]) for _ in range(6)]
time.sleep(600)
