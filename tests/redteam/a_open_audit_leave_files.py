# redteam: empties the audit hook's rule tables (kit.audit), then starts more processes than the watchdog allows, so the whole job is killed before it can clean up, leaving its folders in the host's /tmp
# kind: cell
# target: amdahl
# score: amdahl=0
# message: amdahl: not graded: this cell reaches into the process that grades it
# why: found by the white-box red team. The hook's tables are bound in its closure when it is installed (rebinding the module's changes nothing), the import of the kit is refused, and the judge's and subjects' folders live inside grade_cell's own work folder, removed even when the judge is killed
import os
import subprocess
import time

from kit import audit


def _open(g):
    g.FROM_STUDENT = frozenset()
    g.TRUSTED_ONLY = frozenset()
    g.FROM_STUDENT_PREFIXES = ("\0",)


_open(audit)
if "CH13_DEVICE" in os.environ:
    os.write(2, b"X" * (5 * 2**20))
    for _ in range(520):
        subprocess.Popen(["sleep", "120"])
    time.sleep(60)


def amdahl_speedup(p, n):
    return 1.0
