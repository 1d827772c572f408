"""What a probed word-count run must show, shared by notebook 04's hidden grader and its replays.

A probed run is ``run_mapreduce`` given map_fn / reduce_fn probes (``ch13lib.mapreduce_probe``) that
log which process and Ray task ran each call, inject worker deaths and exceptions on a schedule,
and meet at a barrier; its observation is plain data (the returned mapping's entries, every call,
the faults that fired, what Ray's GCS recorded). The hidden grader judges the observations the
grading subject sends it with these functions; ``ch13lib.mapreduce.check_run`` judges a run made in
the notebook with the same functions, so a replay pasted after the answer cell says what the
feedback said. This module imports neither Ray nor the probes: the grader's process runs no Ray.
"""

from __future__ import annotations

import collections
import random

from ch13lib.lang import Both, Messages

MARK = "InjectedFault"  # in the message of every exception the probes raise (ch13lib.mapreduce_probe.MARK)
CRASH_SEED = 13_04  # the crash runs' weights per word (and the grader's schedule) are drawn from it

# What these checks say, in the course's language (ch13lib/lang.py).
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
        "第一次尝试处理记录 {record} 时, 在 map_fn 为它产生了 {after} 个键值对之后, {what}",
        "on the first attempt at record {record}, after map_fn emitted {after} of its key-value pairs, {what}",
    ),
    fault_reduce=(
        "对键 {word} 的第一次 reduce_fn 调用中, {what}",
        "on the first reduce_fn call for key {word}, {what}",
    ),
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


class NotCounts(Exception):
    """run_mapreduce returned something that is not a {word (str): count (int)} mapping."""

    def __init__(self, problem: Both) -> None:
        super().__init__(str(problem))
        self.problem = problem


def joined(parts, sep: Both | str = "; ") -> Both:
    """Phrases (each a Both, or a str for both languages) joined in each language by ``sep``."""
    side = lambda x, i: x[i] if isinstance(x, Both) else str(x)  # noqa: E731
    return Both(*(side(sep, i).join(side(p, i) for p in parts) for i in (0, 1)))


def described(x) -> bool:
    """A value the probes could only describe (ch13lib.mapreduce_probe.shown)."""
    return type(x) is dict and "repr" in x


def r(x) -> str:
    """repr() of a value as the probes sent it (described values show their own repr)."""
    if described(x):
        return str(x["repr"])
    if type(x) is tuple:
        inner = ", ".join(r(v) for v in x)
        return f"({inner},)" if len(x) == 1 else f"({inner})"
    if type(x) is list:
        return "[" + ", ".join(r(v) for v in x) + "]"
    return repr(x)


def _typename(x) -> str:
    return str(x["type"]) if described(x) else type(x).__name__


def plain(result, what: str) -> dict:
    """The returned mapping (``{"type", "items"}``, as the probes send it) as a plain {str: int}
    dict; NotCounts when it is no such mapping."""
    if result.get("type") != "dict":
        raise NotCounts(M.both("not_dict", what=what, type=result.get("type")))
    out = {}
    for key, value in result["items"]:
        if type(key) is not str or type(value) is not int:
            raise NotCounts(
                M.both(
                    "bad_entry",
                    what=what,
                    word=r(key),
                    value=r(value),
                    key_type=_typename(key),
                    value_type=_typename(value),
                )
            )
        out[key] = value
    return out


def diff(want: dict, got: dict, limit: int = 6, line=None) -> Both:
    """The keys whose counts differ, one ``line(key, wanted, got)`` each (None: missing)."""
    line = line or (lambda key, w, g: M.both("diff_line", word=repr(key), want=_or_missing(w), got=_or_missing(g)))
    lines = [
        line(k, want.get(k), got.get(k)) for k in sorted(set(want) | set(got), key=repr) if want.get(k) != got.get(k)
    ]
    more = [M.both("diff_more", n=len(lines) - limit)] if len(lines) > limit else []
    return joined([joined(lines[:limit]), *more], "")


def _or_missing(x) -> Both | str:
    return M.both("missing") if x is None else str(x)


def count(records) -> dict:
    return dict(collections.Counter(w for rec in records for w in rec.split()))


def crash_weights(records) -> dict:
    """What map_fn emits per word in the crash runs: (word, w), w from 2 to 6, fixed per word. A
    driver that made up a failed map task's pairs (record.split(), each worth 1) and merely called
    map_fn again in a throwaway task would have the right counts with unit weights; with these,
    made-up pairs show in the counts. (A failed reduce task's sum the driver can still compute itself:
    a reduce_fn that is not a plain sum would break combiners, which the contract allows.)"""
    rng = random.Random(CRASH_SEED)
    return {w: rng.randint(2, 6) for w in sorted(count(records))}


