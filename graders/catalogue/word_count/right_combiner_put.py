# verdict: pass
# why: records shared once with ray.put, map tasks pre-sum with reduce_fn as a combiner (Hadoop style), blake2b partition, reducers take all map outputs and pick their slice.
import hashlib
from collections import defaultdict
from typing import Iterable, Iterator

import ray


def map_fn(record: str) -> Iterator[tuple[str, int]]:
    words = record.split()
    for w in words:
        yield (w, 1)


def reduce_fn(key: str, values: Iterable[int]) -> tuple[str, int]:
    return (key, sum(v for v in values))


def partition(key: str, n_reduce: int) -> int:
    return int(hashlib.blake2b(key.encode(), digest_size=4).hexdigest(), 16) % n_reduce


def run_mapreduce(records: list[str], map_fn, reduce_fn, n_map: int = 4, n_reduce: int = 2) -> dict:
    @ray.remote(max_retries=5, retry_exceptions=True)
    def mapper(all_records, index):
        mine = all_records[index::n_map]
        grouped = defaultdict(list)
        for record in mine:
            for k, v in map_fn(record):
                grouped[k].append(v)
        out = [[] for _ in range(n_reduce)]
        for k, vs in grouped.items():        # combiner: one pre-summed pair per key per task
            ck, cv = reduce_fn(k, vs)
            out[partition(ck, n_reduce)].append((ck, cv))
        return out

    @ray.remote(max_retries=5, retry_exceptions=True)
    def reducer(r, *map_outputs):
        grouped = defaultdict(list)
        for out in map_outputs:
            for k, v in out[r]:
                grouped[k].append(v)
        return [reduce_fn(k, vs) for k, vs in grouped.items()]

    shared = ray.put(list(records))
    outs = [mapper.remote(shared, i) for i in range(n_map)]
    finals = ray.get([reducer.remote(r, *outs) for r in range(n_reduce)])
    return {k: v for pairs in finals for k, v in pairs}
