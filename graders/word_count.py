"""Hidden grader of ``word_count``: map_fn, reduce_fn, partition and run_mapreduce on Ray.

The judge (this module) runs no student code and no Ray. Everything that touches the answer cell
runs in the grading subject (kit/subject.py) through the harness ``kit.harnesses.mapreduce_probe``,
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

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from ch13lib import word_count_checks as checks
from ch13lib.lang import Both, Messages, language
from graders.api import SAY, Answer, Fail, Grader, check_property
from kit.judge import Raised

HARNESS = "kit.harnesses.mapreduce_probe"
GUARD_S = 20.0  # hang guard of a barrier wait (a parallel solution passes it in milliseconds)
CORPUS_EXAMPLES = 15  # hypothesis corpora per property (each run may start actors: keep it bounded)

# What this grader says, in the course's language (ch13lib/lang.py).
M = Messages(
    why_case=(
        "看起来单词被转换成了小写或大写: 应保留大小写。",
        " It looks like the words were lower- or upper-cased: case is kept.",
    ),
    why_one=("每个键值对都必须是 (word, 1)。", " Every pair must be (word, 1)."),
    why_empty=(
        "空字符串不是单词: 用 record.split() 按连续空白切分。",
        " Empty strings are not words: split on runs of whitespace with record.split().",
    ),
    why_split=(
        "单词就是 record.split() 的结果: 保留大小写和标点, 任何空白都是分隔符。",
        " Words are exactly record.split(): case and punctuation are kept, any whitespace separates.",
    ),
    map_not_pairs=(
        "map_fn({record}) 必须产生 (word, 1) 元组; 它给出的是 {got}",
        "map_fn({record}) must yield (word, 1) tuples; it gave {got}",
    ),
    map_wrong=("map_fn({record}) 给出 {got}; 应为 {want}。{why}", "map_fn({record}) gave {got}; expected {want}.{why}"),
    reduce_wrong=(
        "reduce_fn({word}, iter({values})) 返回了 {got}; 应为 {want}。values 可以是任何 int 的可迭代对象 "
        "(这里是迭代器: 没有 len(), 只能遍历一次), 其中的计数也可能不是 1 (combiner 或重试的映射任务可能已预先求和)",
        "reduce_fn({word}, iter({values})) returned {got}; expected {want}. values is any iterable of ints (here an "
        "iterator: no len(), one pass) and may hold counts other than 1 (a combiner or a retried map can pre-sum them)",
    ),
    partition_range=(
        "partition({word}, {n}) 返回了 {p}; 它必须是 range({n}) 中的 int",
        "partition({word}, {n}) returned {p}; it must be an int in range({n})",
    ),
    partition_unstable=(
        "partition({word}, {n}) 先返回 {p}, 又返回 {again}: 它必须只取决于键",
        "partition({word}, {n}) returned {p}, then {again}: it must depend on the key only",
    ),
    not_spread=(
        "partition 把 {count} 个不同的键只发给了 range({n}) 中的归约器 {used}: 归约工作没有分散开。"
        "请对键做哈希 (例如 zlib.crc32(key.encode()) % n_reduce)。",
        "partition sends {count} different keys to reducers {used} only, of range({n}): the reduce work is not "
        "spread. Hash the key (e.g. zlib.crc32(key.encode()) % n_reduce).",
    ),
    refused=(
        "未评分: 你的代码请求了 {what}, 没有哪道练习需要它 (沙箱拒绝了)。助教会复查。",
        "not graded: your code asked for {what}, which no exercise needs (the sandbox refused it). "
        "A TA will review it.",
    ),
    fresh_failed=(
        "答案单元在一个新的 Python 进程中 (PYTHONHASHSEED={seed}) 运行失败: {error}",
        "the answer cell failed in a fresh Python process (PYTHONHASHSEED={seed}): {error}",
    ),
    fresh_process=("PYTHONHASHSEED={seed} 的新进程", "a fresh process with PYTHONHASHSEED={seed}"),
    grading_process=("评分进程", "the grading process"),
    salted=(
        "对 n = 1, 2, 3, 4, 7, 16, partition({word}, n) 在{first_where}中给出 {a}, 在{where}中却给出 {b}。Python 对 "
        "str 的 hash() 在每个进程中加了不同的盐, 因此不同 Ray worker 上的两个映射任务会把同一个单词发给不同的归约器。"
        "请使用稳定的哈希: zlib.crc32(key.encode()) 或 hashlib。",
        "partition({word}, n) for n = 1, 2, 3, 4, 7, 16 gave {a} in {first_where} but {b} in {where}. Python's hash() "
        "of a str is salted per process, so two map tasks on different Ray workers would send the same word to "
        "different reducers. Use a stable hash: zlib.crc32(key.encode()) or hashlib.",
    ),
    own_wrong=(
        "使用你自己的 map_fn 和 reduce_fn 时, run_mapreduce 返回的计数不对: {diff}",
        "with your own map_fn and reduce_fn, run_mapreduce returned wrong counts: {diff}",
    ),
    weights=(
        "{faults}; 在这些运行中 map_fn 对每个单词产生 (word, w), 权重 w 为 2 到 6, reduce_fn 把它们求和",
        "{faults}; in these runs map_fn emits (word, w) with a weight w of 2 to 6 per word, and reduce_fn sums them",
    ),
    schedule_comment=("# 故障计划: {schedule}", "# fault schedule: {schedule}"),
)


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
        needs="`map_fn`, `reduce_fn`, `partition`, `run_mapreduce`",
    )


_r = checks.r  # repr() of a value as the subject sent it
_count = checks.count


def _counts(check, *args):
    """What ``check(*args)``, a check of word_count_checks, gives; a result that is no counts fails
    with what is wrong with it."""
    try:
        return check(*args)
    except checks.NotCounts as e:
        raise Fail(str(e.problem)) from None


def _replay(records, n_map, n_reduce) -> str:
    return f"records = {records!r}\nrun_mapreduce(records, map_fn, reduce_fn, n_map={n_map}, n_reduce={n_reduce})"


def _check_replay(records, n_map, n_reduce, **options) -> str:
    """The replay of a run that needs the probes (the map_fn / reduce_fn it is given, scheduled
    faults, the barrier): ch13lib.mapreduce.check_run makes the same run in the notebook and judges
    it with the grader's own checks (ch13lib.word_count_checks)."""
    args = "".join(f", {k}={v!r}" for k, v in options.items())
    return (
        f"records = {records!r}\nfrom ch13lib.mapreduce import check_run\n"
        f"check_run(run_mapreduce, records, n_map={n_map}, n_reduce={n_reduce}{args})"
    )


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


