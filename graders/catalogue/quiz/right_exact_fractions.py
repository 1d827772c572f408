# verdict: pass
# why: exact values with more digits than the question asks for, upper-case letters, ints where floats are expected
from fractions import Fraction

q1 = float(1 / (Fraction(1, 10) + Fraction(9, 100)))  # 5.2631...
q2 = {"starvation": "C", "livelock": "A", "deadlock": "B"}
q3 = {"order": ["THREAD", "WARP", "BLOCK", "GRID"], "warp_size": 32.0, "shared_memory_scope": " block "}
q4 = {"reduce": "Root", "allreduce": "All"}
q5 = 140 / 8
