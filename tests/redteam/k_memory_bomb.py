# redteam: a memory bomb in the kernel, spread over processes
# kind: kernel
# message: notebook: MiB of memory
# why: the kernel's watchdog kills its whole job past the memory limit; SafeExecute notes why
import signal
import subprocess
import sys
import time

from IPython import get_ipython

# Four hogs of 700 MiB (each under the 2048 MiB per-process limit, any three together past the
# job's), forked from one launcher in a session of its own (out of reach of the SIGINT a cell
# timeout sends the kernel's process group; forks, not three more interpreters to start), each
# filling its memory in one system call.
launcher = (
    "import mmap, os, time\n"
    "for _ in range(4):\n"
    "    if os.fork() == 0:\n"
    "        hog = mmap.mmap(-1, 700 * 2**20, flags=mmap.MAP_PRIVATE | mmap.MAP_POPULATE)\n"
    "        break\n"
    "time.sleep(600)\n"
)
subprocess.Popen([sys.executable, "-S", "-c", launcher, "__MARKER__-kernel-hog"], start_new_session=True)


# And the kernel stays up until the watchdog acts, however slowly the machine hands out memory:
# the interrupt is ignored, and this cell and every later one stall for a while, each under its own
# 5 s timeout (a cell that times out ends the notebook, and its job with it, before the hogs fill).
def stall(*_):
    for _ in range(5):
        print(".", end="", flush=True)
        time.sleep(0.5)


signal.signal(signal.SIGINT, signal.SIG_IGN)
get_ipython().events.register("pre_run_cell", stall)
stall()