def _why_map(record, got, want) -> Both:
    lowered = sorted(((w.lower() if isinstance(w, str) else w, c) for w, c in got), key=repr)
    if sorted(((w.lower(), c) for w, c in want), key=repr) == lowered and got != want:
        return M.both("why_case")
    if any(c != 1 for _, c in got if isinstance(c, int)):
        return M.both("why_one")
    if any(w == "" for w, _ in got):
        return M.both("why_empty")
    return M.both("why_split")


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
            raise Fail(M("map_not_pairs", record=repr(record), got=_r(got)), f"list(map_fn({record!r}))")
        want = [(w, 1) for w in record.split()]
        if sorted(got, key=repr) != sorted(want, key=repr):
            raise Fail(
                M("map_wrong", record=repr(record), got=_r(got), want=repr(want), why=_why_map(record, got, want)),
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
                M("reduce_wrong", word=repr(key), values=repr(values), got=_r(got), want=repr(want)),
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
                M("partition_range", word=repr(key), n=n_reduce, p=_r(p)),
                f"partition({key!r}, {n_reduce})",
            )
        if again != p:
            raise Fail(
                M("partition_unstable", word=repr(key), n=n_reduce, p=_r(p), again=_r(again)),
                f"partition({key!r}, {n_reduce})",
            )

    check_property(prop_range)

    keys = [f"w{i}" for i in range(40)] + PARTITION_KEYS
    (table,) = _run(answer, "partition_table", keys, [2, 4])
    for j, n in enumerate((2, 4)):
        used = {row[j] for row in table if type(row[j]) is int}
        if len(used) < n:
            raise Fail(
                M("not_spread", count=len(keys), used=sorted(used), n=n),
                "from ch13lib.mapreduce import check_partition\n"
                f"check_partition(partition, {keys!r}, spread=(2, 4), seeds=())",
            )

    # Fixed seeds first (a deterministic message), then the grading process's own seed. The fresh
    # processes are started by the subject, which runs the cell in each (side by side).
    runs = []
    for seed, got in zip(SEEDS, _run(answer, "partition_elsewhere", PARTITION_KEYS, PARTITION_NS, list(SEEDS))):
        if got.get("tampered"):  # the fresh process's guards, as the subject's own
            raise Fail(SAY("replaced", names=", ".join(f"`{c}`" for c in got["tampered"][:5])))
        if got["refused"]:
            raise Fail(M("refused", what="; ".join(got["refused"][:3])))
        if "error" in got:
            raise Fail(M("fresh_failed", seed=seed, error=got["error"]))
        runs.append((M.both("fresh_process", seed=seed), got["table"]))
    (own,) = _run(answer, "partition_table", PARTITION_KEYS, PARTITION_NS)
    runs.append((M.both("grading_process"), own))
    first_where, first = runs[0]
    for where, there in runs[1:]:
        for key, a, b in zip(PARTITION_KEYS, first, there):
            if a != b:
                raise Fail(
                    M("salted", word=repr(key), a=_r(a), first_where=first_where, b=_r(b), where=where),
                    f"from ch13lib.mapreduce import check_partition\ncheck_partition(partition, [{key!r}])",
                )


