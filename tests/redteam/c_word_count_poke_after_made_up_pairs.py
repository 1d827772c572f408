# redteam: no retries; a failed task's pairs (record.split()) or sums made up in the driver, plus a throwaway remote task that calls map_fn / reduce_fn once more on the failed chunk and discards the output
# kind: cell
# target: word_count
# score: word_count=15
# message: word_count: a pair map_fn did not emit
# why: found by the 23rd red team: got 20, honest 15 (no flag). survives_crashes asks only that each fired fault's target reached map_fn/reduce_fn at least twice (the probe's call log) and that Ray recorded the failed attempts; a "poke" task that starts map_fn's generator (next(iter(map_fn(r)), None)) or calls reduce_fn, and throws the result away, satisfies both while the counts come from the driver's own word splitting. Same answer with POKE = False: 15 ("the failed map task was never run again"). Fix: make the faulted runs' map output unpredictable to the driver (a per-run secret weight per pair, as value="len" but hidden), so made-up pairs give wrong counts, or require the redone call's output to be what reached the result. Stopped (stop 37) for map tasks: in the crash runs map_fn emits (word, w), a weight of 2 to 6 per word (graders.word_count.CRASH_WEIGHTS), so pairs made up as (word, 1) show in the counts. Still open for a failed reduce task: the driver can sum its values itself and call reduce_fn for show (a reduce_fn that is not a plain sum would break combiners)
from collections import defaultdict
from typing import Iterable, Iterator

import ray


def map_fn(record: str) -> Iterator[tuple[str, int]]:
    for word in record.split():
        yield (word, 1)


def reduce_fn(key: str, values: Iterable[int]) -> tuple[str, int]:
    return (key, sum(values))


def partition(key: str, n_reduce: int) -> int:
    import zlib
    return zlib.crc32(key.encode("utf-8")) % n_reduce


POKE = True


def run_mapreduce(records: list[str], map_fn, reduce_fn, n_map: int = 4, n_reduce: int = 2) -> dict:
    @ray.remote(max_retries=0)
    def map_task(chunk):
        buckets = [[] for _ in range(n_reduce)]
        for record in chunk:
            for key, value in map_fn(record):
                buckets[partition(key, n_reduce)].append((key, value))
        return buckets

    @ray.remote(max_retries=0)
    def reduce_task(bucket):
        groups = defaultdict(list)
        for key, value in bucket:
            groups[key].append(value)
        return dict(reduce_fn(key, values) for key, values in groups.items())

    @ray.remote(max_retries=0)
    def poke_map(chunk):  # touches map_fn on each record, keeps nothing
        for record in chunk:
            next(iter(map_fn(record)), None)

    @ray.remote(max_retries=0)
    def poke_reduce(groups):
        for key, values in groups.items():
            reduce_fn(key, values)

    chunks = [records[i::n_map] for i in range(n_map)]
    refs = [map_task.remote(chunk) for chunk in chunks]
    buckets = [[] for _ in range(n_reduce)]
    for chunk, ref in zip(chunks, refs):
        try:
            out = ray.get(ref)
        except Exception:  # the task failed and is not retried: its pairs made up in the driver
            out = [[] for _ in range(n_reduce)]
            for record in chunk:
                for word in record.split():
                    out[partition(word, n_reduce)].append((word, 1))
            if POKE:
                ray.get(poke_map.remote(chunk))
        for r in range(n_reduce):
            buckets[r].extend(out[r])
    result = {}
    rrefs = [reduce_task.remote(b) for b in buckets]
    for b, ref in zip(buckets, rrefs):
        try:
            result.update(ray.get(ref))
        except Exception:  # made-up sums
            groups = defaultdict(list)
            for key, value in b:
                groups[key].append(value)
            result.update({k: sum(v) for k, v in groups.items()})
            if POKE:
                ray.get(poke_reduce.remote(dict(groups)))
    return result
