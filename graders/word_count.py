"""Hidden grader of ``word_count``: map_fn, reduce_fn, partition and run_mapreduce on Ray.

Everything runs on ONE real Ray cluster per grading process (loopback only, 2 logical CPUs),
started by the first test that needs it and shut down after the last test. run_mapreduce is
never given the student's own map_fn / reduce_fn except in one end-to-end check: it gets
*probes*, picklable callables that compute the reference map / reduce, log every call (process
id, Ray task id) to files in a fresh folder, and inject faults on a fixed schedule:

- a worker death (``os._exit(1)``) or an exception on the FIRST attempt at one chosen record
  (map) or key (reduce), after part of that task's output was already produced; attempts are
  counted with ``O_EXCL`` marker files, so exactly the scheduled attempts fail whichever worker
  or order Ray picks;
- a barrier actor at which the first map (reduce) call waits until a second, different Ray task
  arrives: passing it proves two map (reduce) tasks were in flight at once. The wait's only
  clock is a hang guard for solutions that never get a second task in flight.

Verdicts depend on which calls happened where, never on how long anything took.
"""
from __future__ import annotations

import asyncio
import collections
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import zlib

from hypothesis import Phase, given, settings, strategies as st

from ch13lib import mapreduce as lib
from graders.api import Answer, Fail, Grader, check_property

GUARD_S = 20.0           # hang guard of a barrier wait (a parallel solution passes it in milliseconds)
CORPUS_EXAMPLES = 15     # hypothesis corpora per property (each run may start actors: keep it bounded)
MARK = "InjectedFault"   # in the message of every exception the probes raise
# No "explain" phase: each Fail carries its own replayable example (the shrunk input).
PHASES = [Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink]


class WordCountGrader(Grader):
    """A Grader that stops its Ray cluster after the last test (Ray's helper processes outlive
    a driver that ends with os._exit, as ``python -m graders`` does)."""

    keep_cluster = False   # the kit's tests set this to reuse one cluster for many submissions

    def run(self, source):
        try:
            yield from super().run(source)
        finally:
            if not self.keep_cluster:
                lib.stop_local_ray()


grader = WordCountGrader("word_count", timeout_s=360)


# ---------------------------------------------------------------------------------------------
# Cluster and student module

def _ray():
    ray = lib.start_local_ray(num_cpus=2)
    from ray import cloudpickle
    # The probes and the barrier actor travel to the workers by value: workers need not import
    # the grader (nor hypothesis).
    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    return ray


def _module(answer: Answer):
    """The student's module, loaded once, with its functions picklable by value: the module is
    registered in sys.modules (for pickling) but no Ray worker could import it by name."""
    _ray()
    from ray import cloudpickle
    module = answer.module
    cloudpickle.register_pickle_by_value(module)
    for name in ("map_fn", "reduce_fn", "partition", "run_mapreduce"):
        if not callable(getattr(module, name, None)):
            raise Fail(f"`{name}` is not defined in the answer cell (the contract needs map_fn, "
                       "reduce_fn, partition and run_mapreduce)")
    return module


def _plain(result, what: str) -> dict:
    """The returned mapping as a plain {str: int} dict (no subclass's clever __eq__ survives)."""
    if not isinstance(result, dict):
        raise Fail(f"{what} returned {type(result).__name__}, not a dict {{word: count}}")
    out = {}
    for key, value in result.items():
        if type(key) is not str or type(value) is not int:
            raise Fail(f"{what} returned an entry {key!r}: {value!r} ({type(key).__name__}: "
                       f"{type(value).__name__}); every entry must be word (str): count (int)")
        out[key] = value
    return out


def _diff(want: dict, got: dict, limit: int = 6) -> str:
    lines = []
    for key in sorted(set(want) | set(got), key=repr):
        if want.get(key) != got.get(key):
            w = want.get(key, "missing")
            g = got.get(key, "missing")
            lines.append(f"{key!r}: expected {w}, got {g}")
    more = f" (and {len(lines) - limit} more)" if len(lines) > limit else ""
    return "; ".join(lines[:limit]) + more


