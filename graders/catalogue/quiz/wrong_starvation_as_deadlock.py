# verdict: fail
# sample: q2
# message: q2 is not right
# why: calls a thread that is passed over forever a deadlock, and the all-wait-forever case starvation
q1 = 5.26
q2 = {"deadlock": "C", "livelock": "A", "starvation": "B"}
q3 = {"order": ["thread", "warp", "block", "grid"], "warp_size": 32, "shared_memory_scope": "block"}
q4 = {"allreduce": "all", "reduce": "root"}
q5 = 17.5
