"""Hidden grader of ``word_count``: map_fn, reduce_fn, partition and run_mapreduce on Ray.

The judge (this module) runs no student code and no Ray. Everything that touches the answer cell
runs in the grading subject (kit/subject.py) through the public harness ``ch13lib.mapreduce_probe``,
which reports raw observations: what the cell's functions returned, every probe call (process id,
Ray task id), which scheduled faults fired, what a barrier saw. This module chooses the inputs
(hypothesis corpora, the fixed crash schedule), computes the expected counts itself and decides.

The subject runs ONE real Ray cluster (loopback only, 2 logical CPUs), started by the first test
that needs it and reused by the others; the last request of a grading shuts it down. run_mapreduce
is never given the student's own map_fn / reduce_fn except in one end-to-end check: it gets
*probes* (ch13lib.mapreduce_probe.Probe, whose docstring says how): picklable callables that compute
the reference map / reduce, log every call, inject worker deaths and exceptions on a fixed schedule,
and meet at a barrier that proves two tasks were in flight at once.

Verdicts depend on which calls happened where, never on how long anything took.
"""

from __future__ import annotations

import collections
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from graders.api import Answer, Fail, Grader, check_property
from kit.judge import Raised

HARNESS = "ch13lib.mapreduce_probe"
GUARD_S = 20.0  # hang guard of a barrier wait (a parallel solution passes it in milliseconds)
CORPUS_EXAMPLES = 15  # hypothesis corpora per property (each run may start actors: keep it bounded)
MARK = "InjectedFault"  # in the message of every exception the probes raise (ch13lib.mapreduce_probe.MARK)


class WordCountGrader(Grader):
    """A Grader whose last request shuts the subject's Ray cluster down (its folder under /tmp
    would otherwise outlive the subject, whose processes are killed)."""

    def finish(self, subject) -> None:
        try:
            if subject.proc is not None:
                subject.request("run", f"{HARNESS}:stop")
        except Exception:  # noqa: BLE001 - a lost or flagged subject: close() kills it anyway
            pass


grader = WordCountGrader("word_count", timeout_s=360, harness=(HARNESS,))


# ---------------------------------------------------------------------------------------------
# Requests to the subject, and what comes back


def _run(answer: Answer, name: str, *args, **kwargs):
    return answer.run(f"{HARNESS}:{name}", *args, **kwargs)


def _contract(answer: Answer) -> None:
    answer.require(
        "map_fn",
        "reduce_fn",
        "partition",
        "run_mapreduce",
        cell_name="answer",
        what="the contract needs map_fn, reduce_fn, partition and run_mapreduce",
    )


def _shown(x) -> bool:
    """A value the subject could only describe (ch13lib.mapreduce_probe.shown)."""
    return type(x) is dict and "repr" in x


def _r(x) -> str:
    """repr() of a value as the subject sent it (described values show their own repr)."""
    if _shown(x):
        return str(x["repr"])
    if type(x) is tuple:
        inner = ", ".join(_r(v) for v in x)
        return f"({inner},)" if len(x) == 1 else f"({inner})"
    if type(x) is list:
        return "[" + ", ".join(_r(v) for v in x) + "]"
    return repr(x)


def _typename(x) -> str:
    return str(x["type"]) if _shown(x) else type(x).__name__


def _plain(result, what: str) -> dict:
    """The returned mapping as a plain {str: int} dict (the subject sent its entries)."""
    if result.get("type") != "dict":
        raise Fail(f"{what} returned {result.get('type')}, not a dict {{word: count}}")
    out = {}
    for key, value in result["items"]:
        if type(key) is not str or type(value) is not int:
            raise Fail(
                f"{what} returned an entry {_r(key)}: {_r(value)} ({_typename(key)}: "
                f"{_typename(value)}); every entry must be word (str): count (int)"
            )
        out[key] = value
    return out


