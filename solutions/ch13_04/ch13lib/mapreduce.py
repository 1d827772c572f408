"""Ray helpers for notebook 04 (word-count MapReduce): a fast local cluster, and the self-check.

``start_local_ray()`` starts (once per process) a small Ray cluster that listens on 127.0.0.1 only,
writes no auth token into your home directory, has no dashboard and keeps its files in a fresh
folder under /tmp. ``self_check(namespace)`` tries your ``map_fn``, ``reduce_fn``, ``partition`` and
``run_mapreduce`` on a few small cases and prints one line per check (✔ passed / ✘ what to fix).
It passes ``run_mapreduce`` a map_fn / reduce_fn of its own that log which process and Ray task ran
each call (the probes of ``ch13lib.mapreduce_probe``): are they the functions you were given, run in
n_map map tasks and in the reduce task partition() names, never in the notebook's process? The first
map (reduce) call waits at a barrier until a second map (reduce) task arrives, which shows the tasks
run in parallel (a run that never gets two in flight waits ~10 s there). Then a map worker dies
part-way through its task, map_fn raises once, and a reduce worker dies.

The hidden graders use the same cluster settings with many more corpora, crash schedules and
parallelism checks.
"""

from __future__ import annotations

import atexit
import collections
import contextlib
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import time

from ch13lib import grading
from ch13lib.lang import FRAME

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


START_TRIES = 3  # Ray waits a fixed 30 s (ray._private.node) for its raylet; a loaded machine can miss it


class RayDidNotStart(RuntimeError):
    """Ray failed to start, every try: the machine's fault (overloaded?), not the code that asked."""


