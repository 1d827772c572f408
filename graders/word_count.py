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

from ch13lib.lang import Both, Messages, language
from graders.api import SAY, Answer, Fail, Grader, check_property
from kit.judge import Raised

HARNESS = "ch13lib.mapreduce_probe"
GUARD_S = 20.0  # hang guard of a barrier wait (a parallel solution passes it in milliseconds)
CORPUS_EXAMPLES = 15  # hypothesis corpora per property (each run may start actors: keep it bounded)
MARK = "InjectedFault"  # in the message of every exception the probes raise (ch13lib.mapreduce_probe.MARK)

# What this grader says, in the course's language (ch13lib/lang.py).
M = Messages(
    not_dict=("{what} 返回了 {type}, 而不是字典 {{word: count}}", "{what} returned {type}, not a dict {{word: count}}"),
    bad_entry=(
        "{what} 返回了条目 {word}: {value} ({key_type}: {value_type}); 每个条目都必须是 word (str): count (int)",
        "{what} returned an entry {word}: {value} ({key_type}: {value_type}); every entry must be word (str): "
        "count (int)",
    ),
    diff_line=("{word}: 应为 {want}, 实际为 {got}", "{word}: expected {want}, got {got}"),
    diff_more=(" (另有 {n} 处)", " (and {n} more)"),
    missing=("缺失", "missing"),
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
    raised=("run_mapreduce 抛出了 {type}: {first}", "run_mapreduce raised {type}: {first}"),
    wrong_counts=(
        "run_mapreduce 返回的计数不对: {diff}。{extra}",
        "run_mapreduce returned wrong counts: {diff}.{extra}",
    ),
    wrong_counts_plain=("run_mapreduce 返回的计数不对: {diff}", "run_mapreduce returned wrong counts: {diff}"),
    extra_low=(
        "有些计数偏低: 要么丢失了记录, 要么同一个键的键值对被发给了多个归约器, 一个归约器的结果覆盖了另一个的 — "
        "把每个键值对都发给归约器 partition(key, n_reduce)。",
        " Some counts are too low: either records were lost, or a key's pairs went to more than one reducer and one "
        "reducer's result overwrote another's — send every pair to reducer partition(key, n_reduce).",
    ),
    extra_missing=(
        "单词 {missing} 缺失了: 是否有些记录 (例如 n_map > len(records) 时, 或最后一块较短的分块) 从未交给映射任务?",
        " Words {missing} are missing: are some records (e.g. when n_map > len(records), or a last, shorter chunk) "
        "never given to a map task?",
    ),
    extra_high=(
        "有些计数偏高: 某条记录被计数了不止一次。",
        " Some counts are too high: a record was counted more than once.",
    ),
    extra_len=(
        "这里 map_fn 产生 (word, len(word)), reduce_fn 求和: run_mapreduce 必须调用传给它的 map_fn 和 reduce_fn。",
        " Here map_fn emits (word, len(word)) and reduce_fn sums: run_mapreduce must call the map_fn and reduce_fn "
        "it is given.",
    ),
    own_wrong=(
        "使用你自己的 map_fn 和 reduce_fn 时, run_mapreduce 返回的计数不对: {diff}",
        "with your own map_fn and reduce_fn, run_mapreduce returned wrong counts: {diff}",
    ),
    label_map=("一个映射 worker 崩溃", "a map worker dies"),
    label_last=("处理最后一条记录的映射 worker 崩溃", "the map worker of the last record dies"),
    label_reduce=("一个归约 worker 崩溃", "a reduce worker dies"),
    label_both=("一个映射 worker 和一个归约 worker 崩溃", "a map worker and a reduce worker die"),
    label_map_raises=("map_fn 抛出异常", "map_fn raises"),
    label_reduce_raises=("reduce_fn 抛出异常", "reduce_fn raises"),
    crash_missing=("{word}: {n} 个键值对, 结果中缺失", "{word}: {n} pair(s), missing from the result"),
    crash_count=("{word}: 应有 {n} 个键值对, 计得 {got} 个", "{word}: {n} pair(s) expected, {got} counted"),
    crash_whole=(
        "{word}: {got} 不是其键值对 (每个值 {w}) 的整数倍: 有 map_fn 没有产生的键值对",
        "{word}: {got} is no whole number of its pairs (each worth {w}): a pair map_fn did not emit",
    ),
    map_exit=("它的 worker 进程被杀死 (os._exit)", "its worker process is killed (os._exit)"),
    map_raise=("map_fn 抛出 RuntimeError", "map_fn raises RuntimeError"),
    reduce_exit=("它的 worker 进程被杀死", "its worker process is killed"),
    reduce_raise=("reduce_fn 抛出 RuntimeError", "reduce_fn raises RuntimeError"),
    fault_map=(
        "第一次尝试处理记录 {record} 时, 在产生了它的 {after} 个 (word, 1) 键值对之后, {what}",
        "on the first attempt at record {record}, after {after} of its (word, 1) pairs, {what}",
    ),
    fault_reduce=(
        "对键 {word} 的第一次 reduce_fn 调用中, {what}",
        "on the first reduce_fn call for key {word}, {what}",
    ),
    weights=(
        "{faults}; 在这些运行中 map_fn 对每个单词产生 (word, w), 权重 w 为 2 到 6, reduce_fn 把它们求和",
        "{faults}; in these runs map_fn emits (word, w) with a weight w of 2 to 6 per word, and reduce_fn sums them",
    ),
    schedule_comment=("# 故障计划: {schedule}", "# fault schedule: {schedule}"),
    crash_in_driver=(
        "{label}: map_fn/reduce_fn 在驱动进程中运行 ({n} 次调用), 因此没有 Ray worker 可以失败或被重试。"
        "请在 @ray.remote 任务中运行它们。",
        "{label}: map_fn/reduce_fn ran in the driver process ({n} calls), so no Ray worker could fail or be retried. "
        "Run them inside @ray.remote tasks.",
    ),
    gave_up=(
        "{label}: worker 崩溃时 run_mapreduce 放弃了 ({type})。MapReduce 会重新运行失败的任务: 给远程函数设置 "
        "max_retries (例如 @ray.remote(max_retries=3)), 或者自己重新提交。",
        "{label}: run_mapreduce gave up when a worker died ({type}). MapReduce re-runs a failed task: give the "
        "remote functions max_retries (e.g. @ray.remote(max_retries=3)), or resubmit it yourself.",
    ),
    crash_raised=("{label}: run_mapreduce 抛出了 {type}: {first}", "{label}: run_mapreduce raised {type}: {first}"),
    not_fired=(
        "{label}: 计划中的故障从未发生: map_fn / reduce_fn 从未在 Ray worker 中对 {target} 调用过。每条记录都必须在"
        "映射任务中经过 map_fn, 每个键都必须在归约任务中经过 reduce_fn。",
        "{label}: the scheduled failure never happened: map_fn / reduce_fn was never called inside a Ray worker on "
        "{target}. Every record must go through map_fn in a map task and every key through reduce_fn in a reduce task.",
    ),
    no_deaths=(
        "{label}: 计划中的 worker 崩溃从未发生: 应有 {deaths} 次, 而 Ray 记录的失败任务尝试为 {failed} 次。"
        "每条记录都必须在映射任务中经过 map_fn, 每个键都必须在归约任务中经过 reduce_fn, "
        "而且哪次尝试算第一次不能由别的东西决定。",
        "{label}: the scheduled worker deaths never happened: {deaths} were due, and Ray recorded {failed} failed "
        "task attempts. Every record must go through map_fn in a map task and every key through reduce_fn in a "
        "reduce task, and nothing else may decide which attempt is the first.",
    ),
    not_redone=(
        "{label}: 失败的 {kind} 任务从未重新运行: {kind}_fn 只在失败的那次尝试中对 {target} 调用过, 计数却是对的。"
        "失败任务的工作必须由再次调用 map_fn / reduce_fn 的任务重做 (Ray 的 max_retries, 或自己重新提交), "
        "绝不能在驱动进程中凭空编造。",
        "{label}: the failed {kind} task was never run again: {kind}_fn was called on {target} only in the attempt "
        "that failed, yet the counts came out right. A failed task's work must be redone by a task that calls "
        "map_fn / reduce_fn again (Ray's max_retries, or resubmit it yourself), never made up in the driver.",
    ),
    too_high=(
        "计数偏高: 故障之前产生的输出被保留了, 重试时又产生了一次。任务的输出只能通过它的返回值给出 "
        "(Ray 保留成功那次尝试的结果), 绝不能在任务运行中作为副作用输出",
        "counts too high: output produced before the failure was kept AND produced again by the retry. Emit a "
        "task's output only through its return value (Ray keeps the result of the attempt that succeeded), never "
        "as a side effect during the task",
    ),
    too_low=(
        "计数偏低: 失败的部分被丢弃了, 而不是重新运行。不要在任务内部捕获并跳过错误; 让 Ray 重试整个任务",
        "counts too low: the failed part was dropped instead of re-run. Do not catch and skip errors inside a task; "
        "let Ray retry the whole task",
    ),
    made_up=(
        "结果中出现了 map_fn 没有产生的键值对 (这里 map_fn 产生的是 (word, w), 不是 (word, 1)): 失败任务的键值对"
        "必须来自再次运行的 map_fn, 绝不能凭空编造",
        "pairs that map_fn did not emit reached the result (map_fn emits (word, w) here, not (word, 1)): a failed "
        "task's pairs must come from map_fn run again, never be made up",
    ),
    crash_wrong=(
        "{label}: 故障之后计数不对 ({diff}); {why}。",
        "{label}: wrong counts after the failure ({diff}); {why}.",
    ),
    and_=(" 和 ", " and "),
    par_in_driver=(
        "{kinds} 在驱动进程中运行 ({n}/{total} 次调用): 映射和归约工作必须在 Ray 任务中运行 "
        "(用 .remote() 调用的 @ray.remote 函数)。",
        "{kinds} ran in the driver process ({n} of {total} calls): the map and reduce work must run inside Ray "
        "tasks (@ray.remote functions called with .remote()).",
    ),
    map_tasks=(
        "对 {records} 条记录 (n_map={n_map}), map_fn 在 {n} 个不同的 Ray 任务中被调用: 请把记录分成 n_map 个映射任务。",
        "map_fn was called in {n} different Ray task(s) for {records} records with n_map={n_map}: split the "
        "records into n_map map tasks.",
    ),
    reduce_tasks=(
        "n_reduce={n_reduce} 时, reduce_fn 在 {n} 个不同的 Ray 任务中被调用: 请运行 n_reduce 个归约任务, "
        "每个归约 partition() 分给它的键。",
        "reduce_fn was called in {n} different Ray task(s) with n_reduce={n_reduce}: run n_reduce reduce tasks, "
        "each reducing the keys partition() gives it.",
    ),
    split_key=(
        "键 {word} 在 {n} 个不同的归约任务中被归约: 一个键必须只发给一个归约器, 即 partition(key, n_reduce)。",
        "key {word} was reduced in {n} different reduce tasks: a key must go to exactly one reducer, "
        "partition(key, n_reduce).",
    ),
    wrong_reducer=(
        "一个归约任务归约了键 {a} 和 {b}, 但 partition() 给它们的是 {pa} 和 {pb} (n_reduce={n_reduce}): "
        "归约任务 r 必须恰好得到 partition(key, n_reduce) == r 的那些键值对。",
        "one reduce task reduced keys {a} and {b}, but partition() gives them {pa} and {pb} (n_reduce={n_reduce}): "
        "reduce task r must get exactly the pairs whose partition(key, n_reduce) == r.",
    ),
    not_parallel=(
        "{kind} 任务没有并行运行: 第一次 {kind}_fn 调用在一个屏障处等待第二个 {kind} 任务启动, 等待期间没有任何任务"
        "启动 (总共只有 {seen} 个 {kind} 任务到达屏障)。请先用 .remote() 提交所有 {kind} 任务, 再对其中任何一个调用 "
        "ray.get。",
        "the {kind} tasks did not run in parallel: the first {kind}_fn call waited at a barrier for a second {kind} "
        "task to start, and none did while it waited ({seen} {kind} task(s) reached it in all). Submit all {kind} "
        "tasks with .remote() before calling ray.get on any of them.",
    ),
)