def _diff(want: dict, got: dict, limit: int = 6, line=None) -> str:
    """The keys whose counts differ, one ``line(key, wanted, got)`` each (None: missing)."""
    line = line or (lambda key, w, g: f"{key!r}: expected {_or_missing(w)}, got {_or_missing(g)}")
    lines = [
        line(k, want.get(k), got.get(k)) for k in sorted(set(want) | set(got), key=repr) if want.get(k) != got.get(k)
    ]
    more = f" (and {len(lines) - limit} more)" if len(lines) > limit else ""
    return "; ".join(lines[:limit]) + more


def _or_missing(x) -> str:
    return "missing" if x is None else str(x)


def _count(records) -> dict:
    return dict(collections.Counter(w for r in records for w in r.split()))


def _replay(records, n_map, n_reduce) -> str:
    return f"records = {records!r}\nrun_mapreduce(records, map_fn, reduce_fn, n_map={n_map}, n_reduce={n_reduce})"


def _grouped(calls, by: str, what: str) -> dict:
    """``{call[by]: the set of call[what]}`` over the probe calls."""
    out = collections.defaultdict(set)
    for c in calls:
        out[c[by]].add(c[what])
    return out


def _in_driver(obs) -> list:
    return [c for c in obs["calls"] if c["task"] is None or c["pid"] == obs["driver_pid"]]


# ---------------------------------------------------------------------------------------------
# 1. map_fn and reduce_fn

WHITESPACE = [" ", "  ", "\t", "\n", "\u3000", "\xa0", "\u2003", "\r\n"]
POOL = [
    "the",
    "The",
    "THE",
    "cat",
    "cat,",
    "cat.",
    "don't",
    "über",
    "Über",
    "数据",
    "并行",
    "naïve",
    "e-mail",
    "42",
    "x",
    "ß",
    "İ",
    "ǅ",
    "(ray)",
    "🙂",
]

words = st.one_of(
    st.sampled_from(POOL),
    st.text(st.characters(exclude_categories=("Cs", "Zs", "Zl", "Zp", "Cc")), min_size=1, max_size=6),
)
built_records = st.builds(
    lambda ws, seps, lead, trail: lead + "".join(w + s for w, s in zip(ws, seps + [""] * len(ws))).rstrip() + trail,
    st.lists(words, max_size=8),
    st.lists(st.sampled_from(WHITESPACE), max_size=8),
    st.sampled_from(["", " ", "\t"]),
    st.sampled_from(["", " ", "\n"]),
)
records_st = st.one_of(built_records, st.just(""), st.text(st.characters(exclude_categories=("Cs",)), max_size=20))


def _why_map(record, got, want) -> str:
    lowered = sorted(((w.lower() if isinstance(w, str) else w, c) for w, c in got), key=repr)
    if sorted(((w.lower(), c) for w, c in want), key=repr) == lowered and got != want:
        return " It looks like the words were lower- or upper-cased: case is kept."
    if any(c != 1 for _, c in got if isinstance(c, int)):
        return " Every pair must be (word, 1)."
    if any(w == "" for w, _ in got):
        return " Empty strings are not words: split on runs of whitespace with record.split()."
    return " Words are exactly record.split(): case and punctuation are kept, any whitespace separates."


