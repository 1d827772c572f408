# verdict: fail
# message: q1 is not right
# why: multiplies the parallel fraction by the cores (0.9 x 10 = 9): the serial 10% still takes its time
q1 = 0.9 * 10
q2 = {"deadlock": "B", "livelock": "A", "starvation": "C"}
q3 = {"order": ["thread", "warp", "block", "grid"], "warp_size": 32, "shared_memory_scope": "block"}
q4 = {"allreduce": "all", "reduce": "root"}
q5 = 17.5
