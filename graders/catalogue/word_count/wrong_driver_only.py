# verdict: fail
# sample: survives_crashes
# message: ran in the driver process
# why: everything runs in the driver; Ray only stores the records (ray.put), so nothing is parallel or fault tolerant.
from collections import defaultdict
from typing import Iterable, Iterator

import ray


def map_fn(record: str) -> Iterator[tuple[str, int]]:
    for word in record.split():
        yield (word, 1)


def reduce_fn(key: str, values: Iterable[int]) -> tuple[str, int]:
    return (key, sum(values))


def partition(key: str, n_reduce: int) -> int:
    return sum(key.encode("utf-8")) % n_reduce


def run_mapreduce(records: list[str], map_fn, reduce_fn, n_map: int = 4, n_reduce: int = 2) -> dict:
    refs = [ray.put(records[i::n_map]) for i in range(n_map)]
    buckets = [defaultdict(list) for _ in range(n_reduce)]
    for ref in refs:
        for record in ray.get(ref):
            for key, value in map_fn(record):
                buckets[partition(key, n_reduce)][key].append(value)
    result = {}
    for bucket in buckets:
        for key, values in bucket.items():
            k, v = reduce_fn(key, values)
            result[k] = v
    return result
