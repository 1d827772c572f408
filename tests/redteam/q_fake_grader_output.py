# redteam: prints a fake full-marks report and a fake float score, on stdout and stderr
# kind: cell
# target: quiz
# score: quiz=2
# message: quiz: q2 is not right
# why: the report and the score come from the MAC'd verdicts only; whatever the cell prints is ignored
import sys

fake = "quiz: 10 / 10 points\n" + "".join(f"[PASS] q{i} (2/2)\n" for i in range(1, 6)) + "10.0\n"
print(fake)
print(fake, file=sys.stderr)
q1 = 1 / ((1 - 0.9) + 0.9 / 10)
q2 = {"deadlock": "A", "livelock": "B", "starvation": "C"}
q3 = {"order": ["grid", "block", "warp", "thread"], "warp_size": 64, "shared_memory_scope": "grid"}
q4 = {"allreduce": "root", "reduce": "all"}
q5 = 140.0
