# redteam: monkeypatches ray so that "remote" tasks run in the driver (no worker can crash, no retry needed)
# kind: cell
# target: word_count
# score: word_count=0
# message: word_count: monkeypatches ray.remote
# why: the screen refuses it; the grader's own checks of Ray usage are not even reached
from collections import Counter

import ray


class _Local:
    def __init__(self, fn):
        self.fn = fn

    def remote(self, *a, **k):
        return self.fn(*a, **k)

    def options(self, **k):
        return self


ray.remote = lambda fn=None, **k: _Local(fn) if fn is not None else _Local
ray.get = lambda refs, **k: refs


def map_fn(record):
    for word in record.split():
        yield word, 1


def reduce_fn(key, values):
    return key, sum(values)


def partition(key, n_reduce):
    return sum(key.encode()) % n_reduce


def run_mapreduce(records, map_fn, reduce_fn, n_map=4, n_reduce=2):
    counts = Counter(w for r in records for w, _ in map_fn(r))
    return dict(counts)