def counts_problem(got: dict, want: dict, value: str = "one") -> Both | None:
    """What is wrong with the counts of a run without faults (``value``: what map_fn emitted per
    word, 1 or len(word)), or None."""
    if got == want:
        return None
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
    return M.both("wrong_counts", diff=diff(want, got), extra=joined(extra, ""))


def want_counts(records, value="one") -> dict:
    """The counts of ``records`` when map_fn emits (word, 1), (word, len(word)) (``value="len"``)
    or (word, value[word]) (a dict of weights)."""
    out: dict = {}
    for rec in records:
        for w in rec.split():
            if type(value) is dict:
                out[w] = out.get(w, 0) + value.get(w, 1)
            else:
                out[w] = out.get(w, 0) + (1 if value == "one" else len(w))
    return out


def in_driver(obs) -> list:
    """The probe calls that ran outside any Ray task, or in the driver's process."""
    return [c for c in obs["calls"] if c["task"] is None or c["pid"] == obs["driver_pid"]]


def grouped(calls, by: str, what: str) -> dict:
    """``{call[by]: the set of call[what]}`` over the probe calls."""
    out = collections.defaultdict(set)
    for c in calls:
        out[c[by]].add(c[what])
    return out


# ---------------------------------------------------------------------------------------------
# A run with scheduled faults


def crash_label(records, map_faults: dict, reduce_faults: dict) -> Both:
    """What a fault schedule does, in a few words."""
    if map_faults and reduce_faults:
        return M.both("label_both")
    if map_faults:
        record, (action, _) = next(iter(map_faults.items()))
        if action == "raise":
            return M.both("label_map_raises")
        return M.both("label_last" if records and record == records[-1] else "label_map")
    action = next(iter(reduce_faults.values()))[0] if reduce_faults else "exit"
    return M.both("label_reduce_raises" if action == "raise" else "label_reduce")


def fault_text(map_faults: dict, reduce_faults: dict) -> Both:
    parts = []
    for record, (action, after) in map_faults.items():
        what = M.both("map_exit" if action == "exit" else "map_raise")
        parts.append(M.both("fault_map", record=repr(record), after=after, what=what))
    for key, (action, _) in reduce_faults.items():
        what = M.both("reduce_exit" if action == "exit" else "reduce_raise")
        parts.append(M.both("fault_reduce", word=repr(key), what=what))
    return joined(parts)