def _count(records) -> dict:
    return dict(collections.Counter(w for r in records for w in r.split()))


# ---------------------------------------------------------------------------------------------
# Probes (pickled by value into the workers)

def _task_id():
    import ray
    return ray.get_runtime_context().get_task_id()


class Probe:
    """Stands in for map_fn (kind "map") or reduce_fn (kind "reduce").

    ``faults`` maps a record (map) or key (reduce) to (action, after): on the first attempt at
    that target inside a Ray worker, the probe emits ``after`` pairs (map) and then dies
    (``os._exit``) or raises. ``value`` selects what the map emits per word: 1, or len(word)
    (to see that run_mapreduce uses the map_fn it is given). Every call is logged to ``folder``.
    """

    def __init__(self, kind, folder, driver_pid, faults=None, barrier=None, value="one"):
        self.kind, self.folder, self.driver_pid = kind, folder, driver_pid
        self.faults, self.barrier, self.value = dict(faults or {}), barrier, value

    def _log(self, target, task):
        line = json.dumps({"kind": self.kind, "target": target, "pid": os.getpid(), "task": task})
        with open(os.path.join(self.folder, f"calls-{os.getpid()}.jsonl"), "a", encoding="utf-8") as f:
            f.write(line + "\n")

    def _first_attempt(self, target) -> bool:
        name = f"attempt-{self.kind}-{zlib.crc32(target.encode('utf-8')):08x}"
        try:
            os.close(os.open(os.path.join(self.folder, name), os.O_CREAT | os.O_EXCL))
            return True
        except FileExistsError:
            return False

    def _enter(self, target):
        """Log the call; wait at the barrier; return the fault to inject now, if any."""
        task = _task_id()
        self._log(target, task)
        in_worker = task is not None and os.getpid() != self.driver_pid
        if not in_worker:
            return None        # never crash or block the grading process itself
        if self.barrier is not None:
            import ray
            ray.get(self.barrier.arrive.remote(self.kind, task))
        if target in self.faults and self._first_attempt(target):
            return self.faults[target]
        return None

    @staticmethod
    def _fire(action, target):
        if action == "exit":
            os._exit(1)
        raise RuntimeError(f"{MARK}: the grader's scheduled failure on {target!r} (first attempt)")

    def __call__(self, *args):
        if self.kind == "map":
            return self._map(*args)
        key, values = args
        fault = self._enter(key)
        total = sum(values)
        if fault:
            self._fire(fault[0], key)
        return (key, total)

    def _map(self, record):
        fault = self._enter(record)
        for i, word in enumerate(record.split()):
            if fault and i == fault[1]:
                self._fire(fault[0], record)
            yield (word, 1 if self.value == "one" else len(word))
        if fault:
            self._fire(fault[0], record)


def _barrier_class():
    import ray

    @ray.remote(num_cpus=0)
    class Barrier:
        """Per kind ("map"/"reduce"): the first arrivals wait until `parties` different Ray
        tasks have arrived. `proven` is True when that happened while the first one waited."""

        def __init__(self, parties, guard_s):
            self.parties, self.guard_s = parties, guard_s
            self.seen = collections.defaultdict(set)
            self.events = collections.defaultdict(asyncio.Event)
            self.proven = {}

        async def arrive(self, kind, task):
            self.seen[kind].add(task)
            event = self.events[kind]
            if len(self.seen[kind]) >= self.parties and not event.is_set():
                self.proven.setdefault(kind, True)
                event.set()
            if event.is_set():
                return True
            try:
                await asyncio.wait_for(event.wait(), self.guard_s)
                return True
            except asyncio.TimeoutError:
                self.proven.setdefault(kind, False)
                event.set()        # release everyone: the guard is paid once per kind
                return False

        def report(self):
            return {kind: (self.proven.get(kind, False), len(tasks)) for kind, tasks in self.seen.items()}

    return Barrier


