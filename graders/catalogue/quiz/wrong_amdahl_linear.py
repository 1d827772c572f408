# verdict: fail
# message: q1 is not right
# why: assumes linear speedup (n) and forgets ZeRO-3 shards the parameters
q1 = 10.0
q2 = {"deadlock": "B", "livelock": "A", "starvation": "C"}
q3 = {"order": ["thread", "warp", "block", "grid"], "warp_size": 32, "shared_memory_scope": "block"}
q4 = {"allreduce": "all", "reduce": "root"}
q5 = 140.0
