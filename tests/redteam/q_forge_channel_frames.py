# redteam: writes forged answer frames (the wire format is in the kit's source) onto every open descriptor, hoping one is the channel back to the judge
# kind: cell
# target: quiz
# score: quiz=0
# message: quiz: the harness did not write
# why: each request carries a nonce the cell never sees and answers must come in order: a frame the cell writes is noticed, the test fails and the TA is told
import json
import os
import struct

body = json.dumps({"id": 1, "nonce": "0" * 16, "ok": ["q1", "q2", "q3", "q4", "q5"], "refused": [],
                   "tampered": []}).encode()
frame = struct.pack(">Q", len(body)) + body
for fd in range(3, 1024):
    try:
        os.write(fd, frame)
    except OSError:
        pass
q1 = q2 = q3 = q4 = q5 = "forged"
