"""Ray helpers for notebook 04 (word-count MapReduce): a fast local cluster, and the self-check.

``start_local_ray()`` starts (once per process) a small Ray cluster that listens on 127.0.0.1 only,
writes no auth token into your home directory, has no dashboard and keeps its files in a fresh
folder under /tmp. ``self_check(namespace)`` tries your ``map_fn``, ``reduce_fn``, ``partition`` and
``run_mapreduce`` on a few small cases, including one worker that dies part-way through a map
task, and prints one line per check (✔ passed / ✘ what to fix).

The hidden graders use the same cluster settings with many more corpora, crash schedules and
parallelism checks.
"""

from __future__ import annotations

import atexit
import collections
import contextlib
import os
import shutil
import subprocess
import sys
import tempfile

from ch13lib import grading

# Read by Ray when it starts its processes (FIELD-NOTES): no ~/.ray/auth_token, loopback only,
# no usage-stats upload. PYTHONHASHSEED=0 gives every worker the same str hash, so a submission
# behaves the same whichever worker runs which task (the graders check partition() separately,
# in processes with different seeds).
RAY_ENV = {
    "RAY_AUTH_MODE": "disabled",
    "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",
    "RAY_USAGE_STATS_ENABLED": "0",
    "PYTHONHASHSEED": "0",
}

_temp_dir: str | None = None


def start_local_ray(num_cpus: int = 2, object_store_mb: int = 80):
    """Start a small loopback-only Ray cluster in this process, unless Ray is already running.

    Returns the ``ray`` module. Safe to call many times: only the first call starts Ray.
    """
    global _temp_dir
    for key, value in RAY_ENV.items():
        os.environ.setdefault(key, value)
    import ray
    from ray import cloudpickle

    # Functions of this module travel to the workers by value (workers need not import ch13lib).
    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    if ray.is_initialized():
        return ray
    # Short, fresh, private: Ray's Unix socket paths must stay under ~100 characters, and HOME may
    # be read-only or temporary. A sandbox's own short TMPDIR is used (and cleaned) where it has one.
    base = tempfile.gettempdir()
    _temp_dir = tempfile.mkdtemp(prefix="ch13ray-", dir=base if len(base) <= 40 else "/tmp")
    # Registered before ray.init, so it runs after Ray's own exit handler (atexit is LIFO): a
    # kernel that ends normally leaves no session folder behind.
    atexit.register(shutil.rmtree, _temp_dir, True)
    ray.init(
        num_cpus=num_cpus,
        include_dashboard=False,
        object_store_memory=object_store_mb * 1024 * 1024,
        _temp_dir=_temp_dir,
        log_to_driver=False,
        logging_level="ERROR",
        _system_config={"task_retry_delay_ms": 0},
    )
    return ray


def stop_local_ray() -> None:
    """Shut Ray down and remove its temporary folder (Ray's helper processes do not exit by
    themselves when the driver process ends abruptly)."""
    global _temp_dir
    import ray

    if ray.is_initialized():
        ray.shutdown()
    if _temp_dir:
        shutil.rmtree(_temp_dir, ignore_errors=True)
        _temp_dir = None


def live_actors() -> set[str]:
    """Ids of the actors of this driver's Ray job that are not dead."""
    import ray
    from ray._private import state

    job = ray.get_runtime_context().get_job_id()
    return {a for a, info in state.actors().items() if info["State"] != "DEAD" and info["JobID"] == job}


def reap_actors(spare=frozenset(), polls: int = 200) -> int:
    """Kill the actors of this driver's Ray job that are alive and not in ``spare`` (ids, as
    ``live_actors`` gives them before a run). Returns how many were killed.

    An actor lives as long as a handle to it does, and a handle captured by a remote function's
    closure lives as long as the cluster: a run_mapreduce that does so leaves one idle worker
    process (~20 threads) behind per actor on every call. Reaping after each call keeps repeated
    runs within the process limits. Ray's public API has no "list my actors", so this reads the
    GCS actor table (ray._private.state; ray is pinned) and waits, at most ``polls`` short polls,
    for the kills to land.
    """
    import time

    import ray
    from ray._private import state
    from ray._raylet import ActorID

    victims = sorted(live_actors() - set(spare))
    core = ray._private.worker.global_worker.core_worker
    for actor in victims:
        core.kill_actor(ActorID(bytes.fromhex(actor)), True)
    for _ in range(polls if victims else 0):
        table = state.actors()
        if all(table.get(a, {}).get("State") == "DEAD" for a in victims):
            break
        time.sleep(0.025)
    return len(victims)


