# verdict: fail
# sample: map_and_reduce_functions
# message: counts other than 1
# why: reduce_fn counts the values instead of summing them (wrong when values are pre-summed counts).
from typing import Iterable, Iterator

import ray


def map_fn(record: str) -> Iterator[tuple[str, int]]:
    for word in record.split():
        yield (word, 1)


def reduce_fn(key: str, values: Iterable[int]) -> tuple[str, int]:
    return (key, len(list(values)))


def partition(key: str, n_reduce: int) -> int:
    import zlib
    # crc32 of the UTF-8 bytes is the same number in every process; hash() of a str is not.
    return zlib.crc32(key.encode("utf-8")) % n_reduce


def run_mapreduce(records: list[str], map_fn, reduce_fn, n_map: int = 4, n_reduce: int = 2) -> dict:
    from collections import defaultdict

    # retry_exceptions=True also re-runs a task whose map_fn / reduce_fn raised (a flaky task).
    @ray.remote(max_retries=3, retry_exceptions=True)
    def map_task(chunk):
        buckets = [[] for _ in range(n_reduce)]          # one bucket per reducer
        for record in chunk:
            for key, value in map_fn(record):
                buckets[partition(key, n_reduce)].append((key, value))
        # Everything is returned at once, when the task ends: a worker that dies part-way has
        # emitted nothing, so its retry cannot count anything twice.
        return buckets[0] if n_reduce == 1 else tuple(buckets)

    @ray.remote(max_retries=3, retry_exceptions=True)
    def reduce_task(*buckets):                           # Ray resolves the refs to their values
        groups = defaultdict(list)
        for bucket in buckets:
            for key, value in bucket:
                groups[key].append(value)
        return dict(reduce_fn(key, values) for key, values in groups.items())

    chunks = [records[i::n_map] for i in range(n_map)]  # every record in exactly one chunk
    # Submit every map task before waiting on anything, so they run in parallel.
    outputs = [map_task.options(num_returns=n_reduce).remote(chunk) for chunk in chunks]
    if n_reduce == 1:
        outputs = [[ref] for ref in outputs]
    reduce_refs = [reduce_task.remote(*(out[r] for out in outputs)) for r in range(n_reduce)]
    result = {}
    for part in ray.get(reduce_refs):
        result.update(part)                              # partition() keeps the reducers' keys disjoint
    return result
