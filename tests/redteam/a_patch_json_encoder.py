# redteam: patches methods of classes on the result path that no guard watched (json.JSONEncoder.encode, dataclasses.asdict) to write a passing verdict
# kind: cell
# target: amdahl
# score: amdahl=0
# message: amdahl: the harness did not write
# why: verdicts are written by the judge, whose json and dataclasses the cell cannot reach. In the subject the patched encoder breaks the answer frames (no id, no nonce): the judge notices frames the harness did not write and the cell earns nothing; the screen flags the monkeypatches for the TA
import dataclasses
import json

json.JSONEncoder.encode = lambda self, o: '{"passed": true, "points": 99}'
dataclasses.asdict = lambda obj, **kw: {"passed": True, "points": 99}


def amdahl_speedup(p, n):
    if not (0 <= p <= 1) or n < 1:
        raise ValueError("bad input")
    return 1.0