def _crash_line(weights: dict):
    def line(key, want, got) -> Both:
        """A wrong count of a crash run, in map_fn's pairs (each worth its word's weight)."""
        w = weights.get(key, 1)
        n = (want or 0) // w
        if got is None:
            return M.both("crash_missing", word=repr(key), n=n)
        if type(got) is int and got % w == 0:
            return M.both("crash_count", word=repr(key), n=n, got=got // w)
        return M.both("crash_whole", word=repr(key), got=r(got), w=w)

    return line


def crash_problem(obs: dict, records, map_faults: dict, reduce_faults: dict, weights: dict) -> Both | None:
    """What went wrong in a run of ``records`` with the scheduled faults, map_fn emitting (word,
    weights[word]) (``obs``: ch13lib.mapreduce_probe's observation of it), or None. NotCounts when
    it returned no {word: count} mapping."""
    label = crash_label(records, map_faults, reduce_faults)
    want = {k: n * weights[k] for k, n in count(records).items()}
    raising = any(a == "raise" for a, _ in list(map_faults.values()) + list(reduce_faults.values()))
    driver = in_driver(obs)
    if driver:
        return M.both("crash_in_driver", label=label, n=len(driver))
    fired = {(kind, target) for kind, target in obs["fired"]}
    not_fired = [t for t in map_faults if ("map", t) not in fired] + [
        t for t in reduce_faults if ("reduce", t) not in fired
    ]
    error = obs["error"]
    if error is not None:
        text = f"{error['type']}: {error['message']}"
        if raising and MARK in text:
            return None  # an exception in the user's function may propagate: that is not a wrong count
        crashed = "WorkerCrashedError" in text or "worker died" in text.lower() or "RayTaskError" in error["type"]
        if crashed and not raising:
            return M.both("gave_up", label=label, type=error["type"])
        first = error["message"].strip().splitlines()[:1]
        return M.both("crash_raised", label=label, type=error["type"], first=first[0] if first else "")
    if not_fired:
        return M.both("not_fired", label=label, target=repr(not_fired[0]))
    got = plain(obs["result"], "run_mapreduce")
    deaths = sum(1 for t, f in map_faults.items() if f[0] == "exit" and ("map", t) in fired)
    deaths += sum(1 for t, f in reduce_faults.items() if f[0] == "exit" and ("reduce", t) in fired)
    if got == want and obs.get("failed_attempts", 0) < deaths:
        # the markers are files the cell can make first: Ray's own record decides
        return M.both("no_deaths", label=label, deaths=deaths, failed=obs.get("failed_attempts", 0))
    # Each fired fault's target must reach map_fn/reduce_fn again, in a later attempt: a driver that
    # made up a failed task's pairs (record.split()) or its sums would have the right counts with no
    # retry. The first attempt is the one that failed (a marker file decides).
    calls = collections.Counter((c["kind"], c["target"]) for c in obs["calls"])
    not_redone = [(kind, target) for kind, target in sorted(fired, key=repr) if calls[(kind, target)] < 2]
    if got == want and not_redone:
        kind, target = not_redone[0]
        return M.both("not_redone", label=label, kind=kind, target=repr(target))
    if got != want:
        high = [k for k in want if got.get(k, 0) > want[k]]
        low = [k for k in want if got.get(k, 0) < want[k]]
        why = []
        if high:
            why.append(M.both("too_high"))
        if low:
            why.append(M.both("too_low"))
        if any(k in got and (type(got[k]) is not int or got[k] % weights.get(k, 1)) for k in want):
            why = [M.both("made_up")]  # (made-up pairs: "too high" or "too low" would say nothing true)
        return M.both("crash_wrong", label=label, diff=diff(want, got, line=_crash_line(weights)), why=joined(why))
    return None


# ---------------------------------------------------------------------------------------------
# A run in Ray tasks, in parallel


def parallel_problem(obs: dict, records, n_map: int, n_reduce: int, partition_of) -> Both | None:
    """What is wrong with where a run of ``records`` did its work (``obs``: a probed run with a
    2-party barrier), or None: every call in a Ray task, n_map map tasks, at most n_reduce reduce
    tasks, each key reduced by one, the one ``partition_of(keys)`` (``{key: partition(key,
    n_reduce)}``, as the probes show values) names, two map and two reduce tasks at once.
    NotCounts when it returned no {word: count} mapping."""
    calls, report = obs["calls"], obs["barrier"] or {}
    got = plain(obs["result"], "run_mapreduce")
    driver = in_driver(obs)
    if driver:
        kinds = sorted({c["kind"] + "_fn" for c in driver})
        return M.both("par_in_driver", kinds=joined(kinds, M.both("and_")), n=len(driver), total=len(calls))
    want = count(records)
    if got != want:
        return M.both("wrong_counts_plain", diff=diff(want, got))
    map_tasks = {c["task"] for c in calls if c["kind"] == "map"}
    reduce_calls = [c for c in calls if c["kind"] == "reduce" and c["task"] not in map_tasks]
    reduce_tasks = {c["task"] for c in reduce_calls}
    if len(map_tasks) != n_map:
        return M.both("map_tasks", n=len(map_tasks), records=len(records), n_map=n_map)
    if not 1 <= len(reduce_tasks) <= n_reduce:
        return M.both("reduce_tasks", n=len(reduce_tasks), n_reduce=n_reduce)
    by_key = grouped(reduce_calls, "target", "task")  # key -> the reduce tasks that reduced it
    split = sorted((k for k, tasks in by_key.items() if len(tasks) > 1), key=repr)
    if split:
        return M.both("split_key", word=repr(split[0]), n=len(by_key[split[0]]))
    by_task = grouped(reduce_calls, "task", "target")  # reduce task -> the keys it reduced
    part = partition_of(sorted(by_key, key=repr))
    order = lambda p: p if type(p) is int else -1  # noqa: E731 - sort key of a shown value
    # Tasks in a fixed order (by their keys), not in the order Ray happened to run them.
    for keys in sorted(by_task.values(), key=lambda ks: sorted(map(repr, ks))):
        if len({r(part[k]) for k in keys}) > 1:
            a = sorted(keys, key=lambda k: (order(part[k]), k))[0]
            b = sorted(keys, key=lambda k: (-order(part[k]), k))[0]
            return M.both("wrong_reducer", a=repr(a), b=repr(b), pa=r(part[a]), pb=r(part[b]), n_reduce=n_reduce)
    for kind in ("map", "reduce"):
        proven, seen, _ = report.get(kind, (False, 0, []))
        # the barrier's arrivals are the probes' word, which the cell can speak too (a made-up
        # second party): two of the tasks that proved it must have run at once by Ray's own record
        proven = proven and obs.get("ran_together", {}).get(kind, False)
        if not proven:
            return M.both("not_parallel", kind=kind, seen=seen)
    return None


# ---------------------------------------------------------------------------------------------
# A run that raised


def raised_problem(error: dict) -> Both:
    """run_mapreduce raised ``error`` ({"type", "message"}) where nothing was scheduled to fail."""
    first = (error["message"].strip().splitlines() or [""])[0]
    return M.both("raised", type=error["type"], first=first)