def _calls(folder):
    calls = []
    for name in sorted(os.listdir(folder)):
        if name.startswith("calls-"):
            with open(os.path.join(folder, name), encoding="utf-8") as f:
                calls += [json.loads(line) for line in f if line.strip()]
    return calls


class Run:
    """One run_mapreduce call with probes; keeps its folder of logs and markers."""

    def __init__(self, module, records, n_map, n_reduce, map_faults=None, reduce_faults=None,
                 barrier=None, value="one"):
        self.module, self.records, self.n_map, self.n_reduce = module, records, n_map, n_reduce
        self.folder = tempfile.mkdtemp(prefix="ch13wc-")
        pid = os.getpid()
        self.map_probe = Probe("map", self.folder, pid, map_faults, barrier, value)
        self.reduce_probe = Probe("reduce", self.folder, pid, reduce_faults, barrier)
        self.error = None
        self.result = None

    def __enter__(self):
        self.actors_before = lib.live_actors()
        return self

    def __exit__(self, *exc):
        # Actors the student's run left alive (handles kept by a remote function's closure) would
        # pile up, one worker process each, over the ~30 runs of a grading: reap them.
        lib.reap_actors(self.actors_before)
        shutil.rmtree(self.folder, ignore_errors=True)

    def call(self, catch=False):
        try:
            raw = self.module.run_mapreduce(list(self.records), self.map_probe, self.reduce_probe,
                                            self.n_map, self.n_reduce)
        except NotImplementedError:
            raise
        except Exception as e:  # noqa: BLE001 — graded below
            if not catch:
                raise
            self.error = e
            return None
        self.result = _plain(raw, "run_mapreduce")
        return self.result

    def calls(self):
        return _calls(self.folder)

    def fired(self, kind, target) -> bool:
        name = f"attempt-{kind}-{zlib.crc32(target.encode('utf-8')):08x}"
        return os.path.exists(os.path.join(self.folder, name))

    def replay(self) -> str:
        return (f"records = {self.records!r}\n"
                f"run_mapreduce(records, map_fn, reduce_fn, n_map={self.n_map}, n_reduce={self.n_reduce})")


# ---------------------------------------------------------------------------------------------
# 1. map_fn and reduce_fn

WHITESPACE = [" ", "  ", "\t", "\n", "\u3000", "\xa0", "\u2003", "\r\n"]
POOL = ["the", "The", "THE", "cat", "cat,", "cat.", "don't", "über", "Über", "数据", "并行",
        "naïve", "e-mail", "42", "x", "ß", "İ", "ǅ", "(ray)", "🙂"]

words = st.one_of(st.sampled_from(POOL),
                  st.text(st.characters(exclude_categories=("Cs", "Zs", "Zl", "Zp", "Cc")),
                          min_size=1, max_size=6))
built_records = st.builds(
    lambda ws, seps, lead, trail: lead + "".join(w + s for w, s in zip(ws, seps + [""] * len(ws))).rstrip() + trail,
    st.lists(words, max_size=8), st.lists(st.sampled_from(WHITESPACE), max_size=8),
    st.sampled_from(["", " ", "\t"]), st.sampled_from(["", " ", "\n"]))
records_st = st.one_of(built_records, st.just(""), st.text(st.characters(exclude_categories=("Cs",)), max_size=20))


def _why_map(record, got, want) -> str:
    if sorted((w.lower(), c) for w, c in want) == sorted((w.lower() if isinstance(w, str) else w, c)
                                                          for w, c in got) and got != want:
        return " It looks like the words were lower- or upper-cased: case is kept."
    if any(c != 1 for _, c in got if isinstance(c, int)):
        return " Every pair must be (word, 1)."
    if any(w == "" for w, _ in got):
        return " Empty strings are not words: split on runs of whitespace with record.split()."
    return " Words are exactly record.split(): case and punctuation are kept, any whitespace separates."