@grader.test(3)
def map_and_reduce_functions(answer: Answer):
    """map_fn gives (word, 1) per word of record.split(); reduce_fn sums any iterable of ints."""
    _contract(answer)
    _run(answer, "map_pairs", "a b")  # a stub's NotImplementedError surfaces as "not implemented yet"
    _run(answer, "reduce_once", "a", [1])

    @settings(max_examples=150)
    @given(record=records_st)
    def prop_map(record):
        got = _run(answer, "map_pairs", record)
        if not all(type(p) is tuple and len(p) == 2 for p in got):
            raise Fail(
                f"map_fn({record!r}) must yield (word, 1) tuples; it gave {_r(got)}", f"list(map_fn({record!r}))"
            )
        want = [(w, 1) for w in record.split()]
        if sorted(got, key=repr) != sorted(want, key=repr):
            raise Fail(
                f"map_fn({record!r}) gave {_r(got)}; expected {want!r}." + _why_map(record, got, want),
                f"list(map_fn({record!r}))",
            )

    check_property(prop_map)

    @settings(max_examples=60)
    @given(key=st.sampled_from(POOL), values=st.lists(st.integers(0, 10**6), max_size=12))
    def prop_reduce(key, values):
        got = _run(answer, "reduce_once", key, values)
        want = (key, sum(values))
        if not (type(got) is tuple and len(got) == 2 and got[0] == key and type(got[1]) is int and got[1] == want[1]):
            raise Fail(
                f"reduce_fn({key!r}, iter({values!r})) returned {_r(got)}; expected {want!r}. "
                "values is any iterable of ints (here an iterator: no len(), one pass) and "
                "may hold counts other than 1 (a combiner or a retried map can pre-sum them)",
                f"reduce_fn({key!r}, iter({values!r}))",
            )

    check_property(prop_reduce)


# ---------------------------------------------------------------------------------------------
# 2. partition

PARTITION_KEYS = [
    "the",
    "The",
    "cat",
    "cat,",
    "über",
    "数据",
    "a b",
    "",
    "x" * 50,
    "🙂",
    "ray",
    "map",
    "reduce",
    "shuffle",
    "spark",
    "hadoop",
    "don't",
    "42",
    "İ",
    "naïve",
]
PARTITION_NS = [1, 2, 3, 4, 7, 16]
SEEDS = (1, 2)  # with the grading process's own seed, three different salts (a third fresh process caught nothing more)


@grader.test(3)
def partition_is_stable(answer: Answer):
    """partition(key, n) is in range(n), spreads keys over the reducers, and gives the same
    answer in processes with different hash seeds (Ray workers are separate processes)."""
    _contract(answer)
    _run(answer, "partition_table", ["a"], [2])  # a stub's NotImplementedError: "not implemented yet"

    @settings(max_examples=100)
    @given(
        key=st.one_of(st.sampled_from(PARTITION_KEYS), st.text(st.characters(exclude_categories=("Cs",)))),
        n_reduce=st.integers(1, 16),
    )
    def prop_range(key, n_reduce):
        (p,), (again,) = (row[0] for row in _run(answer, "partition_table", [key], [n_reduce], repeat=2))
        if type(p) is not int or not 0 <= p < n_reduce:
            raise Fail(
                f"partition({key!r}, {n_reduce}) returned {_r(p)}; it must be an int in range({n_reduce})",
                f"partition({key!r}, {n_reduce})",
            )
        if again != p:
            raise Fail(
                f"partition({key!r}, {n_reduce}) returned {_r(p)}, then {_r(again)}: it must depend on the key only",
                f"partition({key!r}, {n_reduce})",
            )

    check_property(prop_range)

    keys = [f"w{i}" for i in range(40)] + PARTITION_KEYS
    (table,) = _run(answer, "partition_table", keys, [2, 4])
    for j, n in enumerate((2, 4)):
        used = {row[j] for row in table if type(row[j]) is int}
        if len(used) < n:
            raise Fail(
                f"partition sends {len(keys)} different keys to reducers {sorted(used)} only, of "
                f"range({n}): the reduce work is not spread. Hash the key (e.g. "
                "zlib.crc32(key.encode()) % n_reduce).",
                f"sorted({{partition(k, {n}) for k in {keys[:5]!r} + ...}})",
            )

    # Fixed seeds first (a deterministic message), then the grading process's own seed. The fresh
    # processes are started by the subject, which runs the cell in each (side by side).
    runs = []
    for seed, got in zip(SEEDS, _run(answer, "partition_elsewhere", PARTITION_KEYS, PARTITION_NS, list(SEEDS))):
        if got["refused"]:
            raise Fail(
                "not graded: your code asked for "
                + "; ".join(got["refused"][:3])
                + ", which no exercise needs (the sandbox refused it). A TA will review it."
            )
        if "error" in got:
            raise Fail(f"the answer cell failed in a fresh Python process (PYTHONHASHSEED={seed}): {got['error']}")
        runs.append((f"a fresh process with PYTHONHASHSEED={seed}", got["table"]))
    (own,) = _run(answer, "partition_table", PARTITION_KEYS, PARTITION_NS)
    runs.append(("the grading process", own))
    first_where, first = runs[0]
    for where, there in runs[1:]:
        for key, a, b in zip(PARTITION_KEYS, first, there):
            if a != b:
                raise Fail(
                    f"partition({key!r}, n) for n = 1, 2, 3, 4, 7, 16 gave {_r(a)} in {first_where} but {_r(b)} "
                    f"in {where}. Python's hash() of a str is salted per process, so two map tasks on "
                    "different Ray workers would send the same word to different reducers. Use a stable "
                    "hash: zlib.crc32(key.encode()) or hashlib.",
                    f"for seed in 1 2; do PYTHONHASHSEED=$seed python -c 'print(hash({key!r}) % 2)'; done",
                )


