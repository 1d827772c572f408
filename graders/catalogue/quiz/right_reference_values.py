# verdict: pass
# why: literal values, rounded as the question allows, letters in lower case
q1 = 5.26
q2 = {"deadlock": "b", "livelock": "a", "starvation": "c"}
q3 = {"order": ["Thread", "Warp", "Block", "Grid"], "warp_size": 32, "shared_memory_scope": "Block"}
q4 = {"allreduce": "ALL", "reduce": "root"}
q5 = 17.5