# ---------------------------------------------------------------------------------------------
# 3. run_mapreduce on corpora

corpora = st.lists(st.one_of(built_records, st.just(""), st.sampled_from(POOL)), max_size=12)


def _check_corpus(answer, records, n_map, n_reduce, value="one"):
    # map_fn emitting (word, len(word)) is a probe of the grader's: the notebook's run makes it too
    replay = _replay(records, n_map, n_reduce)
    if value != "one":
        replay = _check_replay(records, n_map, n_reduce, value=value)
    try:
        obs = _run(answer, "run_probed", records, n_map, n_reduce, value=value, catch=False)
    except Raised as e:
        if e.type == "NotImplementedError" or e.flagged:
            raise
        if e.type == "RayDidNotStart" and e.from_harness:  # the machine's fault: say so, not "your code raised"
            raise Fail(e.message) from None
        # the student's run_mapreduce crashed on this corpus
        raise Fail(str(checks.raised_problem({"type": e.type, "message": e.message})), replay) from None
    got = _counts(checks.plain, obs["result"], "run_mapreduce")
    problem = checks.counts_problem(got, checks.want_counts(records, value), value)
    if problem:
        raise Fail(str(problem), replay)


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
    got = _counts(
        checks.plain, _run(answer, "run_own", records, 3, 2), "run_mapreduce(records, map_fn, reduce_fn, 3, 2)"
    )
    if got != _count(records):
        raise Fail(
            M("own_wrong", diff=checks.diff(_count(records), got)),
            f"records = {records!r}\nrun_mapreduce(records, map_fn, reduce_fn, n_map=3, n_reduce=2)",
        )


# ---------------------------------------------------------------------------------------------
# 4. crash schedules

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
    rng = random.Random(checks.CRASH_SEED)
    last = CRASH_CORPUS[-1]
    long_records = [r for r in CRASH_CORPUS if len(r.split()) >= 4 and r != last]
    counts = _count(CRASH_CORPUS)
    keys = sorted(k for k, c in counts.items() if c >= 2)
    r1, r2, r3 = rng.sample(long_records, 3)
    k1, k2 = rng.sample(keys, 2)
    runs = [
        (4, 2, {r1: ("exit", 2)}, {}),
        (3, 3, {last: ("exit", 3)}, {}),
        (4, 2, {}, {k1: ("exit", 0)}),
        (2, 3, {r2: ("exit", 1)}, {k2: ("exit", 0)}),
        (4, 2, {r3: ("raise", 2)}, {}),
        (3, 2, {}, {k1: ("raise", 0)}),
    ]
    return [(checks.crash_label(CRASH_CORPUS, m, r), n_map, n_reduce, m, r) for n_map, n_reduce, m, r in runs]


# What map_fn emits per word in the crash runs: (word, w), w from 2 to 6 (checks.crash_weights says why).
CRASH_WEIGHTS = checks.crash_weights(CRASH_CORPUS)


def _schedule_comment(schedule) -> str:
    """The replay's comment line(s) that give the fault schedule: one per language in force."""
    zh, en = M.both("schedule_comment", schedule=schedule)
    return {"zh": zh, "en": en}.get(language(), f"{zh}\n{en}")


@grader.test(5)
def survives_crashes(answer: Answer):
    """A fixed, seeded schedule of worker deaths and task exceptions, some after the task has
    produced part of its output: every record is still counted exactly once."""
    _contract(answer)
    for _, n_map, n_reduce, map_faults, reduce_faults in _schedule():
        obs = _run(answer, "run_probed", CRASH_CORPUS, n_map, n_reduce, map_faults, reduce_faults, value=CRASH_WEIGHTS)
        schedule = M.both("weights", faults=checks.fault_text(map_faults, reduce_faults))
        faults = {"map_faults": map_faults, "reduce_faults": reduce_faults, "weighted": True}
        replay = _check_replay(CRASH_CORPUS, n_map, n_reduce, **faults) + "\n" + _schedule_comment(schedule)
        problem = _counts(checks.crash_problem, obs, CRASH_CORPUS, map_faults, reduce_faults, CRASH_WEIGHTS)
        if problem:
            raise Fail(str(problem), replay)


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
    replay = _check_replay(PARALLEL_CORPUS, n_map, n_reduce, partition=Code("partition"), parallel=True)

    def partition_of(keys):
        """partition() of every reduced key, asked of the cell once."""
        (table,) = _run(answer, "partition_table", keys, [n_reduce])
        return {k: row[0] for k, row in zip(keys, table)}

    problem = _counts(checks.parallel_problem, obs, PARALLEL_CORPUS, n_map, n_reduce, partition_of)
    if problem:
        raise Fail(str(problem), replay)


class Code(str):
    """A name written into a replay as it is (its repr is itself)."""

    def __repr__(self) -> str:
        return str(self)