@grader.test(3)
def map_and_reduce_functions(answer: Answer):
    """map_fn gives (word, 1) per word of record.split(); reduce_fn sums any iterable of ints."""
    module = _module(answer)
    list(module.map_fn("a b"))          # a stub's NotImplementedError surfaces as "not implemented yet"
    module.reduce_fn("a", iter([1]))

    @settings(max_examples=150, phases=PHASES)
    @given(record=records_st)
    def prop_map(record):
        out = module.map_fn(record)
        got = list(out)
        if not all(isinstance(p, tuple) and len(p) == 2 for p in got):
            raise Fail(f"map_fn({record!r}) must yield (word, 1) tuples; it gave {got!r}", f"list(map_fn({record!r}))")
        want = [(w, 1) for w in record.split()]
        if sorted(got, key=repr) != sorted(want, key=repr):
            raise Fail(f"map_fn({record!r}) gave {got!r}; expected {want!r}." + _why_map(record, got, want),
                       f"list(map_fn({record!r}))")

    check_property(prop_map)

    @settings(max_examples=60, phases=PHASES)
    @given(key=st.sampled_from(POOL), values=st.lists(st.integers(0, 10**6), max_size=12))
    def prop_reduce(key, values):
        got = module.reduce_fn(key, iter(values))
        want = (key, sum(values))
        if not (isinstance(got, tuple) and len(got) == 2 and got[0] == key and type(got[1]) is int
                and got[1] == want[1]):
            raise Fail(f"reduce_fn({key!r}, iter({values!r})) returned {got!r}; expected {want!r}. "
                       "values is any iterable of ints (here an iterator: no len(), one pass) and "
                       "may hold counts other than 1 (a combiner or a retried map can pre-sum them)",
                       f"reduce_fn({key!r}, iter({values!r}))")

    check_property(prop_reduce)


# ---------------------------------------------------------------------------------------------
# 2. partition

PARTITION_KEYS = ["the", "The", "cat", "cat,", "über", "数据", "a b", "", "x" * 50, "🙂", "ray",
                  "map", "reduce", "shuffle", "spark", "hadoop", "don't", "42", "İ", "naïve"]
_PARTITION_CHILD = r"""
import json, sys
source = sys.stdin.read()
namespace = {"__name__": "answer_word_count_child"}
exec(compile(source, "<answer cell word_count>", "exec"), namespace)
keys = json.loads(sys.argv[1])
print(json.dumps([[namespace["partition"](k, n) for n in (1, 2, 3, 4, 7, 16)] for k in keys]))
"""


def _partition_elsewhere(source: str, seed: int):
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_ADDRESS")}
    env["PYTHONHASHSEED"] = str(seed)
    run = subprocess.run([sys.executable, "-c", _PARTITION_CHILD, json.dumps(PARTITION_KEYS)],
                         input=source, capture_output=True, text=True, env=env, timeout=120)
    if run.returncode != 0:
        tail = run.stderr.strip().splitlines()[-1:] or ["(no message)"]
        raise Fail(f"the answer cell failed in a fresh Python process (PYTHONHASHSEED={seed}): {tail[0]}")
    return json.loads(run.stdout.strip().splitlines()[-1])


