# verdict: pass
# why: tasks with max_retries=0 and the driver's own retry loop (ray.wait, resubmit a failed task up to 3 times); polynomial-hash partition; contiguous chunks.
from typing import Iterable, Iterator

import ray


def map_fn(record: str) -> Iterator[tuple[str, int]]:
    for word in record.split():
        yield word, 1


def reduce_fn(key: str, values: Iterable[int]) -> tuple[str, int]:
    total = 0
    for v in values:
        total += v
    return key, total


def partition(key: str, n_reduce: int) -> int:
    h = 0
    for ch in key:                       # code points: the same in every process
        h = (h * 31 + ord(ch)) % 1_000_000_007
    return h % n_reduce


def _run_all(task, arg_lists, retries=3):
    """Run task(*args) for every args, all at once; resubmit a failed one up to `retries` times."""
    pending = {task.remote(*args): (i, 0) for i, args in enumerate(arg_lists)}
    results = [None] * len(arg_lists)
    while pending:
        ready, _ = ray.wait(list(pending), num_returns=1)
        i, tries = pending.pop(ready[0])
        try:
            results[i] = ray.get(ready[0])
        except ray.exceptions.RayError:
            if tries >= retries:
                raise
            pending[task.remote(*arg_lists[i])] = (i, tries + 1)
    return results


def run_mapreduce(records: list[str], map_fn, reduce_fn, n_map: int = 4, n_reduce: int = 2) -> dict:
    @ray.remote(max_retries=0)
    def map_task(chunk):
        out = [dict() for _ in range(n_reduce)]
        for record in chunk:
            for key, value in map_fn(record):
                out[partition(key, n_reduce)].setdefault(key, []).append(value)
        return out

    @ray.remote(max_retries=0)
    def reduce_task(groups_list):
        merged = {}
        for groups in groups_list:
            for key, values in groups.items():
                merged.setdefault(key, []).extend(values)
        return [reduce_fn(key, values) for key, values in merged.items()]

    size = -(-len(records) // n_map) if records else 0
    chunks = [records[i * size:(i + 1) * size] for i in range(n_map)]
    mapped = _run_all(map_task, [(c,) for c in chunks])
    reduced = _run_all(reduce_task, [([m[r] for m in mapped],) for r in range(n_reduce)])
    return {key: value for pairs in reduced for key, value in pairs}
