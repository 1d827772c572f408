# verdict: pass
# why: computed answers, tuples instead of lists
p, n = 0.9, 10
q1 = 1 / ((1 - p) + p / n)
q2 = dict(starvation="C", deadlock="B", livelock="A")
q3 = dict(order=("thread", "warp", "block", "grid"), warp_size=2 ** 5, shared_memory_scope="block")
q4 = {"reduce": "root", "allreduce": "all"}
q5 = 70e9 * 2 / 8 / 1e9
