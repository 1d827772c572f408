# verdict: fail
# sample: q3
# message: q3 is not right
# why: takes AMD's 64-wide wavefront for NVIDIA's warp, and shared memory as visible to the whole grid
q1 = 5.26
q2 = {"deadlock": "B", "livelock": "A", "starvation": "C"}
q3 = {"order": ["thread", "warp", "block", "grid"], "warp_size": 64, "shared_memory_scope": "grid"}
q4 = {"allreduce": "all", "reduce": "root"}
q5 = 17.5
