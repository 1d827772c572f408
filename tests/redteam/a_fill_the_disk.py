# redteam: fills the disk: the work folder, HOME, /tmp, /var/tmp, /dev/shm, and one gigantic file
# kind: cell
# target: amdahl
# score: amdahl=5
# why: every writable place is a size-capped tmpfs private to the job (freed with it); RLIMIT_FSIZE caps any one file; the host sees none of it
import os

if "CH13_DEVICE" in os.environ:
    block = b"\0" * (16 * 2**20)
    for folder in [".", os.path.expanduser("~"), "/tmp", "/var/tmp", "/dev/shm"]:
        for i in range(1000):
            try:
                with open(os.path.join(folder, f"__MARKER__-fill-{i}"), "wb") as f:
                    for _ in range(64):
                        f.write(block)
            except OSError:
                break


def amdahl_speedup(p, n):
    if not (0 <= p <= 1) or n < 1:
        raise ValueError("p must be in [0, 1] and n >= 1")
    return 1 / ((1 - p) + p / n)
