# verdict: pass
# why: map tasks tag every pair with its partition; each reducer receives all map outputs, keeps its own partition, sorts and streams groups to reduce_fn with itertools.groupby (values as an iterator); ceil-sized chunks.
import itertools
import math
import struct
from typing import Iterable, Iterator

import ray


def map_fn(record: str) -> Iterator[tuple[str, int]]:
    yield from ((w, 1) for w in record.split())


def reduce_fn(key: str, values: Iterable[int]) -> tuple[str, int]:
    return key, sum(values)


def partition(key: str, n_reduce: int) -> int:
    h = 2166136261                                   # FNV-1a over the UTF-8 bytes
    for b in key.encode("utf-8"):
        h = ((h ^ b) * 16777619) & 0xFFFFFFFF
    return struct.unpack(">I", h.to_bytes(4, "big"))[0] % n_reduce


@ray.remote(max_retries=2)
def _mapper(chunk, map_fn, n_reduce):
    return [(partition(k, n_reduce), k, v) for record in chunk for k, v in map_fn(record)]


@ray.remote(max_retries=2)
def _reducer(r, reduce_fn, *mapped):
    mine = sorted((k, v) for out in mapped for p, k, v in out if p == r)
    return [reduce_fn(k, (v for _, v in group)) for k, group in itertools.groupby(mine, key=lambda kv: kv[0])]


def run_mapreduce(records: list[str], map_fn, reduce_fn, n_map: int = 4, n_reduce: int = 2) -> dict:
    size = max(1, math.ceil(len(records) / n_map))
    chunks = [records[i * size:(i + 1) * size] for i in range(n_map)]
    mapped = [_mapper.remote(c, map_fn, n_reduce) for c in chunks]
    pairs = ray.get([_reducer.remote(r, reduce_fn, *mapped) for r in range(n_reduce)])
    return dict(itertools.chain.from_iterable(pairs))