@grader.test(3)
def partition_is_stable(answer: Answer):
    """partition(key, n) is in range(n), spreads keys over the reducers, and gives the same
    answer in processes with different hash seeds (Ray workers are separate processes)."""
    module = _module(answer)
    module.partition("a", 2)

    @settings(max_examples=100, phases=PHASES)
    @given(key=st.one_of(st.sampled_from(PARTITION_KEYS), st.text(st.characters(exclude_categories=("Cs",)))),
           n_reduce=st.integers(1, 16))
    def prop_range(key, n_reduce):
        p = module.partition(key, n_reduce)
        if type(p) is not int or not 0 <= p < n_reduce:
            raise Fail(f"partition({key!r}, {n_reduce}) returned {p!r}; it must be an int in range({n_reduce})",
                       f"partition({key!r}, {n_reduce})")
        again = module.partition(key, n_reduce)
        if again != p:
            raise Fail(f"partition({key!r}, {n_reduce}) returned {p!r}, then {again!r}: it must depend on the key only",
                       f"partition({key!r}, {n_reduce})")

    check_property(prop_range)

    keys = [f"w{i}" for i in range(40)] + PARTITION_KEYS
    for n in (2, 4):
        used = {module.partition(k, n) for k in keys}
        if len(used) < n:
            raise Fail(f"partition sends {len(keys)} different keys to reducers {sorted(used)} only, of "
                       f"range({n}): the reduce work is not spread. Hash the key (e.g. "
                       "zlib.crc32(key.encode()) % n_reduce).",
                       f"sorted({{partition(k, {n}) for k in {keys[:5]!r} + ...}})")

    # Fixed seeds first (a deterministic message), then this process's own seed.
    runs = [(f"a fresh process with PYTHONHASHSEED={seed}", _partition_elsewhere(answer.source, seed))
            for seed in (1, 2, 3)]
    runs.append(("the grading process", [[module.partition(k, n) for n in (1, 2, 3, 4, 7, 16)]
                                         for k in PARTITION_KEYS]))
    first_where, first = runs[0]
    for where, there in runs[1:]:
        for key, a, b in zip(PARTITION_KEYS, first, there):
            if a != b:
                raise Fail(
                    f"partition({key!r}, n) for n = 1, 2, 3, 4, 7, 16 gave {a} in {first_where} but {b} "
                    f"in {where}. Python's hash() of a str is salted per process, so two map tasks on "
                    "different Ray workers would send the same word to different reducers. Use a stable "
                    "hash: zlib.crc32(key.encode()) or hashlib.",
                    f"for seed in 1 2; do PYTHONHASHSEED=$seed python -c 'print(hash({key!r}) % 2)'; done")


# ---------------------------------------------------------------------------------------------
# 3. run_mapreduce on corpora

corpora = st.lists(st.one_of(built_records, st.just(""), st.sampled_from(POOL)), max_size=12)


def _check_corpus(module, records, n_map, n_reduce, value="one"):
    with Run(module, records, n_map, n_reduce, value=value) as run:
        try:
            got = run.call()
        except (Fail, NotImplementedError):
            raise
        except Exception as e:  # noqa: BLE001 — the student's run_mapreduce crashed on this corpus
            first = (str(e).strip().splitlines() or [""])[0]
            raise Fail(f"run_mapreduce raised {type(e).__name__}: {first}", run.replay()) from None
        if value == "one":
            want = _count(records)
        else:
            want = {}
            for r in records:
                for w in r.split():
                    want[w] = want.get(w, 0) + len(w)
        if got != want:
            extra = ""
            if set(got) == set(want) and all(got[k] <= want[k] for k in want):
                extra = (" Some counts are too low: either records were lost, or a key's pairs went to "
                         "more than one reducer and one reducer's result overwrote another's — send "
                         "every pair to reducer partition(key, n_reduce).")
            elif set(got) < set(want):
                missing = sorted(set(want) - set(got), key=repr)[:3]
                extra = (f" Words {missing!r} are missing: are some records (e.g. when n_map > len(records), "
                         "or a last, shorter chunk) never given to a map task?")
            elif any(got.get(k, 0) > want[k] for k in want):
                extra = " Some counts are too high: a record was counted more than once."
            if value != "one":
                extra += (" Here map_fn emits (word, len(word)) and reduce_fn sums: run_mapreduce must "
                          "call the map_fn and reduce_fn it is given.")
            raise Fail(f"run_mapreduce returned wrong counts: {_diff(want, got)}.{extra}", run.replay())


