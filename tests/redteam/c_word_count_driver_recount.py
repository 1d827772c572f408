# redteam: wrong_no_retries (max_retries=0, a dead worker fails the job) whose driver, when a task fails, makes up that task's output itself (the pairs of record.split(), or the sums of the values) calling neither map_fn nor reduce_fn: the crash schedule's probes compute exactly that map, so the counts come out right, every fault fires in a worker and no probe call is seen in the driver
# kind: cell
# target: word_count
# score: word_count=15
# message: word_count: a pair map_fn did not emit
# why: survives_crashes checks that the faults fired (Ray's record), that no probe ran in the driver and that the counts are right, not that the counts came from map_fn/reduce_fn: in the crash runs the probes are the reference map, so a driver recount with record.split() is indistinguishable from a retry. Stopped (stop 36): every fired fault's record or key must reach map_fn/reduce_fn again in a later attempt (graders/word_count.py survives_crashes) Since stop 37 the crash runs' map_fn emits weighted pairs, so the made-up pairs fail it first.
from typing import Iterable, Iterator

import ray


def map_fn(record: str) -> Iterator[tuple[str, int]]:
    for word in record.split():
        yield (word, 1)


def reduce_fn(key: str, values: Iterable[int]) -> tuple[str, int]:
    return (key, sum(values))


def partition(key: str, n_reduce: int) -> int:
    import zlib
    # crc32 of the UTF-8 bytes is the same number in every process; hash() of a str is not.
    return zlib.crc32(key.encode("utf-8")) % n_reduce


def run_mapreduce(records: list[str], map_fn, reduce_fn, n_map: int = 4, n_reduce: int = 2) -> dict:
    from collections import defaultdict

    # retry_exceptions=True also re-runs a task whose map_fn / reduce_fn raised (a flaky task).
    @ray.remote(max_retries=0)
    def map_task(chunk):
        buckets = [[] for _ in range(n_reduce)]          # one bucket per reducer
        for record in chunk:
            for key, value in map_fn(record):
                buckets[partition(key, n_reduce)].append((key, value))
        # Everything is returned at once, when the task ends: a worker that dies part-way has
        # emitted nothing, so its retry cannot count anything twice.
        return buckets[0] if n_reduce == 1 else tuple(buckets)

    @ray.remote(max_retries=0)
    def reduce_task(*buckets):                           # Ray resolves the refs to their values
        groups = defaultdict(list)
        for bucket in buckets:
            for key, value in bucket:
                groups[key].append(value)
        return dict(reduce_fn(key, values) for key, values in groups.items())

    chunks = [records[i::n_map] for i in range(n_map)]  # every record in exactly one chunk
    outputs = [map_task.options(num_returns=n_reduce).remote(chunk) for chunk in chunks]
    maps = []
    for chunk, out in zip(chunks, outputs):
        try:
            maps.append(ray.get(list(out) if n_reduce > 1 else [out]))
        except Exception:  # the task failed and is not retried: its pairs made up in the driver, without map_fn
            made = [[] for _ in range(n_reduce)]
            for record in chunk:
                for word in record.split():
                    made[partition(word, n_reduce)].append((word, 1))
            maps.append(made)
    reduce_refs = [reduce_task.remote(*(m[r] for m in maps)) for r in range(n_reduce)]
    result = {}
    for r, ref in enumerate(reduce_refs):
        try:
            result.update(ray.get(ref))
        except Exception:  # the same for a failed reduce task: summed in the driver, without reduce_fn
            for m in maps:
                for key, value in m[r]:
                    result[key] = result.get(key, 0) + value
    return result
