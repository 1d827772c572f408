# redteam: a memory bomb in the kernel, spread over processes
# kind: kernel
# message: notebook: MiB of memory
# why: the kernel's watchdog kills its whole job past the memory limit; SafeExecute notes why
import signal
import subprocess
import sys
import time

# Three hogs of 800 MiB (each under the 2048 MiB per-process limit, together past the job's): each
# fills its memory in one C call. The cell's 5 s timeout interrupts it (a SIGINT to the kernel's
# process group) however far it got, so the cell makes one Popen, of a launcher in a session of
# its own, which starts the hogs out of the interrupt's reach: on a loaded machine three Popens from
# the cell were cut short below the limit and the notebook went on with no note.
hog = "import time\nx = b'\\1' * (800 * 2**20)\ntime.sleep(600)\n"
launcher = f"import subprocess, sys\nfor _ in range(3):\n    subprocess.Popen([sys.executable, '-S', '-c', {hog!r}, sys.argv[1]])\n"
subprocess.Popen([sys.executable, "-S", "-c", launcher, "__MARKER__-kernel-hog"], start_new_session=True)
# And the kernel stays up until the watchdog acts: the interrupt is ignored and output keeps coming
# (no IOPub timeout), so the notebook cannot end, and its job with it, before the hogs fill up.
signal.signal(signal.SIGINT, signal.SIG_IGN)
for _ in range(1200):
    print(".", end="", flush=True)
    time.sleep(0.5)