def _joined(parts, sep: Both | str = "; ") -> Both:
    """Phrases (each a Both, or a str for both languages) joined in each language by ``sep``."""
    side = lambda x, i: x[i] if isinstance(x, Both) else str(x)  # noqa: E731
    return Both(*(side(sep, i).join(side(p, i) for p in parts) for i in (0, 1)))


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
        raise Fail(M("not_dict", what=what, type=result.get("type")))
    out = {}
    for key, value in result["items"]:
        if type(key) is not str or type(value) is not int:
            raise Fail(
                M(
                    "bad_entry",
                    what=what,
                    word=_r(key),
                    value=_r(value),
                    key_type=_typename(key),
                    value_type=_typename(value),
                )
            )
        out[key] = value
    return out


def _diff(want: dict, got: dict, limit: int = 6, line=None) -> Both:
    """The keys whose counts differ, one ``line(key, wanted, got)`` each (None: missing)."""
    line = line or (lambda key, w, g: M.both("diff_line", word=repr(key), want=_or_missing(w), got=_or_missing(g)))
    lines = [
        line(k, want.get(k), got.get(k)) for k in sorted(set(want) | set(got), key=repr) if want.get(k) != got.get(k)
    ]
    more = [M.both("diff_more", n=len(lines) - limit)] if len(lines) > limit else []
    return _joined([_joined(lines[:limit]), *more], "")


