# verdict: pass
# why: module-level @ray.remote tasks with Ray's default retries (worker deaths only; a raising task propagates its error), sha1 partition, map tasks return one dict per reducer, reducers fetch with ray.get.
import hashlib
from functools import reduce
from typing import Iterable, Iterator

import ray


def map_fn(record: str) -> Iterator[tuple[str, int]]:
    return ((word, 1) for word in record.split())


def reduce_fn(key: str, values: Iterable[int]) -> tuple[str, int]:
    return key, reduce(lambda a, b: a + b, values, 0)


def partition(key: str, n_reduce: int) -> int:
    digest = hashlib.sha1(key.encode("utf-8", "surrogatepass")).digest()
    return int.from_bytes(digest[:8], "big") % n_reduce


@ray.remote
def map_chunk(chunk, map_fn, n_reduce):
    parts = [{} for _ in range(n_reduce)]
    for record in chunk:
        for key, value in map_fn(record):
            parts[partition(key, n_reduce)].setdefault(key, []).append(value)
    return parts


@ray.remote
def reduce_part(map_refs, r, reduce_fn):
    groups = {}
    for parts in ray.get(map_refs):             # nested refs are not resolved automatically
        for key, values in parts[r].items():
            groups.setdefault(key, []).extend(values)
    return dict(reduce_fn(key, values) for key, values in groups.items())


def run_mapreduce(records: list[str], map_fn, reduce_fn, n_map: int = 4, n_reduce: int = 2) -> dict:
    records_ref = list(records)
    bounds = [len(records_ref) * i // n_map for i in range(n_map + 1)]
    map_refs = [map_chunk.remote(records_ref[bounds[i]:bounds[i + 1]], map_fn, n_reduce) for i in range(n_map)]
    parts = ray.get([reduce_part.remote(map_refs, r, reduce_fn) for r in range(n_reduce)])
    out = {}
    for part in parts:
        out.update(part)
    return out
