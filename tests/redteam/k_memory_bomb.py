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
# the interrupt is ignored, and this cell and every later one stall until three hogs have been full
# for 2.5 s, at most 3 s a cell. nbclient's cell timeout (5 s here) runs from the cell's start
# whatever the cell prints, and a cell that times out ends the notebook, and the job with it,
# before the watchdog could act (stop 31: a 10 s stall did that under the suite's load). With the
# quiz notebook's cells that leaves the hogs about 20 s. A cell that gives up says how many are in.
full_ticks = [0]  # half-seconds stalled since three hogs were full, over all cells


def stall(*_):
    for _ in range(6):
        _count_filled()
        if len(filled) >= 3:
            full_ticks[0] += 1
            if full_ticks[0] > 5:
                return
        time.sleep(0.5)
    print(f"[hogs full so far: {len(filled)} of 4]")


signal.signal(signal.SIGINT, signal.SIG_IGN)
get_ipython().events.register("pre_run_cell", stall)
stall()