def start_local_ray(num_cpus: int = 2, object_store_mb: int = 80):
    """Start a small loopback-only Ray cluster in this process, unless Ray is already running.

    Returns the ``ray`` module. Safe to call many times: only the first call starts Ray. A start
    that fails (on a loaded machine: "The current node timed out during startup") is tried again
    with a fresh cluster, up to START_TRIES times, then raises RayDidNotStart.
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
    for attempt in range(1, START_TRIES + 1):
        # Short, fresh, private: Ray's Unix socket paths must stay under ~100 characters, and HOME
        # may be read-only or temporary. A sandbox's own short TMPDIR is used (and cleaned) where
        # it has one.
        _temp_dir = _short_temp_dir()
        # A kernel that ends without stop_local_ray leaves no session folder behind. Ray's own exit
        # handler (registered when ray was imported, so it runs after ours) wrote the session's
        # folder again after a plain rmtree here: shut Ray down first, then remove it.
        atexit.register(_shut_down_and_remove, _temp_dir)
        try:
            with _lean_head():
                ray.init(
                    num_cpus=num_cpus,
                    include_dashboard=False,
                    object_store_memory=object_store_mb * 1024 * 1024,
                    _temp_dir=_temp_dir,
                    log_to_driver=False,
                    logging_level="ERROR",
                    # A failed task is resubmitted on the core worker's internal heartbeat (1 s by
                    # default): 50 ms makes a retry after a worker death take ~0.05 s instead of ~1 s.
                    # Task events reach the GCS every 100 ms (1 s by default): the word_count probes
                    # read their evidence there (mapreduce_probe.task_attempts).
                    _system_config={
                        "task_retry_delay_ms": 0,
                        "core_worker_internal_heartbeat_ms": 50,
                        "task_events_report_interval_ms": 100,
                    },
                )
            return ray
        except Exception as e:  # noqa: BLE001 - any failed start: the next try is a fresh cluster
            error = e
            _end_failed_start(_temp_dir)
    first = (str(error).strip().splitlines() or [type(error).__name__])[0]
    raise RayDidNotStart(
        f"Ray did not start ({START_TRIES} tries; the last said: {first}). This is the machine's fault "
        "(overloaded?), not your code's: run the cell again (a TA grades a graded cell again)."
    )


@contextlib.contextmanager
def _lean_head():
    """ray.init's head node without three processes that a one-machine cluster with
    ``log_to_driver=False`` never uses: the autoscaler's monitor, the log monitor and the
    dashboard's API server (``live_actors`` reads the GCS itself). Measured here: a start
    4.6 -> 2.9 CPU-seconds and ~1 s sooner. ray.init has no switch for them, so this sets
    RayParams' own (``no_monitor``, ``include_log_monitor``) and skips the API server during the
    call only (ray is pinned: these are ray._private's names in 2.60)."""
    from ray._private import node, parameter

    params_init, api_server = parameter.RayParams.__init__, node.Node.start_api_server

    def lean_params(self, *args, **kwargs):
        params_init(self, *args, **kwargs)
        self.no_monitor, self.include_log_monitor = True, False

    parameter.RayParams.__init__ = lean_params
    node.Node.start_api_server = lambda self, **kwargs: None
    try:
        yield
    finally:
        parameter.RayParams.__init__, node.Node.start_api_server = params_init, api_server


def _short_temp_dir() -> str:
    """A fresh folder for Ray's session, in the first short place this process may write: TMPDIR,
    then /tmp, then /dev/shm (a grading sandbox without a private /tmp allows only its own folders
    and /dev: kit/landlock.py)."""
    candidates = [tempfile.gettempdir(), "/tmp", "/dev/shm"]
    for base in [b for b in candidates if len(b) <= 40]:
        try:
            folder = tempfile.mkdtemp(prefix="ch13ray-", dir=base)
        except OSError:
            continue
        sweep_stale(base)
        return folder
    return tempfile.mkdtemp(prefix="ch13ray-")  # (its error says where it tried)


STALE_AFTER_S = 600  # longer than any grading's cluster lives; a student's kernel's folder is kept while it runs
_SESSION = re.compile(r"session_\d{4}-\d\d-\d\d_[\d-]+_\d+_(\d+)$")  # Ray's name: ..._<driver pid>


def sweep_stale(base: str) -> list[str]:
    """Remove the folders that earlier drivers left in ``base`` when they were killed before any
    exit handler ran (a kernel restarted or stopped past its time limit): this user's
    ``ch13ray-*`` folders older than STALE_AFTER_S whose drivers are all gone. Returns them."""
    removed = []
    try:
        names = [n for n in os.listdir(base) if n.startswith("ch13ray-")]
    except OSError:
        return removed
    now = time.time()
    for name in names:
        folder = os.path.join(base, name)
        try:
            st = os.lstat(folder)
            if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or now - st.st_mtime < STALE_AFTER_S:
                continue
            drivers = [int(m.group(1)) for m in map(_SESSION.match, os.listdir(folder)) if m]
        except OSError:
            continue
        if not any(_alive(pid) for pid in drivers):
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process: alive
        return True
    return True


def _shut_down_and_remove(folder: str) -> None:
    import ray

    with contextlib.suppress(Exception):
        ray.shutdown()
    shutil.rmtree(folder, ignore_errors=True)


def _end_failed_start(folder: str) -> None:
    """Kill what a failed ray.init left running (its GCS, raylet, monitors: each names the
    session folder on its command line) and remove the folder."""
    import ray

    with contextlib.suppress(Exception):
        ray.shutdown()
    mine = folder.encode()
    for pid in [p for p in os.listdir("/proc") if p.isdigit()]:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if mine not in f.read():
                    continue
            os.kill(int(pid), 9)
        except OSError:
            continue
        with contextlib.suppress(ChildProcessError):
            os.waitpid(int(pid), 0)  # our child: reaped, not left a zombie
    shutil.rmtree(folder, ignore_errors=True)


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


# The scenarios of the self-check (the hidden tests use other corpora, more parallelism and more
# crash schedules).
CORPUS = ["the quick brown fox", "", "jumps over the lazy dog", "The DOG, the dog!", "数据 并行 数据"]
# Six records for three map tasks (two each, however the records are split) and two reduce tasks;
# many keys of many lengths, so a reducer that gets keys partition() did not give it shows.
SHAPE_CORPUS = [
    "map tasks run side by side",
    "every key has one reducer",
    "a shuffle moves pairs",
    "数据 并行 计算 数据",
    "ray runs tasks on workers",
    "counts come back to the driver",
]
SHAPE_MAPS, SHAPE_REDUCES = 3, 2
# How long the first map_fn (reduce_fn) call waits at the barrier for a second map (reduce) task;
# tasks submitted together get there in well under a second.
BARRIER_WAIT_S = 10.0
SPREAD_KEYS = [f"k{i}" for i in range(24)] + ["the", "The", "cat", "über", "数据", "a,b", "x" * 40]


def _names(items) -> str:
    items = [f"`{x}`" for x in items]
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _error_text(e: BaseException) -> str:
    """``Type: message`` on one line. An error raised inside a Ray task shows the last line of the
    task's traceback: the exception the task itself raised."""
    lines = [line.strip() for line in str(e).strip().splitlines() if line.strip()]
    name = type(e).__name__
    if not lines:
        return name
    if name.startswith("RayTaskError"):
        return f"{lines[-1]} (in a Ray task)"
    return f"{name}: {lines[0]}"


def _undefined_name(e: BaseException) -> str:
    import re

    found = re.search(r"name '([^']+)' is not defined", str(e))
    return found.group(1) if found else "?"


def self_check(namespace: dict) -> bool:
    """Check map_fn, reduce_fn, partition and run_mapreduce from ``namespace`` (pass
    ``globals()``). Prints one line per check; returns True when all pass."""
    if grading():
        print(FRAME("skipped"))
        return True
    names = ("map_fn", "reduce_fn", "partition", "run_mapreduce")
    missing = [n for n in names if not callable(namespace.get(n))]
    if missing:
        print(f"✘ not defined yet: {', '.join(missing)} — run the answer cell first (it must define {_names(names)}).")
        return False
    map_fn, reduce_fn, partition, run_mapreduce = (namespace[n] for n in names)
    ok = True
    lines: list[str] = []  # printed at the end: no ✔ for a cell that turns out to be unfinished
    stubs: list[str] = []  # functions that still raise NotImplementedError
    undefined: list[str] = []  # names the cell's functions use but nothing defines (NameError)
    halt: list[str] = []  # run_mapreduce cannot run yet (a stub it calls)

    def report(passed: bool, text: str, fix: str = "") -> None:
        nonlocal ok
        ok &= passed
        lines.append(("✔ " if passed else "✘ ") + text + ("" if passed or not fix else f"\n    → {fix}"))

    def attempt(label, func, who):
        try:
            return True, func()
        except NotImplementedError as e:
            if type(e).__name__.startswith("RayTaskError") and stubs:
                # raised in a task by a stub it calls (partition, say), already reported above
                report(
                    False,
                    f"{label}: not implemented yet ({_names(stubs)}, which it calls, still "
                    f"raise{'s' if len(stubs) == 1 else ''} NotImplementedError)",
                )
                halt.append(who)
            else:
                report(False, f"{label}: not implemented yet (the stub still raises NotImplementedError)")
                if who not in stubs:
                    stubs.append(who)
        except NameError as e:
            name = _undefined_name(e)
            if name not in undefined:
                undefined.append(name)
            report(
                False,
                f"{label}: raised {_error_text(e)}",
                f"{who} uses `{name}`, which is not defined: define or import it in the answer cell, "
                "run the cell, then run this check again.",
            )
        except Exception as e:  # noqa: BLE001 — show the student what their code raised
            crashed = "WorkerCrashedError" in type(e).__name__ or "ray.exceptions.WorkerCrashedError" in str(e)
            report(
                False,
                f"{label}: raised {_error_text(e)}",
                "a worker died and its task was not run again: give the remote functions max_retries "
                "(e.g. @ray.remote(max_retries=3)), or resubmit a failed task yourself."
                if crashed
                else "",
            )
        return False, None

    record = "The cat, the CAT\tand\u3000数据  数据"
    want = [(w, 1) for w in record.split()]
    done, got = attempt("map_fn", lambda: list(map_fn(record)), "map_fn")
    if done:
        report(
            sorted(got) == sorted(want),
            f"map_fn({record!r}) gives one (word, 1) per word of record.split()",
            f"expected {want}, got {got}. Words are exactly record.split(): keep case and punctuation.",
        )
    done, got = attempt("reduce_fn", lambda: reduce_fn("cat", iter([1, 2, 3])), "reduce_fn")
    if done:
        report(
            tuple(got) == ("cat", 6) if isinstance(got, tuple) else False,
            "reduce_fn('cat', iter([1, 2, 3])) == ('cat', 6)",
            f"got {got!r}; values may be any iterable of ints (an iterator has no len()).",
        )
    keys = ["the", "The", "cat", "über", "数据", "a,b"]
    spread_ok = True
    done, got = attempt("partition", lambda: [partition(k, 3) for k in keys], "partition")
    if done:
        report(
            all(isinstance(p, int) and 0 <= p < 3 for p in got),
            "partition(key, 3) is in range(3)",
            f"got {got} for {keys}",
        )
        done, table = attempt(
            "partition", lambda: {n: [partition(k, n) for k in SPREAD_KEYS] for n in (2, 4)}, "partition"
        )
        if done:
            narrow = {n: sorted(set(row), key=repr) for n, row in table.items() if len(set(row)) < n}
            spread_ok = not narrow
            n, used = next(iter(narrow.items()), (0, []))
            report(
                spread_ok,
                f"partition spreads {len(SPREAD_KEYS)} different keys over all of range(2) and range(4)",
                f"partition(key, {n}) sends them to reducer(s) {used} only: the reduce work is not spread. "
                "Hash the key (e.g. zlib.crc32(key.encode()) % n_reduce).",
            )
        runs = []
        for seed in (1, 2):
            done2, out = attempt(
                f"partition in a process with PYTHONHASHSEED={seed}",
                lambda seed=seed: _partition_in_fresh_process(partition, seed),
                "partition",
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
    from ch13lib import mapreduce_probe as probe

    def halted() -> bool:
        """run_mapreduce is a stub, or uses an undefined name: every further run would say the same."""
        return "run_mapreduce" in stubs or bool(halt) or bool(undefined)

    def run(label, *args):
        if halted():
            return False, None
        with reaping():  # actors this run left behind must not pile up run after run
            return attempt(label, lambda: run_mapreduce(*args), "run_mapreduce")

    def observed(label, records, n_map, n_reduce, **options):
        """run_mapreduce with map_fn / reduce_fn probes that log which process and Ray task ran each
        call (and fail or wait at a barrier where ``options`` say so): see ch13lib.mapreduce_probe."""
        if halted():
            return False, None
        return attempt(
            label, lambda: probe.observe(run_mapreduce, records, n_map, n_reduce, **options), "run_mapreduce"
        )

    corpus = CORPUS
    want = dict(collections.Counter(w for r in corpus for w in r.split()))
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

    # Where the work runs: every call logged with its process and Ray task; the first map_fn
    # (reduce_fn) call waits at a barrier until a second map (reduce) task arrives.
    shape, n_map, n_reduce = SHAPE_CORPUS, SHAPE_MAPS, SHAPE_REDUCES
    shape_want = dict(collections.Counter(w for r in shape for w in r.split()))
    done, obs = observed(
        f"run_mapreduce on {len(shape)} records with n_map={n_map}, n_reduce={n_reduce}",
        shape,
        n_map,
        n_reduce,
        barrier_guard_s=BARRIER_WAIT_S,
    )
    if done:
        _check_shape(obs, shape, shape_want, n_map, n_reduce, partition, spread_ok, report)

    folder = tempfile.mkdtemp(prefix="ch13wc-", dir=_temp_dir)  # swept with Ray's folder if killed
    try:
        # The victim is the last record of its map task whether tasks take records[i::n] or slices:
        # pairs a task pushed out before dying (instead of returning them) get counted twice.
        die = DieOnce(corpus[4], 2, folder, os.getpid())
        done, got = run("run_mapreduce with a map worker that dies", corpus, die, reference_reduce_fn, 2, 2)
        if done:
            died = os.path.exists(os.path.join(folder, "died"))
            in_driver = [c for c in _calls(folder) if c[0] == os.getpid() or c[1] == "None"]
            report(
                died and got == want,
                f"a worker killed after emitting 2 pairs of {corpus[4]!r} is retried; every record counted once",
                f"expected {want}\n      got {got}"
                if died
                else f"the worker never died: map_fn was never called on {corpus[4]!r} inside a Ray worker"
                + (f" ({len(in_driver)} map_fn calls ran in this notebook's process)" if in_driver else "")
                + ". Every record must go through the map_fn you are given, in a map task (@ray.remote).",
            )
    finally:
        shutil.rmtree(folder, ignore_errors=True)

    # map_fn raises on its first attempt at one record, after 2 of its pairs: retried (right
    # counts) or passed on to the caller are both fine; a result with the record lost or half
    # counted is not.
    victim = corpus[2]

    def raising():
        try:
            return probe.observe(run_mapreduce, corpus, 2, 2, map_faults={victim: ("raise", 2)})
        except NotImplementedError:
            raise
        except Exception as e:  # noqa: BLE001 — the injected error reaching the caller is allowed
            if probe.MARK in str(e):
                return {"raised": e}
            raise

    if not halted():
        done, obs = attempt("run_mapreduce when map_fn raises", raising, "run_mapreduce")
        if done:
            text = (
                f"when map_fn raises on its first attempt at {victim!r} (after 2 pairs), run_mapreduce "
                "retries the task or passes the error on"
            )
            if "raised" in obs:
                report(True, text + " (it passed it on)")
            elif ["map", victim] not in obs["fired"]:
                report(
                    False,
                    text,
                    f"map_fn never ran on {victim!r} inside a Ray worker: call the map_fn you are "
                    "given, on every record, inside a map task.",
                )
            else:
                got = obs["result"]
                report(
                    got == want,
                    text + (" (it retried)" if got == want else ""),
                    f"it returned wrong counts: expected {want}\n      got {got}\n      Do not catch and skip "
                    "errors inside a task (the failed record's pairs are lost or half counted): let Ray retry "
                    "the whole task (@ray.remote(retry_exceptions=True)), or let the error reach the caller.",
                )

    # A reduce worker dies on the first reduce_fn call for one key.
    done, obs = observed(
        "run_mapreduce with a reduce worker that dies", corpus, 2, 2, reduce_faults={"the": ("exit", 0)}
    )
    if done:
        fired = ["reduce", "the"] in obs["fired"]
        report(
            fired and obs["result"] == want,
            "a worker killed in reduce_fn('the', ...) is retried; every key counted once",
            f"expected {want}\n      got {obs['result']}"
            if fired
            else "reduce_fn never ran on 'the' inside a Ray worker: call the reduce_fn you are given, on every "
            "key, inside a reduce task.",
        )

    ray_ok = ray.is_initialized()
    if stubs or undefined:
        # Unfinished: the ✘ lines, and what is left to do (no ✔: the cell still raises).
        print("\n".join(line for line in lines if not line.startswith("✔")))
        parts = []
        if stubs:
            parts.append(f"{_names(stubs)} still raise{'s' if len(stubs) == 1 else ''} NotImplementedError (the stub)")
        if undefined:
            parts.append(f"{_names(undefined)} {'is' if len(undefined) == 1 else 'are'} not defined (NameError)")
        print(
            f"✘ not finished yet: {'; '.join(parts)}. Write the missing code in the answer cell, run it, "
            "then run this check again."
        )
        return False
    print("\n".join(lines))
    print(FRAME("passed") if ok else FRAME("fix"))
    return ok and ray_ok


def _check_shape(obs, records, want, n_map, n_reduce, partition, spread_ok, report) -> None:
    """Judge a probed run (ch13lib.mapreduce_probe.observe): right counts, the functions it was
    given called in Ray tasks, n_map map tasks, each key reduced by reduce task partition(key),
    two map and two reduce tasks in flight at once."""
    got, calls, barrier = obs["result"], obs["calls"], obs["barrier"] or {}
    report(
        got == want,
        f"run_mapreduce counts {len(records)} records with the map_fn and reduce_fn it is given",
        f"expected {want}\n      got {got}",
    )
    in_driver = [c for c in calls if c["task"] is None or c["pid"] == obs["driver_pid"]]
    where = {k: sum(c["kind"] == k for c in in_driver) for k in ("map", "reduce")}
    total = {k: sum(c["kind"] == k for c in calls) for k in ("map", "reduce")}
    report(
        not in_driver,
        "map_fn and reduce_fn run inside Ray tasks, not in the driver",
        f"{where['map']} of {total['map']} map_fn calls and {where['reduce']} of {total['reduce']} reduce_fn "
        "calls ran in this notebook's process: call them inside @ray.remote functions (started with .remote()).",
    )
    mapped = {c["target"] for c in calls if c["kind"] == "map"}
    reduced = {c["target"] for c in calls if c["kind"] == "reduce"}
    lost = [r for r in records if r not in mapped] + [k for k in want if k not in reduced]
    report(
        not lost,
        "run_mapreduce calls the map_fn and reduce_fn it is given, on every record and every key",
        f"the map_fn / reduce_fn passed in never saw {lost[0] if lost else None!r}: call the functions "
        "given as arguments (a hidden test passes in others), not the ones of the same name in the cell.",
    )
    if where["map"] == 0 and total["map"]:
        map_tasks = {c["task"] for c in calls if c["kind"] == "map"}
        report(
            len(map_tasks) == n_map,
            f"the {len(records)} records are mapped by n_map={n_map} Ray tasks",
            f"map_fn was called in {len(map_tasks)} different Ray task(s) for {len(records)} records with "
            f"n_map={n_map}: split the records into n_map map tasks (e.g. records[i::n_map]).",
        )
        proven, seen, _ = barrier.get("map", (False, 0, []))
        report(
            proven and obs.get("ran_together", {}).get("map", False),  # by Ray's own record, as the grader
            "the map tasks run in parallel",
            f"the first map_fn call waited {BARRIER_WAIT_S:.0f} s at a barrier for a second map task to "
            f"start, and none did ({seen} map task(s) reached it in all): submit all map tasks with "
            ".remote() before calling ray.get on any of them.",
        )
    if where["reduce"] == 0 and total["reduce"]:
        map_tasks = {c["task"] for c in calls if c["kind"] == "map"}
        by_key, by_task = collections.defaultdict(set), collections.defaultdict(set)
        for c in calls:
            if c["kind"] == "reduce" and c["task"] not in map_tasks:  # not a combiner in a map task
                by_key[c["target"]].add(c["task"])
                by_task[c["task"]].add(c["target"])
        fix = ""
        split = sorted((k for k, tasks in by_key.items() if len(tasks) > 1), key=repr)
        if not 1 <= len(by_task) <= n_reduce:
            fix = (
                f"reduce_fn was called in {len(by_task)} different Ray task(s) with n_reduce={n_reduce}: run "
                "n_reduce reduce tasks, each reducing the keys partition() gives it."
            )
        elif split:
            fix = (
                f"key {split[0]!r} was reduced in {len(by_key[split[0]])} different reduce tasks: a key must go "
                "to exactly one reducer, partition(key, n_reduce)."
            )
        else:
            try:
                part = {k: partition(k, n_reduce) for k in by_key}
            except Exception:  # noqa: BLE001 — partition's own checks above report it
                part = None
            for keys in sorted(by_task.values(), key=lambda ks: sorted(map(repr, ks))):
                if part is not None and len({repr(part[k]) for k in keys}) > 1:
                    ordered = sorted(keys, key=lambda k: (repr(part[k]), k))
                    a, b = ordered[0], ordered[-1]
                    fix = (
                        f"one reduce task reduced keys {a!r} and {b!r}, but partition() gives them "
                        f"{part[a]!r} and {part[b]!r} (n_reduce={n_reduce}): send every pair to reduce task "
                        "partition(key, n_reduce), with the partition() of this cell."
                    )
                    break
        report(
            not fix,
            f"each key is reduced by one of n_reduce={n_reduce} reduce tasks, the one partition(key) names",
            fix,
        )
        proven, seen, _ = barrier.get("reduce", (False, 0, []))
        report(
            proven and obs.get("ran_together", {}).get("reduce", False),  # by Ray's own record, as the grader
            "the reduce tasks run in parallel",
            f"the first reduce_fn call waited {BARRIER_WAIT_S:.0f} s at a barrier for a second reduce task "
            f"to start, and none did ({seen} reduce task(s) reached it in all): submit all reduce tasks "
            "with .remote() before calling ray.get on any of them"
            + ("; and partition() sends every key to the same reducer (see above)." if not spread_ok else "."),
        )
