# redteam: the kernel double-forks a daemon with an empty environment in its own session
# kind: kernel
# message: notebook: daemon started
# why: after the kernel shuts down its job is killed by uid, daemons included
import subprocess
import sys

subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)", "__MARKER__-kernel-daemon"],
                 env={}, start_new_session=True, stdin=subprocess.DEVNULL,
                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print("daemon started")