def _or_missing(x) -> Both | str:
    return M.both("missing") if x is None else str(x)


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
                f"sorted({{partition(k, {n}) for k in {keys[:5]!r} + ...}})",
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
        raise Fail(M("raised", type=e.type, first=first), replay) from None
    got = _plain(obs["result"], "run_mapreduce")
    if value == "one":
        want = _count(records)
    else:
        want = {}
        for r in records:
            for w in r.split():
                want[w] = want.get(w, 0) + len(w)
    if got != want:
        extra = []
        if set(got) == set(want) and all(got[k] <= want[k] for k in want):
            extra.append(M.both("extra_low"))
        elif set(got) < set(want):
            missing = sorted(set(want) - set(got), key=repr)[:3]
            extra.append(M.both("extra_missing", missing=repr(missing)))
        elif any(got.get(k, 0) > want[k] for k in want):
            extra.append(M.both("extra_high"))
        if value != "one":
            extra.append(M.both("extra_len"))
        raise Fail(M("wrong_counts", diff=_diff(want, got), extra=_joined(extra, "")), replay)


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
            M("own_wrong", diff=_diff(_count(records), got)),
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
        (M.both("label_map"), 4, 2, {r1: ("exit", 2)}, {}),
        (M.both("label_last"), 3, 3, {last: ("exit", 3)}, {}),
        (M.both("label_reduce"), 4, 2, {}, {k1: ("exit", 0)}),
        (M.both("label_both"), 2, 3, {r2: ("exit", 1)}, {k2: ("exit", 0)}),
        (M.both("label_map_raises"), 4, 2, {r3: ("raise", 2)}, {}),
        (M.both("label_reduce_raises"), 3, 2, {}, {k1: ("raise", 0)}),
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