@grader.test(5)
def run_mapreduce_counts(answer: Answer):
    """Hypothesis corpora (unicode, punctuation, empty records, repeats, n_map > len(records))
    counted as collections.Counter(w for r in records for w in r.split())."""
    module = _module(answer)
    fixed = [([], 4, 2), ([""], 3, 2), (["a b a"], 4, 3), (["x"] * 5, 2, 1), (["dup dup", "dup"], 7, 4)]
    for records, n_map, n_reduce in fixed:
        _check_corpus(module, records, n_map, n_reduce)

    @settings(max_examples=CORPUS_EXAMPLES, phases=PHASES)
    @given(records=corpora, extra_maps=st.integers(-11, 4), n_reduce=st.integers(1, 4))
    def prop(records, extra_maps, n_reduce):
        n_map = max(1, len(records) + extra_maps)
        _check_corpus(module, records, n_map, n_reduce)

    check_property(prop)

    # The map_fn and reduce_fn it is given, not the module's own.
    _check_corpus(module, ["ab c ab", "dddd", "c c"], 2, 2, value="len")

    # End to end with the student's own map_fn / reduce_fn.
    records = ["It was the best of times,", "it was the worst of times;", "", "数据 数据 并行"]
    with lib.reaping():
        raw = module.run_mapreduce(records, module.map_fn, module.reduce_fn, 3, 2)
    got = _plain(raw, "run_mapreduce(records, map_fn, reduce_fn, 3, 2)")
    if got != _count(records):
        raise Fail(f"with your own map_fn and reduce_fn, run_mapreduce returned wrong counts: "
                   f"{_diff(_count(records), got)}",
                   f"records = {records!r}\nrun_mapreduce(records, map_fn, reduce_fn, n_map=3, n_reduce=2)")


# ---------------------------------------------------------------------------------------------
# 4. crash schedules

CRASH_SEED = 13_04
CRASH_CORPUS = [
    "the quick brown fox jumps over the lazy dog",
    "The Dog barks; the fox runs.",
    "数据 并行 计算 数据",
    "",
    "map reduce map reduce shuffle",
    "spark ray hadoop ray spark ray",
    "fault tolerance means re running failed tasks",
    "the end of the story the end",
    "über naïve café über",
    "one two three four five six",
]


def _schedule():
    """The fixed crash schedule: (description, n_map, n_reduce, map_faults, reduce_faults).
    Victims are drawn with a fixed seed among records / keys with >= 4 words / >= 2 occurrences,
    so a map death always comes after that task already produced pairs."""
    rng = random.Random(CRASH_SEED)
    last = CRASH_CORPUS[-1]
    long_records = [r for r in CRASH_CORPUS if len(r.split()) >= 4 and r != last]
    counts = _count(CRASH_CORPUS)
    keys = sorted(k for k, c in counts.items() if c >= 2)
    r1, r2, r3 = rng.sample(long_records, 3)
    k1, k2 = rng.sample(keys, 2)
    return [
        ("a map worker dies", 4, 2, {r1: ("exit", 2)}, {}),
        ("the map worker of the last record dies", 3, 3, {last: ("exit", 3)}, {}),
        ("a reduce worker dies", 4, 2, {}, {k1: ("exit", 0)}),
        ("a map worker and a reduce worker die", 2, 3, {r2: ("exit", 1)}, {k2: ("exit", 0)}),
        ("map_fn raises", 4, 2, {r3: ("raise", 2)}, {}),
        ("reduce_fn raises", 3, 2, {}, {k1: ("raise", 0)}),
    ]


