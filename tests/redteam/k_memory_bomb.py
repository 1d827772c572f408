# redteam: a memory bomb in the kernel, spread over processes
# kind: kernel
# message: notebook: MiB of memory
# why: the kernel's watchdog kills its whole job past the memory limit; SafeExecute notes why
import os
import select
import signal
import subprocess
import sys
import time

from IPython import get_ipython

# Four hogs of 700 MiB (each under the 2048 MiB per-process limit, any three together past the
# job's), forked from one launcher in a session of its own (out of reach of the SIGINT a cell
# timeout sends the kernel's process group; forks, not three more interpreters to start), each
# filling its memory in one system call and then saying so on a pipe.
launcher = (
    "import mmap, os, sys, time\n"
    "said = int(sys.argv[2])\n"
    "for _ in range(4):\n"
    "    if os.fork() == 0:\n"
    "        hog = mmap.mmap(-1, 700 * 2**20, flags=mmap.MAP_PRIVATE | mmap.MAP_POPULATE)\n"
    "        os.write(said, b'x')\n"
    "        break\n"
    "time.sleep(600)\n"
)
filled_r, filled_w = os.pipe()
subprocess.Popen(
    [sys.executable, "-S", "-c", launcher, "__MARKER__-kernel-hog", str(filled_w)],
    start_new_session=True,
    pass_fds=(filled_w,),
)
os.close(filled_w)
filled = []  # a byte per hog whose memory is in


def _count_filled():
    while select.select([filled_r], [], [], 0)[0]:
        got = os.read(filled_r, 16)
        if not got:  # every hog is gone (killed): nothing more will come
            return
        filled.extend(got)


# And the kernel stays up until the watchdog acts, however slowly the machine hands out memory:
# the interrupt is ignored, and this cell and every later one stall, printing a dot each 0.5 s (so
# nbclient's 5 s timeout, which counts silence, never ends a cell), until three hogs are full and
# 2.5 s more, or for 10 s at most (under the cell's 20 s clock guard; a cell stopped by it ends
# the notebook, and the job with it, before the watchdog could act).
def stall(*_):
    full_for = 0
    for _ in range(20):
        _count_filled()
        full_for = full_for + 1 if len(filled) >= 3 else 0
        if full_for > 5:
            return
        print(".", end="", flush=True)
        time.sleep(0.5)


signal.signal(signal.SIGINT, signal.SIG_IGN)
get_ipython().events.register("pre_run_cell", stall)
stall()