def _crash_line(key, want, got) -> Both:
    """A wrong count of a crash run, in map_fn's pairs (each worth its word's weight)."""
    w = CRASH_WEIGHTS.get(key, 1)
    n = (want or 0) // w
    if got is None:
        return M.both("crash_missing", word=repr(key), n=n)
    if type(got) is int and got % w == 0:
        return M.both("crash_count", word=repr(key), n=n, got=got // w)
    return M.both("crash_whole", word=repr(key), got=_r(got), w=w)


def _fault_text(map_faults, reduce_faults) -> Both:
    parts = []
    for record, (action, after) in map_faults.items():
        what = M.both("map_exit" if action == "exit" else "map_raise")
        parts.append(M.both("fault_map", record=repr(record), after=after, what=what))
    for key, (action, _) in reduce_faults.items():
        what = M.both("reduce_exit" if action == "exit" else "reduce_raise")
        parts.append(M.both("fault_reduce", word=repr(key), what=what))
    return _joined(parts)


def _schedule_comment(schedule: Both) -> str:
    """The replay's comment line(s) that give the fault schedule: one per language in force."""
    zh, en = M.both("schedule_comment", schedule=schedule)
    return {"zh": zh, "en": en}.get(language(), f"{zh}\n{en}")


@grader.test(5)
def survives_crashes(answer: Answer):
    """A fixed, seeded schedule of worker deaths and task exceptions, some after the task has
    produced part of its output: every record is still counted exactly once."""
    _contract(answer)
    want = {k: n * CRASH_WEIGHTS[k] for k, n in _count(CRASH_CORPUS).items()}
    for label, n_map, n_reduce, map_faults, reduce_faults in _schedule():
        raising = any(a == "raise" for a, _ in list(map_faults.values()) + list(reduce_faults.values()))
        obs = _run(answer, "run_probed", CRASH_CORPUS, n_map, n_reduce, map_faults, reduce_faults, value=CRASH_WEIGHTS)
        schedule = M.both("weights", faults=_fault_text(map_faults, reduce_faults))
        replay = _replay(CRASH_CORPUS, n_map, n_reduce) + "\n" + _schedule_comment(schedule)
        in_driver = _in_driver(obs)
        if in_driver:
            raise Fail(
                M("crash_in_driver", label=label, n=len(in_driver)),
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
                    M("gave_up", label=label, type=error["type"]),
                    replay,
                )
            first = error["message"].strip().splitlines()[:1]
            raise Fail(M("crash_raised", label=label, type=error["type"], first=first[0] if first else ""), replay)
        if not_fired:
            raise Fail(
                M("not_fired", label=label, target=repr(not_fired[0])),
                replay,
            )
        got = _plain(obs["result"], "run_mapreduce")
        deaths = sum(1 for t, f in map_faults.items() if f[0] == "exit" and ("map", t) in fired)
        deaths += sum(1 for t, f in reduce_faults.items() if f[0] == "exit" and ("reduce", t) in fired)
        if got == want and obs.get("failed_attempts", 0) < deaths:
            # the markers are files the cell can make first: Ray's own record decides
            raise Fail(
                M("no_deaths", label=label, deaths=deaths, failed=obs.get("failed_attempts", 0)),
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
                M("not_redone", label=label, kind=kind, target=repr(target)),
                replay,
            )
        if got != want:
            high = [k for k in want if got.get(k, 0) > want[k]]
            low = [k for k in want if got.get(k, 0) < want[k]]
            why = []
            if high:
                why.append(M.both("too_high"))
            if low:
                why.append(M.both("too_low"))
            if any(k in got and (type(got[k]) is not int or got[k] % CRASH_WEIGHTS.get(k, 1)) for k in want):
                why = [M.both("made_up")]  # (made-up pairs: "too high" or "too low" would say nothing true)
            raise Fail(
                M("crash_wrong", label=label, diff=_diff(want, got, line=_crash_line), why=_joined(why)),
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
            M("par_in_driver", kinds=_joined(kinds, M.both("and_")), n=len(in_driver), total=len(calls)),
            replay,
        )
    want = _count(PARALLEL_CORPUS)
    if got != want:
        raise Fail(M("wrong_counts_plain", diff=_diff(want, got)), replay)
    map_tasks = {c["task"] for c in calls if c["kind"] == "map"}
    reduce_calls = [c for c in calls if c["kind"] == "reduce" and c["task"] not in map_tasks]
    reduce_tasks = {c["task"] for c in reduce_calls}
    if len(map_tasks) != n_map:
        raise Fail(
            M("map_tasks", n=len(map_tasks), records=len(PARALLEL_CORPUS), n_map=n_map),
            replay,
        )
    if not 1 <= len(reduce_tasks) <= n_reduce:
        raise Fail(
            M("reduce_tasks", n=len(reduce_tasks), n_reduce=n_reduce),
            replay,
        )
    by_key = _grouped(reduce_calls, "target", "task")  # key -> the reduce tasks that reduced it
    split = sorted((k for k, tasks in by_key.items() if len(tasks) > 1), key=repr)
    if split:
        raise Fail(
            M("split_key", word=repr(split[0]), n=len(by_key[split[0]])),
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
                M("wrong_reducer", a=repr(a), b=repr(b), pa=_r(part[a]), pb=_r(part[b]), n_reduce=n_reduce),
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
                M("not_parallel", kind=kind, seen=seen),
                replay,
            )
