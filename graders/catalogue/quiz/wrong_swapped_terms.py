# verdict: fail
# message: q2 is not right
# message: q3 is not right
# message: q4 is not right
# why: livelock/deadlock swapped, warp and block swapped, AllReduce and Reduce swapped
q1 = 5.26
q2 = {"deadlock": "A", "livelock": "B", "starvation": "C"}
q3 = {"order": ["thread", "block", "warp", "grid"], "warp_size": 32, "shared_memory_scope": "grid"}
q4 = {"allreduce": "root", "reduce": "all"}
q5 = 17.5