# ---------------------------------------------------------------------------------------------
# 3. run_mapreduce on corpora

corpora = st.lists(st.one_of(built_records, st.just(""), st.sampled_from(POOL)), max_size=12)


def _check_corpus(answer, records, n_map, n_reduce, value="one"):
    replay = _replay(records, n_map, n_reduce)
    try:
        obs = _run(answer, "run_probed", records, n_map, n_reduce, value=value, catch=False)
    except Raised as e:
        if e.type == "NotImplementedError" or e.flagged:
            raise
        if e.type == "RayDidNotStart" and e.from_harness:  # the machine's fault: say so, not "your code raised"
            raise Fail(e.message) from None
        # the student's run_mapreduce crashed on this corpus
        first = (e.message.strip().splitlines() or [""])[0]
        raise Fail(f"run_mapreduce raised {e.type}: {first}", replay) from None
    got = _plain(obs["result"], "run_mapreduce")
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
            extra = (
                " Some counts are too low: either records were lost, or a key's pairs went to "
                "more than one reducer and one reducer's result overwrote another's — send "
                "every pair to reducer partition(key, n_reduce)."
            )
        elif set(got) < set(want):
            missing = sorted(set(want) - set(got), key=repr)[:3]
            extra = (
                f" Words {missing!r} are missing: are some records (e.g. when n_map > len(records), "
                "or a last, shorter chunk) never given to a map task?"
            )
        elif any(got.get(k, 0) > want[k] for k in want):
            extra = " Some counts are too high: a record was counted more than once."
        if value != "one":
            extra += (
                " Here map_fn emits (word, len(word)) and reduce_fn sums: run_mapreduce must "
                "call the map_fn and reduce_fn it is given."
            )
        raise Fail(f"run_mapreduce returned wrong counts: {_diff(want, got)}.{extra}", replay)


@grader.test(5)
def run_mapreduce_counts(answer: Answer):
    """Hypothesis corpora (unicode, punctuation, empty records, repeats, n_map > len(records))
    counted as collections.Counter(w for r in records for w in r.split())."""
    _contract(answer)
    fixed = [([], 4, 2), ([""], 3, 2), (["a b a"], 4, 3), (["x"] * 5, 2, 1), (["dup dup", "dup"], 7, 4)]
    for records, n_map, n_reduce in fixed:
        _check_corpus(answer, records, n_map, n_reduce)

    @settings(max_examples=CORPUS_EXAMPLES)
    @given(records=corpora, extra_maps=st.integers(-11, 4), n_reduce=st.integers(1, 4))
    def prop(records, extra_maps, n_reduce):
        n_map = max(1, len(records) + extra_maps)
        _check_corpus(answer, records, n_map, n_reduce)

    check_property(prop)

    # The map_fn and reduce_fn it is given, not the module's own.
    _check_corpus(answer, ["ab c ab", "dddd", "c c"], 2, 2, value="len")

    # End to end with the student's own map_fn / reduce_fn.
    records = ["It was the best of times,", "it was the worst of times;", "", "数据 数据 并行"]
    got = _plain(_run(answer, "run_own", records, 3, 2), "run_mapreduce(records, map_fn, reduce_fn, 3, 2)")
    if got != _count(records):
        raise Fail(
            f"with your own map_fn and reduce_fn, run_mapreduce returned wrong counts: {_diff(_count(records), got)}",
            f"records = {records!r}\nrun_mapreduce(records, map_fn, reduce_fn, n_map=3, n_reduce=2)",
        )


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


