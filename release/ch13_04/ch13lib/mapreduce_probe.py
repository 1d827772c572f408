"""The probes of notebook 04 (word-count MapReduce on Ray): the self-check's (``observe_run``) and
the hidden grader's, which runs them beside the answer cell in the grading subject.

Nothing is decided here: a probed run returns RAW OBSERVATIONS as
plain data (what the cell's functions returned, which probe calls ran in which process and Ray
task, which scheduled faults fired, what a barrier saw). The grader computes the expected counts
from the corpora it chose and judges.

One Ray cluster (``ch13lib.mapreduce.start_local_ray``: loopback only, 2 logical CPUs) serves every
request of a subject process. It starts in the background at the first request (Ray takes seconds
to start; the map_fn / reduce_fn / partition checks run meanwhile), and the first request that
runs ``run_mapreduce`` waits for it. ``run_mapreduce`` is
given *probes* instead of the cell's own map_fn / reduce_fn (but in a run of the cell's own): picklable
callables that compute the reference map / reduce, log every call (process id, Ray task id) to
files in a fresh folder, and inject faults on a fixed schedule:

- a worker death (``os._exit(1)``) or an exception on the FIRST attempt at one chosen record
  (map) or key (reduce), after part of that task's output was already produced; attempts are
  counted with ``O_EXCL`` marker files, so exactly the scheduled attempts fail whichever worker
  or order Ray picks;
- a barrier actor at which the first map (reduce) call waits until a second, different Ray task
  arrives: passing it proves two map (reduce) tasks were in flight at once. The wait's only
  clock is a hang guard for solutions that never get a second task in flight.

Actors a run leaves alive are reaped after it (``ch13lib.mapreduce.reap_actors``).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import os
import shutil
import sys
import tempfile
import threading
import time
import zlib

from ch13lib import mapreduce as lib
from ch13lib.lang import Messages

for _key, _value in lib.RAY_ENV.items():  # before ray is imported: some are read at import
    os.environ.setdefault(_key, _value)

import ray  # noqa: E402 - imported before the cell runs, so the subject watches its attributes

MARK = "InjectedFault"  # in the message of every exception the probes raise

# What the probes' injected exceptions say, in the course's language (ch13lib/lang.py); each starts with MARK.
M = Messages(
    scheduled=(
        "{mark}: 评分程序计划的故障, 针对 {target} (第一次尝试)",
        "{mark}: the grader's scheduled failure on {target} (first attempt)",
    ),
    deliberate=(
        "{mark}: 自检故意制造的故障, 针对 {target} (仅第一次尝试)",
        "{mark}: the self-check's deliberate failure on {target} (first attempt only)",
    ),
)
_TEXTS = dict(M.texts)  # plain data: the probes travel to Ray workers by value, and workers cannot import ch13lib


def _say_in_worker(key: str, **fields) -> str:
    """``M(key, **fields)`` where ch13lib cannot be imported (a Ray worker): the language is
    ``CH13_LANG`` of the environment the worker inherited (ch13lib.lang.say's rule, repeated)."""
    zh, en = (t.format(**fields) for t in _TEXTS[key])
    lang = os.environ.get("CH13_LANG", "").strip().lower()
    if lang in ("zh", "en"):
        return zh if lang == "zh" else en
    return f"{zh} / {en}" if "\n" not in zh + en and len(zh) + len(en) <= 100 else f"{zh}\n{en}"


REPR_CAP = 200

_registered: set = set()  # answer modules already registered for pickling by value
_barrier = None  # the Barrier actor class, made once Ray is imported
_starting: list = []  # [done event, outcome] of Ray's background start


# ---------------------------------------------------------------------------------------------
# Plain observations of the cell's values


def _typename(x) -> str:
    """The name of x's type, read past any metaclass (a plain str)."""
    try:
        return str.__str__(type.__dict__["__name__"].__get__(type(x)))[:REPR_CAP]
    except Exception:  # noqa: BLE001
        return "?"


def _text(x) -> str:
    try:
        s = str(x)
        return s if type(s) is str else f"<a {_typename(x)}>"
    except Exception:  # noqa: BLE001 - a __str__ that raises
        return f"<a {_typename(x)} whose str() failed>"


def shown(x):
    """``x`` itself when it is an exact None/bool/int/float/str, else a description of it:
    ``{"type": ..., "repr": ...}`` (the grader reports it, and it equals no word or count)."""
    if x is None or type(x) in (bool, int, float, str):
        return x
    try:
        r = repr(x)
        r = r if type(r) is str else "?"
    except Exception:  # noqa: BLE001 - a __repr__ that raises
        r = "?"
    return {"type": _typename(x), "repr": r[:REPR_CAP]}


def _counts(raw) -> dict:
    """What run_mapreduce returned: a mapping's entries, or only the type of anything else."""
    if isinstance(raw, dict):
        return {"type": "dict", "items": [[shown(k), shown(v)] for k, v in raw.items()]}
    return {"type": _typename(raw)}


def _module(cell):
    """The cell's shared module, picklable by value (Ray workers cannot import it by name)."""
    _ray()
    from ray import cloudpickle

    module = cell.module
    if module.__name__ not in _registered:
        cloudpickle.register_pickle_by_value(module)
        _registered.add(module.__name__)
    return module


def _warm() -> None:
    """Start Ray in a background thread, once: it starts while the grader checks the plain
    functions, and ``_ray`` waits for it. The thread then lives as long as the process: Ray's
    processes die with the THREAD that started them (PR_SET_PDEATHSIG)."""
    if _starting or ray.is_initialized():
        return
    done, outcome = threading.Event(), {}

    def start():
        try:
            lib.start_local_ray(num_cpus=2)
        except BaseException as e:  # noqa: BLE001 - raised again by _ray, in the request's thread
            outcome["error"] = e
        done.set()
        if "error" not in outcome:
            threading.Event().wait()  # never returns: keeps Ray's processes alive

    _starting[:] = [done, outcome]
    threading.Thread(target=start, name="ch13-ray-start", daemon=True).start()


def _started():
    """Wait for a background start; its exception, if it failed (None otherwise)."""
    if not _starting:
        return None
    done, outcome = _starting
    done.wait()
    # A failed start already had its tries (ch13lib.mapreduce.START_TRIES): every later request
    # gets the same error at once instead of three more tries each.
    return outcome.get("error")


def _ray():
    error = _started()
    if error is not None:
        raise error  # ch13lib.mapreduce.RayDidNotStart, after its tries: the grader says whose fault
    lib.start_local_ray(num_cpus=2)
    from ray import cloudpickle

    # The probes and the barrier travel to the workers by value: workers need not import ch13lib.
    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    return ray


# ---------------------------------------------------------------------------------------------
# Probes (pickled by value into the workers)


def _task_id():
    return ray.get_runtime_context().get_task_id()


# What the GCS holds of a task attempt: the times its core worker reported each state (RUNNING,
# FINISHED, FAILED: common.proto's TaskStatus). The cell's code runs in the same processes as the
# probes, so whatever the probes write (call logs, fault markers, a barrier's arrivals) it can write
# too, so none of it is evidence on its own; the GCS is a
# process of its own, and the states of a task attempt are reported by Ray's C++ core workers.
_STATES = {"running": 8, "finished": 11, "failed": 12}
EVIDENCE_GUARD_S = 10.0  # how long to wait for the GCS to catch up (task events arrive every 100 ms)


def task_attempts() -> dict:
    """{(task id, attempt): {"running": ns, "finished": ns, "failed": ns}} of this job, as the GCS
    recorded them (the states an attempt reached, with their times)."""
    from ray._private.state import state

    job = ray.get_runtime_context().get_job_id()
    out: dict = {}
    for event in state._get_all_task_events():
        if event.job_id.hex() != job:
            continue
        times = dict(event.state_updates.state_ts_ns)
        seen = out.setdefault((event.task_id.hex(), int(event.attempt_number)), {})
        for name, code in _STATES.items():
            if code in times:
                seen[name] = min(times[code], seen.get(name, times[code]))
    return out


def _failed_since(before: set) -> int:
    return sum(1 for key, st in task_attempts().items() if "failed" in st and key not in before)


def _ran_together(tasks) -> bool:
    """Two of ``tasks`` (task ids) ran at the same time by the GCS's record: real Ray tasks, each
    with an attempt that ran and ended, their running intervals overlapping."""
    spans = []
    for (task, _), st in task_attempts().items():
        end = st.get("finished", st.get("failed"))
        if task in tasks and "running" in st and end is not None:
            spans.append((task, st["running"], end))
    return any(a[0] != b[0] and a[1] < b[2] and b[1] < a[2] for a in spans for b in spans)


def _evidence(failed_before: set, want_failed: int, proving: dict) -> dict:
    """What the GCS says of the run: how many task attempts failed in it (at least ``want_failed``
    are waited for) and, per kind, whether the barrier's proving tasks ran together. Waits (a
    guard, never a verdict on an honest run) until the records show it or the guard passes."""
    deadline = time.monotonic() + EVIDENCE_GUARD_S
    while True:
        failed = _failed_since(failed_before) if want_failed else 0
        together = {kind: _ran_together(set(tasks)) for kind, tasks in proving.items()}
        if (failed >= want_failed and all(together.values())) or time.monotonic() > deadline:
            return {"failed_attempts": failed, "ran_together": together}
        time.sleep(0.05)


def _marker(kind, target) -> str:
    return f"attempt-{kind}-{zlib.crc32(target.encode('utf-8')):08x}"


class Probe:
    """Stands in for map_fn (kind "map") or reduce_fn (kind "reduce").

    ``faults`` maps a record (map) or key (reduce) to (action, after): on the first attempt at
    that target inside a Ray worker, the probe emits ``after`` pairs (map) and then dies
    (``os._exit``) or raises. ``value`` selects what the map emits per word: 1, len(word) (to see
    that run_mapreduce uses the map_fn it is given), or a dict's weight for the word (the crash
    runs: a pair the driver made up instead of re-running map_fn weighs 1 and shows in the counts).
    Every call is logged to ``folder``.
    """

    def __init__(self, kind, folder, driver_pid, faults=None, barrier=None, value="one"):
        self.kind, self.folder, self.driver_pid = kind, folder, driver_pid
        self.faults, self.barrier, self.value = dict(faults or {}), barrier, value

    def _log(self, target, task):
        line = json.dumps({"kind": self.kind, "target": target, "pid": os.getpid(), "task": task})
        with open(os.path.join(self.folder, f"calls-{os.getpid()}.jsonl"), "a", encoding="utf-8") as f:
            f.write(line + "\n")

    def _first_attempt(self, target) -> bool:
        try:
            os.close(os.open(os.path.join(self.folder, _marker(self.kind, target)), os.O_CREAT | os.O_EXCL))
            return True
        except FileExistsError:
            return False

    def _enter(self, target):
        """Log the call; wait at the barrier; return the fault to inject now, if any."""
        task = _task_id()
        self._log(target, task)
        in_worker = task is not None and os.getpid() != self.driver_pid
        if not in_worker:
            return None  # never crash or block the process that runs the grading
        if self.barrier is not None:
            ray.get(self.barrier.arrive.remote(self.kind, task))
        if target in self.faults and self._first_attempt(target):
            return self.faults[target]
        return None

    @staticmethod
    def _fire(action, target):
        if action == "exit":
            os._exit(1)
        raise RuntimeError(_say_in_worker("scheduled", mark=MARK, target=repr(target)))

    def __call__(self, *args):
        if self.kind == "map":
            return self._map(*args)
        key, values = args
        fault = self._enter(key)
        total = sum(values)
        if fault:
            self._fire(fault[0], key)
        return (key, total)

    def _value(self, word):
        if type(self.value) is dict:
            return self.value.get(word, 1)
        return 1 if self.value == "one" else len(word)

    def _map(self, record):
        fault = self._enter(record)
        for i, word in enumerate(record.split()):
            if fault and i == fault[1]:
                self._fire(fault[0], record)
            yield (word, self._value(word))
        if fault:
            self._fire(fault[0], record)


def _barrier_class():
    global _barrier
    if _barrier is not None:
        return _barrier

    @ray.remote(num_cpus=0)
    class Barrier:
        """Per kind ("map"/"reduce"): the first arrivals wait until `parties` different Ray
        tasks have arrived. `proven` is True when that happened while the first one waited."""

        def __init__(self, parties, guard_s):
            self.parties, self.guard_s = parties, guard_s
            self.seen = collections.defaultdict(set)
            self.events = collections.defaultdict(asyncio.Event)
            self.proven = {}
            self.proving = {}  # kind -> the task ids that had arrived when it was proven

        async def arrive(self, kind, task):
            self.seen[kind].add(task)
            event = self.events[kind]
            if len(self.seen[kind]) >= self.parties and not event.is_set():
                self.proven.setdefault(kind, True)
                self.proving.setdefault(kind, sorted(map(str, self.seen[kind])))
                event.set()
            if event.is_set():
                return True
            try:
                await asyncio.wait_for(event.wait(), self.guard_s)
                return True
            except TimeoutError:
                self.proven.setdefault(kind, False)
                event.set()  # release everyone: the guard is paid once per kind
                return False

        def report(self):
            return {
                kind: (self.proven.get(kind, False), len(tasks), self.proving.get(kind, []))
                for kind, tasks in self.seen.items()
            }

    _barrier = Barrier
    return _barrier


def _calls(folder):
    calls = []
    for name in sorted(os.listdir(folder)):
        if name.startswith("calls-"):
            with open(os.path.join(folder, name), encoding="utf-8") as f:
                calls += [json.loads(line) for line in f if line.strip()]
    return calls


# ---------------------------------------------------------------------------------------------
# run_mapreduce


@contextlib.contextmanager
def _probes(probe, map_faults, reduce_faults, barrier_guard_s, value="one"):
    """The map and reduce probes (of class ``probe``) of one run: a fresh folder for their logs and
    markers, the scheduled faults, and a 2-party barrier when ``barrier_guard_s`` is given. Yields
    ``(map_probe, reduce_probe, seen)``; ``seen()`` gives the run's observations ``{"calls",
    "driver_pid", "fired", "barrier"}``. The actors the run left alive (handles kept by a remote
    function's closure) and the barrier are reaped after it: over the ~30 runs of a grading they
    would pile up, one worker process each."""
    # inside Ray's session folder (when ch13lib started Ray): a killed driver's is swept with it
    folder = tempfile.mkdtemp(prefix="ch13wc-", dir=lib._temp_dir)
    before = lib.live_actors()
    deaths = {a for a, fault in ((("map", t), f) for t, f in map_faults.items()) if fault[0] == "exit"}
    deaths |= {a for a, fault in ((("reduce", t), f) for t, f in reduce_faults.items()) if fault[0] == "exit"}
    failed_before = {key for key, st in task_attempts().items() if "failed" in st} if deaths else set()
    try:
        barrier = _barrier_class().remote(2, barrier_guard_s) if barrier_guard_s else None
        pid = os.getpid()
        map_probe = probe("map", folder, pid, map_faults, barrier, value)
        reduce_probe = probe("reduce", folder, pid, reduce_faults, barrier)

        def seen():
            fired = [
                [kind, t]
                for kind, faults in (("map", map_faults), ("reduce", reduce_faults))
                for t in faults
                if os.path.exists(os.path.join(folder, _marker(kind, t)))
            ]
            report = ray.get(barrier.report.remote()) if barrier is not None else None
            # the GCS's word on the markers of worker deaths and on the barrier's proof
            proving = {kind: r[2] for kind, r in (report or {}).items() if r[0]}
            evidence = _evidence(failed_before, sum(1 for f in fired if tuple(f) in deaths), proving)
            return {"calls": _calls(folder), "driver_pid": pid, "fired": fired, "barrier": report, **evidence}

        yield map_probe, reduce_probe, seen
    finally:
        lib.reap_actors(before)
        shutil.rmtree(folder, ignore_errors=True)


def _observed(run_mapreduce, probe, records, n_map, n_reduce, map_faults, reduce_faults, barrier_guard_s, value, catch):
    """A probed run and its observation, for a function and a probe class (the grader's and
    ``observe_run``)."""
    map_faults, reduce_faults = dict(map_faults or {}), dict(reduce_faults or {})
    with _probes(probe, map_faults, reduce_faults, barrier_guard_s, value) as (map_probe, reduce_probe, seen):
        result = error = None
        try:
            result = _counts(run_mapreduce(list(records), map_probe, reduce_probe, n_map, n_reduce))
        except NotImplementedError as e:
            if type(e) is NotImplementedError:
                raise
            raise NotImplementedError(_text(e)) from None  # the stub's, wrapped by a Ray task
        except Exception as e:  # noqa: BLE001 - observed, judged by the grader
            if not catch:
                raise
            error = {"type": _typename(e), "message": _text(e)[:4000]}
        return {"result": result, "error": error, **seen()}


# ---------------------------------------------------------------------------------------------
# The notebook's public self-check (ch13lib.mapreduce.self_check) runs the same probes in the
# notebook's own process.


class _SelfCheckProbe(Probe):
    """A Probe whose injected exception says it comes from the notebook's self-check (Ray prints
    a retried task's error in the notebook)."""

    @staticmethod
    def _fire(action, target):
        if action == "exit":
            os._exit(1)
        raise RuntimeError(_say_in_worker("deliberate", mark=MARK, target=repr(target)))


def observe(run_mapreduce, records, n_map, n_reduce, map_faults=None, reduce_faults=None, barrier_guard_s=None):
    """``run_mapreduce(records, map_probe, reduce_probe, n_map, n_reduce)`` for a function (the
    notebook's own ``run_mapreduce``), with the probes, faults and barrier of a graded run.

    Returns ``{"result": what it returned (as is), "calls": every probe call {kind, target, pid,
    task}, "driver_pid": this process, "fired": [kind, target] of the scheduled faults that fired,
    "barrier": the barrier's report {kind: (proven, tasks seen)} or None}``. Its exceptions
    propagate. The actors the run left alive, and the barrier, are reaped after it."""
    _ray()
    map_faults, reduce_faults = dict(map_faults or {}), dict(reduce_faults or {})
    with _probes(_SelfCheckProbe, map_faults, reduce_faults, barrier_guard_s) as (map_probe, reduce_probe, seen):
        result = run_mapreduce(list(records), map_probe, reduce_probe, n_map, n_reduce)
        return {"result": result, **seen()}


def observe_run(
    run_mapreduce, records, n_map, n_reduce, map_faults=None, reduce_faults=None, barrier_guard_s=None, value="one"
):
    """A graded run for a function (the notebook's own ``run_mapreduce``): the same run, probes,
    faults and barrier, and the same observation (its exceptions observed, not raised, but for a
    NotImplementedError: the stub). ch13lib.mapreduce.check_run judges it as the grader does."""
    _ray()
    return _observed(
        run_mapreduce,
        _SelfCheckProbe,
        records,
        n_map,
        n_reduce,
        map_faults,
        reduce_faults,
        barrier_guard_s,
        value,
        True,
    )