def _fault_text(map_faults, reduce_faults) -> str:
    parts = []
    for record, (action, after) in map_faults.items():
        what = "its worker process is killed (os._exit)" if action == "exit" else "map_fn raises RuntimeError"
        parts.append(f"on the first attempt at record {record!r}, after {after} of its (word, 1) pairs, {what}")
    for key, (action, _) in reduce_faults.items():
        what = "its worker process is killed" if action == "exit" else "reduce_fn raises RuntimeError"
        parts.append(f"on the first reduce_fn call for key {key!r}, {what}")
    return "; ".join(parts)


@grader.test(5)
def survives_crashes(answer: Answer):
    """A fixed, seeded schedule of worker deaths and task exceptions, some after the task has
    produced part of its output: every record is still counted exactly once."""
    module = _module(answer)
    want = _count(CRASH_CORPUS)
    for label, n_map, n_reduce, map_faults, reduce_faults in _schedule():
        raising = any(a == "raise" for a, _ in list(map_faults.values()) + list(reduce_faults.values()))
        with Run(module, CRASH_CORPUS, n_map, n_reduce, map_faults, reduce_faults) as run:
            run.call(catch=True)
            schedule = _fault_text(map_faults, reduce_faults)
            replay = run.replay() + "\n# fault schedule: " + schedule
            in_driver = [c for c in run.calls() if c["task"] is None or c["pid"] == os.getpid()]
            if in_driver:
                raise Fail(f"{label}: map_fn/reduce_fn ran in the driver process ({len(in_driver)} calls), "
                           "so no Ray worker could fail or be retried. Run them inside @ray.remote tasks.", replay)
            not_fired = [t for t in map_faults if not run.fired("map", t)] + \
                        [t for t in reduce_faults if not run.fired("reduce", t)]
            if run.error is not None:
                text = f"{type(run.error).__name__}: {run.error}"
                if raising and MARK in text:
                    continue   # an exception in the user's function may propagate: that is not a wrong count
                crashed = "WorkerCrashedError" in text or "worker died" in text.lower() or "RayTaskError" in type(run.error).__name__
                if crashed and not raising:
                    raise Fail(f"{label}: run_mapreduce gave up when a worker died ({type(run.error).__name__}). "
                               "MapReduce re-runs a failed task: give the remote functions max_retries "
                               "(e.g. @ray.remote(max_retries=3)), or resubmit it yourself.", replay)
                first = str(run.error).strip().splitlines()[:1]
                raise Fail(f"{label}: run_mapreduce raised {type(run.error).__name__}: "
                           f"{first[0] if first else ''}", replay)
            if not_fired:
                raise Fail(f"{label}: the scheduled failure never happened: map_fn / reduce_fn was never called "
                           f"inside a Ray worker on {not_fired[0]!r}. Every record must go through map_fn "
                           "in a map task and every key through reduce_fn in a reduce task.", replay)
            got = run.result
            if got != want:
                high = [k for k in want if got.get(k, 0) > want[k]]
                low = [k for k in want if got.get(k, 0) < want[k]]
                why = []
                if high:
                    why.append("counts too high: output produced before the failure was kept AND produced "
                               "again by the retry. Emit a task's output only through its return value "
                               "(Ray keeps the result of the attempt that succeeded), never as a side "
                               "effect during the task")
                if low:
                    why.append("counts too low: the failed part was dropped instead of re-run. Do not catch "
                               "and skip errors inside a task; let Ray retry the whole task")
                raise Fail(f"{label}: wrong counts after the failure ({_diff(want, got)}); "
                           + "; ".join(why) + ".", replay)


# ---------------------------------------------------------------------------------------------
# 5. inside Ray, and in parallel

PARALLEL_CORPUS = ["alpha beta gamma delta", "epsilon zeta eta theta alpha", "iota kappa lambda mu beta",
                   "nu xi omicron pi gamma", "rho sigma tau upsilon delta", "phi chi psi omega epsilon",
                   "one two three four alpha", "five six seven eight one two"]