def _crash_weights() -> dict:
    """What map_fn emits per word in the crash runs: (word, w), w from 2 to 6, fixed per word. A
    driver that made up a failed map task's pairs (record.split(), each worth 1) and merely called
    map_fn again in a throwaway task would have the right counts with unit weights; with these,
    made-up pairs show in the counts. (A failed reduce task's sum the driver can still compute itself:
    a reduce_fn that is not a plain sum would break combiners, which the contract allows.)"""
    rng = random.Random(CRASH_SEED)
    return {w: rng.randint(2, 6) for w in sorted(_count(CRASH_CORPUS))}


CRASH_WEIGHTS = _crash_weights()


def _crash_line(key, want, got) -> str:
    """A wrong count of a crash run, in map_fn's pairs (each worth its word's weight)."""
    w = CRASH_WEIGHTS.get(key, 1)
    n = (want or 0) // w
    if got is None:
        return f"{key!r}: {n} pair(s), missing from the result"
    if type(got) is int and got % w == 0:
        return f"{key!r}: {n} pair(s) expected, {got // w} counted"
    return f"{key!r}: {_r(got)} is no whole number of its pairs (each worth {w}): a pair map_fn did not emit"


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
    _contract(answer)
    want = {k: n * CRASH_WEIGHTS[k] for k, n in _count(CRASH_CORPUS).items()}
    for label, n_map, n_reduce, map_faults, reduce_faults in _schedule():
        raising = any(a == "raise" for a, _ in list(map_faults.values()) + list(reduce_faults.values()))
        obs = _run(answer, "run_probed", CRASH_CORPUS, n_map, n_reduce, map_faults, reduce_faults, value=CRASH_WEIGHTS)
        schedule = _fault_text(map_faults, reduce_faults) + (
            "; in these runs map_fn emits (word, w) with a weight w of 2 to 6 per word, and reduce_fn sums them"
        )
        replay = _replay(CRASH_CORPUS, n_map, n_reduce) + "\n# fault schedule: " + schedule
        in_driver = _in_driver(obs)
        if in_driver:
            raise Fail(
                f"{label}: map_fn/reduce_fn ran in the driver process ({len(in_driver)} calls), "
                "so no Ray worker could fail or be retried. Run them inside @ray.remote tasks.",
                replay,
            )
        fired = {(kind, target) for kind, target in obs["fired"]}
        not_fired = [t for t in map_faults if ("map", t) not in fired] + [
            t for t in reduce_faults if ("reduce", t) not in fired
        ]
        error = obs["error"]
        if error is not None:
            text = f"{error['type']}: {error['message']}"
            if raising and MARK in text:
                continue  # an exception in the user's function may propagate: that is not a wrong count
            crashed = "WorkerCrashedError" in text or "worker died" in text.lower() or "RayTaskError" in error["type"]
            if crashed and not raising:
                raise Fail(
                    f"{label}: run_mapreduce gave up when a worker died ({error['type']}). "
                    "MapReduce re-runs a failed task: give the remote functions max_retries "
                    "(e.g. @ray.remote(max_retries=3)), or resubmit it yourself.",
                    replay,
                )
            first = error["message"].strip().splitlines()[:1]
            raise Fail(f"{label}: run_mapreduce raised {error['type']}: {first[0] if first else ''}", replay)
        if not_fired:
            raise Fail(
                f"{label}: the scheduled failure never happened: map_fn / reduce_fn was never called "
                f"inside a Ray worker on {not_fired[0]!r}. Every record must go through map_fn "
                "in a map task and every key through reduce_fn in a reduce task.",
                replay,
            )
        got = _plain(obs["result"], "run_mapreduce")
        deaths = sum(1 for t, f in map_faults.items() if f[0] == "exit" and ("map", t) in fired)
        deaths += sum(1 for t, f in reduce_faults.items() if f[0] == "exit" and ("reduce", t) in fired)
        if got == want and obs.get("failed_attempts", 0) < deaths:
            # the markers are files the cell can make first: Ray's own record decides
            raise Fail(
                f"{label}: the scheduled worker deaths never happened: {deaths} were due, and Ray "
                f"recorded {obs.get('failed_attempts', 0)} failed task attempts. Every record must go "
                "through map_fn in a map task and every key through reduce_fn in a reduce task, "
                "and nothing else may decide which attempt is the first.",
                replay,
            )
        # Each fired fault's target must reach map_fn/reduce_fn again, in a later attempt: a driver that
        # made up a failed task's pairs (record.split()) or its sums would have the right counts with no
        # retry. The first attempt is the one that failed (a marker file decides).
        calls = collections.Counter((c["kind"], c["target"]) for c in obs["calls"])
        not_redone = [(kind, target) for kind, target in sorted(fired, key=repr) if calls[(kind, target)] < 2]
        if got == want and not_redone:
            kind, target = not_redone[0]
            raise Fail(
                f"{label}: the failed {kind} task was never run again: {kind}_fn was called on {target!r} "
                "only in the attempt that failed, yet the counts came out right. A failed task's work "
                "must be redone by a task that calls map_fn / reduce_fn again (Ray's max_retries, or "
                "resubmit it yourself), never made up in the driver.",
                replay,
            )
        if got != want:
            high = [k for k in want if got.get(k, 0) > want[k]]
            low = [k for k in want if got.get(k, 0) < want[k]]
            why = []
            if high:
                why.append(
                    "counts too high: output produced before the failure was kept AND produced "
                    "again by the retry. Emit a task's output only through its return value "
                    "(Ray keeps the result of the attempt that succeeded), never as a side "
                    "effect during the task"
                )
            if low:
                why.append(
                    "counts too low: the failed part was dropped instead of re-run. Do not catch "
                    "and skip errors inside a task; let Ray retry the whole task"
                )
            if any(k in got and (type(got[k]) is not int or got[k] % CRASH_WEIGHTS.get(k, 1)) for k in want):
                why = [  # (made-up pairs: "too high" or "too low" would say nothing true)
                    "pairs that map_fn did not emit reached the result (map_fn emits (word, w) here, not "
                    "(word, 1)): a failed task's pairs must come from map_fn run again, never be made up"
                ]
            raise Fail(
                f"{label}: wrong counts after the failure ({_diff(want, got, line=_crash_line)}); "
                + "; ".join(why)
                + ".",
                replay,
            )


