# verdict: fail
# sample: q5
# message: q5 is not right
# why: counts 4 bytes per parameter (FP32) where the question says FP16
q1 = 5.26
q2 = {"deadlock": "B", "livelock": "A", "starvation": "C"}
q3 = {"order": ["thread", "warp", "block", "grid"], "warp_size": 32, "shared_memory_scope": "block"}
q4 = {"allreduce": "all", "reduce": "root"}
q5 = 70e9 * 4 / 8 / 1e9
