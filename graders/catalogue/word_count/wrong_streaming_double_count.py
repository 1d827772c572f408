# verdict: fail
# message: counts too high
# message: return value
# why: map tasks push each record's pairs to reducer actors as soon as it is mapped; a retried map task pushes its earlier records again.
import hashlib
from collections import defaultdict
from typing import Iterable, Iterator

import ray


def map_fn(record: str) -> Iterator[tuple[str, int]]:
    for word in record.split():
        yield (word, 1)


def reduce_fn(key: str, values: Iterable[int]) -> tuple[str, int]:
    return (key, sum(values))


def partition(key: str, n_reduce: int) -> int:
    return int(hashlib.md5(key.encode("utf-8")).hexdigest(), 16) % n_reduce


@ray.remote
class Reducer:
    """Collects the pairs streamed to it, reduces them at the end."""

    def __init__(self):
        self.groups = defaultdict(list)

    def add(self, pairs):
        for key, value in pairs:
            self.groups[key].append(value)

    def finish(self, reduce_fn):
        return dict(reduce_fn(key, values) for key, values in self.groups.items())


def run_mapreduce(records: list[str], map_fn, reduce_fn, n_map: int = 4, n_reduce: int = 2) -> dict:
    reducers = [Reducer.remote() for _ in range(n_reduce)]

    @ray.remote(max_retries=3, retry_exceptions=True)
    def map_task(chunk):
        for record in chunk:            # stream: low latency, nothing held in memory
            out = [[] for _ in range(n_reduce)]
            for key, value in map_fn(record):
                out[partition(key, n_reduce)].append((key, value))
            ray.get([reducers[r].add.remote(out[r]) for r in range(n_reduce)])
        return len(chunk)

    ray.get([map_task.remote(records[i::n_map]) for i in range(n_map)])
    result = {}
    for part in ray.get([r.finish.remote(reduce_fn) for r in reducers]):
        result.update(part)
    return result