# ---------------------------------------------------------------------------------------------
# 5. inside Ray, and in parallel

PARALLEL_CORPUS = [
    "alpha beta gamma delta",
    "epsilon zeta eta theta alpha",
    "iota kappa lambda mu beta",
    "nu xi omicron pi gamma",
    "rho sigma tau upsilon delta",
    "phi chi psi omega epsilon",
    "one two three four alpha",
    "five six seven eight one two",
]


@grader.test(4)
def runs_in_ray_in_parallel(answer: Answer):
    """Every map_fn / reduce_fn call runs in a Ray task (not the driver); records are split into
    n_map map tasks and keys into at most n_reduce reduce tasks, each key reduced by exactly one;
    two map tasks and two reduce tasks are provably in flight at once (a barrier actor)."""
    _contract(answer)
    n_map, n_reduce = 4, 2
    obs = _run(answer, "run_probed", PARALLEL_CORPUS, n_map, n_reduce, barrier_guard_s=GUARD_S, catch=False)
    replay = _replay(PARALLEL_CORPUS, n_map, n_reduce)
    calls, report = obs["calls"], obs["barrier"]
    got = _plain(obs["result"], "run_mapreduce")
    in_driver = _in_driver(obs)
    if in_driver:
        kinds = sorted({c["kind"] + "_fn" for c in in_driver})
        raise Fail(
            f"{' and '.join(kinds)} ran in the driver process ({len(in_driver)} of {len(calls)} calls): "
            "the map and reduce work must run inside Ray tasks (@ray.remote functions called "
            "with .remote()).",
            replay,
        )
    want = _count(PARALLEL_CORPUS)
    if got != want:
        raise Fail(f"run_mapreduce returned wrong counts: {_diff(want, got)}", replay)
    map_tasks = {c["task"] for c in calls if c["kind"] == "map"}
    reduce_calls = [c for c in calls if c["kind"] == "reduce" and c["task"] not in map_tasks]
    reduce_tasks = {c["task"] for c in reduce_calls}
    if len(map_tasks) != n_map:
        raise Fail(
            f"map_fn was called in {len(map_tasks)} different Ray task(s) for {len(PARALLEL_CORPUS)} "
            f"records with n_map={n_map}: split the records into n_map map tasks.",
            replay,
        )
    if not 1 <= len(reduce_tasks) <= n_reduce:
        raise Fail(
            f"reduce_fn was called in {len(reduce_tasks)} different Ray task(s) with n_reduce={n_reduce}: "
            "run n_reduce reduce tasks, each reducing the keys partition() gives it.",
            replay,
        )
    by_key = _grouped(reduce_calls, "target", "task")  # key -> the reduce tasks that reduced it
    split = sorted((k for k, tasks in by_key.items() if len(tasks) > 1), key=repr)
    if split:
        raise Fail(
            f"key {split[0]!r} was reduced in {len(by_key[split[0]])} different reduce tasks: a key "
            "must go to exactly one reducer, partition(key, n_reduce).",
            replay,
        )
    by_task = _grouped(reduce_calls, "task", "target")  # reduce task -> the keys it reduced
    # partition() of every reduced key, asked of the cell once.
    reduced = sorted(by_key, key=repr)
    (table,) = _run(answer, "partition_table", reduced, [n_reduce])
    part = {k: row[0] for k, row in zip(reduced, table)}
    order = lambda p: p if type(p) is int else -1  # noqa: E731 - sort key of a shown value
    # Tasks in a fixed order (by their keys), not in the order Ray happened to run them.
    for keys in sorted(by_task.values(), key=lambda ks: sorted(map(repr, ks))):
        if len({_r(part[k]) for k in keys}) > 1:
            a = sorted(keys, key=lambda k: (order(part[k]), k))[0]
            b = sorted(keys, key=lambda k: (-order(part[k]), k))[0]
            raise Fail(
                f"one reduce task reduced keys {a!r} and {b!r}, but partition() gives them "
                f"{_r(part[a])} and {_r(part[b])} (n_reduce="
                f"{n_reduce}): reduce task r must get exactly the pairs whose partition(key, "
                "n_reduce) == r.",
                replay,
            )
    for kind, n in (("map", n_map), ("reduce", n_reduce)):
        proven, seen, _ = report.get(kind, (False, 0, []))
        # the barrier's arrivals are the probes' word, which the cell can speak too (a made-up
        # second party): two of the tasks that proved it must have run at once
        # by Ray's own record
        proven = proven and obs.get("ran_together", {}).get(kind, False)
        if not proven:
            raise Fail(
                f"the {kind} tasks did not run in parallel: the first {kind}_fn call waited at a "
                f"barrier for a second {kind} task to start, and none did while it waited "
                f"({seen} {kind} task(s) reached it in all). Submit all {kind} tasks with .remote() "
                "before calling ray.get on any of them.",
                replay,
            )