@contextlib.contextmanager
def reaping():
    """Kill, on leaving the block, the actors it left alive (see ``reap_actors``)."""
    before = live_actors()
    try:
        yield
    finally:
        reap_actors(before)


# ---------------------------------------------------------------------------------------------
# Probes the self-check passes to run_mapreduce instead of plain map_fn / reduce_fn.


def reference_map_fn(record):
    for word in record.split():
        yield (word, 1)


def reference_reduce_fn(key, values):
    return (key, sum(values))


class DieOnce:
    """A map_fn that behaves like ``reference_map_fn`` but, the first time it is called on
    ``victim`` inside a Ray worker, emits ``after`` pairs and then kills its worker process.
    Attempts are counted with marker files in ``folder``, so the retry runs normally. Calls are
    logged there too (process id, Ray task id) so the self-check can see where the map ran."""

    def __init__(self, victim: str, after: int, folder: str, driver_pid: int) -> None:
        self.victim, self.after, self.folder, self.driver_pid = victim, after, folder, driver_pid

    def __call__(self, record):
        import ray

        task = ray.get_runtime_context().get_task_id()
        with open(os.path.join(self.folder, f"calls-{os.getpid()}.log"), "a", encoding="utf-8") as f:
            f.write(f"{os.getpid()} {task}\n")
        in_worker = task is not None and os.getpid() != self.driver_pid
        first = False
        if record == self.victim and in_worker:
            try:
                os.close(os.open(os.path.join(self.folder, "died"), os.O_CREAT | os.O_EXCL))
                first = True
            except FileExistsError:
                pass
        for i, pair in enumerate(reference_map_fn(record)):
            if first and i == self.after:
                os._exit(1)  # the worker dies after emitting `after` pairs
            yield pair


def _calls(folder: str) -> list[tuple[int, str]]:
    out = []
    for name in os.listdir(folder):
        if name.startswith("calls-"):
            with open(os.path.join(folder, name), encoding="utf-8") as f:
                out += [(int(p), t) for p, t in (line.split() for line in f if line.strip())]
    return out


_HASH_CHILD = (
    "import sys, ray.cloudpickle as cp\n"
    "f = cp.loads(sys.stdin.buffer.read())\n"
    "keys = ['the', 'The', 'cat', 'über', '数据', 'a,b', 'x' * 40, 'ray', 'map', 'reduce']\n"
    "print([f(k, n) for k in keys for n in (1, 2, 3, 7)])\n"
)


def _partition_in_fresh_process(partition, seed: int) -> str:
    from ray import cloudpickle

    env = dict(os.environ, PYTHONHASHSEED=str(seed))
    run = subprocess.run(
        [sys.executable, "-c", _HASH_CHILD],
        input=cloudpickle.dumps(partition),
        capture_output=True,
        env=env,
        timeout=60,
    )
    if run.returncode != 0:
        raise RuntimeError(run.stderr.decode(errors="replace").strip().splitlines()[-1])
    return run.stdout.decode().strip()