@grader.test(4)
def runs_in_ray_in_parallel(answer: Answer):
    """Every map_fn / reduce_fn call runs in a Ray task (not the driver); records are split into
    n_map map tasks and keys into at most n_reduce reduce tasks, each key reduced by exactly one;
    two map tasks and two reduce tasks are provably in flight at once (a barrier actor)."""
    module = _module(answer)
    ray = _ray()
    n_map, n_reduce = 4, 2
    barrier = _barrier_class().remote(2, GUARD_S)
    try:
        with Run(module, PARALLEL_CORPUS, n_map, n_reduce, barrier=barrier) as run:
            got = run.call()
            replay = run.replay()
            calls = run.calls()
            report = ray.get(barrier.report.remote())
    finally:
        ray.kill(barrier)
    in_driver = [c for c in calls if c["task"] is None or c["pid"] == os.getpid()]
    if in_driver:
        kinds = sorted({c["kind"] + "_fn" for c in in_driver})
        raise Fail(f"{' and '.join(kinds)} ran in the driver process ({len(in_driver)} of {len(calls)} calls): "
                   "the map and reduce work must run inside Ray tasks (@ray.remote functions called "
                   "with .remote()).", replay)
    want = _count(PARALLEL_CORPUS)
    if got != want:
        raise Fail(f"run_mapreduce returned wrong counts: {_diff(want, got)}", replay)
    map_tasks = {c["task"] for c in calls if c["kind"] == "map"}
    reduce_calls = [c for c in calls if c["kind"] == "reduce" and c["task"] not in map_tasks]
    reduce_tasks = {c["task"] for c in reduce_calls}
    if len(map_tasks) != n_map:
        raise Fail(f"map_fn was called in {len(map_tasks)} different Ray task(s) for {len(PARALLEL_CORPUS)} "
                   f"records with n_map={n_map}: split the records into n_map map tasks.", replay)
    if not 1 <= len(reduce_tasks) <= n_reduce:
        raise Fail(f"reduce_fn was called in {len(reduce_tasks)} different Ray task(s) with n_reduce={n_reduce}: "
                   "run n_reduce reduce tasks, each reducing the keys partition() gives it.", replay)
    by_key = collections.defaultdict(set)
    for c in reduce_calls:
        by_key[c["target"]].add(c["task"])
    split = sorted((k for k, tasks in by_key.items() if len(tasks) > 1), key=repr)
    if split:
        raise Fail(f"key {split[0]!r} was reduced in {len(by_key[split[0]])} different reduce tasks: a key "
                   "must go to exactly one reducer, partition(key, n_reduce).", replay)
    by_task = collections.defaultdict(set)
    for c in reduce_calls:
        by_task[c["task"]].add(c["target"])
    # Tasks in a fixed order (by their keys), not in the order Ray happened to run them.
    for keys in sorted(by_task.values(), key=lambda ks: sorted(map(repr, ks))):
        parts = {module.partition(k, n_reduce) for k in keys}
        if len(parts) > 1:
            a, b = sorted(keys, key=lambda k: (module.partition(k, n_reduce), k))[0], \
                sorted(keys, key=lambda k: (-module.partition(k, n_reduce), k))[0]
            raise Fail(f"one reduce task reduced keys {a!r} and {b!r}, but partition() gives them "
                       f"{module.partition(a, n_reduce)} and {module.partition(b, n_reduce)} (n_reduce="
                       f"{n_reduce}): reduce task r must get exactly the pairs whose partition(key, "
                       "n_reduce) == r.", replay)
    for kind, n in (("map", n_map), ("reduce", n_reduce)):
        proven, seen = report.get(kind, (False, 0))
        if not proven:
            raise Fail(f"the {kind} tasks did not run in parallel: the first {kind}_fn call waited at a "
                       f"barrier for a second {kind} task to start, and none did while it waited "
                       f"({seen} {kind} task(s) reached it in all). Submit all {kind} tasks with .remote() "
                       "before calling ray.get on any of them.", replay)