def self_check(namespace: dict) -> bool:
    """Check map_fn, reduce_fn, partition and run_mapreduce from ``namespace`` (pass
    ``globals()``). Prints one line per check; returns True when all pass."""
    if grading():
        print("self-check skipped while grading: the hidden tests decide.")
        return True
    names = ("map_fn", "reduce_fn", "partition", "run_mapreduce")
    missing = [n for n in names if n not in namespace]
    if missing:
        print(f"✘ not defined yet: {', '.join(missing)} — run the answer cell first.")
        return False
    map_fn, reduce_fn, partition, run_mapreduce = (namespace[n] for n in names)
    ok = True

    def report(passed: bool, text: str, fix: str = "") -> None:
        nonlocal ok
        ok &= passed
        print(("✔ " if passed else "✘ ") + text + ("" if passed or not fix else f"\n    → {fix}"))

    def attempt(label, func):
        try:
            return True, func()
        except NotImplementedError:
            report(False, f"{label}: not implemented yet (the stub still raises NotImplementedError)")
        except Exception as e:  # noqa: BLE001 — show the student what their code raised
            report(False, f"{label}: raised {type(e).__name__}: {e}")
        return False, None

    record = "The cat, the CAT\tand\u3000数据  数据"
    want = [(w, 1) for w in record.split()]
    done, got = attempt("map_fn", lambda: list(map_fn(record)))
    if done:
        report(
            sorted(got) == sorted(want),
            f"map_fn({record!r}) gives one (word, 1) per word of record.split()",
            f"expected {want}, got {got}. Words are exactly record.split(): keep case and punctuation.",
        )
    done, got = attempt("reduce_fn", lambda: reduce_fn("cat", iter([1, 2, 3])))
    if done:
        report(
            tuple(got) == ("cat", 6) if isinstance(got, tuple) else False,
            "reduce_fn('cat', iter([1, 2, 3])) == ('cat', 6)",
            f"got {got!r}; values may be any iterable of ints (an iterator has no len()).",
        )
    keys = ["the", "The", "cat", "über", "数据", "a,b"]
    done, got = attempt("partition", lambda: [partition(k, 3) for k in keys])
    if done:
        report(
            all(isinstance(p, int) and 0 <= p < 3 for p in got),
            "partition(key, 3) is in range(3)",
            f"got {got} for {keys}",
        )
        runs = []
        for seed in (1, 2):
            done2, out = attempt(
                f"partition in a process with PYTHONHASHSEED={seed}",
                lambda seed=seed: _partition_in_fresh_process(partition, seed),
            )
            if done2:
                runs.append(out)
        if len(runs) == 2:
            report(
                runs[0] == runs[1],
                "partition gives the same answer in processes with different hash seeds",
                "Python's hash() of a str changes from process to process: use a stable hash "
                "such as zlib.crc32(key.encode()) or hashlib.",
            )

    ray = start_local_ray()
    corpus = ["the quick brown fox", "", "jumps over the lazy dog", "The DOG, the dog!", "数据 并行 数据"]
    want = dict(collections.Counter(w for r in corpus for w in r.split()))

    def run(label, *args):
        with reaping():  # actors this run left behind must not pile up run after run
            return attempt(label, lambda: run_mapreduce(*args))

    for n_map, n_reduce in ((2, 2), (len(corpus) + 3, 3)):
        done, got = run(
            f"run_mapreduce(n_map={n_map}, n_reduce={n_reduce})",
            corpus,
            reference_map_fn,
            reference_reduce_fn,
            n_map,
            n_reduce,
        )
        if done:
            report(
                got == want,
                f"run_mapreduce counts a 5-record corpus with n_map={n_map}, n_reduce={n_reduce}",
                f"expected {want}\n      got {got}",
            )
    done, got = run("run_mapreduce([])", [], reference_map_fn, reference_reduce_fn, 4, 2)
    if done:
        report(got == {}, "run_mapreduce([]) == {}", f"got {got!r}")

    folder = tempfile.mkdtemp(prefix="ch13wc-")
    try:
        # The victim is the last record of its map task whether tasks take records[i::n] or slices:
        # pairs a task pushed out before dying (instead of returning them) get counted twice.
        probe = DieOnce(corpus[4], 2, folder, os.getpid())
        done, got = run(
            "run_mapreduce with a worker that dies (retry the task: @ray.remote(max_retries=3))",
            corpus,
            probe,
            reference_reduce_fn,
            2,
            2,
        )
        if done:
            died = os.path.exists(os.path.join(folder, "died"))
            calls = _calls(folder)
            in_driver = [c for c in calls if c[0] == os.getpid() or c[1] == "None"]
            report(
                not in_driver,
                "map_fn runs inside Ray tasks, not in the driver",
                f"{len(in_driver)} of {len(calls)} map_fn calls ran in this notebook's process: call map_fn "
                "inside a @ray.remote function.",
            )
            report(
                died and got == want,
                f"a worker killed after emitting 2 pairs of {corpus[4]!r} is retried; every record counted once",
                f"expected {want}\n      got {got}"
                if died
                else "the worker never died: map_fn did not run in a Ray worker",
            )
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    ray_ok = ray.is_initialized()
    print("all checks passed ✔" if ok else "some checks failed ✘ (see above)")
    return ok and ray_ok
