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
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import time

from ch13lib import grading
from ch13lib.lang import FRAME, Both, Messages, say

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


# What the self-check says, in the course's language (ch13lib/lang.py).
M = Messages(
    ray_failed=(
        "Ray 没有启动 (尝试了 {tries} 次; 最后一次报错: {first})。这是机器的问题 (负载过高?), 不是你的代码的问题: "
        "请重新运行该单元 (助教会重新评分已评分的单元)。",
        "Ray did not start ({tries} tries; the last said: {first}). This is the machine's fault "
        "(overloaded?), not your code's: run the cell again (a TA grades a graded cell again).",
    ),
    and_=(" 和 ", " and "),
    in_ray_task=("{line} (在一个 Ray 任务中)", "{line} (in a Ray task)"),
    not_defined_yet=(
        "✘ 尚未定义: {missing} — 请先运行答案单元 (它必须定义 {names})。",
        "✘ not defined yet: {missing} — run the answer cell first (it must define {names}).",
    ),
    stub_calls_one=(
        "{label}: 尚未实现 (它调用的 {stubs} 仍然抛出 NotImplementedError)",
        "{label}: not implemented yet ({stubs}, which it calls, still raises NotImplementedError)",
    ),
    stub_calls_many=(
        "{label}: 尚未实现 (它调用的 {stubs} 仍然抛出 NotImplementedError)",
        "{label}: not implemented yet ({stubs}, which it calls, still raise NotImplementedError)",
    ),
    stub=(
        "{label}: 尚未实现 (桩代码仍然抛出 NotImplementedError)",
        "{label}: not implemented yet (the stub still raises NotImplementedError)",
    ),
    raised=("{label}: 抛出了 {error}", "{label}: raised {error}"),
    uses_undefined=(
        "{who} 使用了 `{name}`, 但它没有定义: 请在答案单元中定义或导入它, 运行该单元, 然后重新运行本检查。",
        "{who} uses `{name}`, which is not defined: define or import it in the answer cell, "
        "run the cell, then run this check again.",
    ),
    worker_died=(
        "一个 worker 崩溃了, 它的任务没有重新运行: 给远程函数设置 max_retries (例如 @ray.remote(max_retries=3)), "
        "或者自己重新提交失败的任务。",
        "a worker died and its task was not run again: give the remote functions max_retries "
        "(e.g. @ray.remote(max_retries=3)), or resubmit a failed task yourself.",
    ),
    map_check=(
        "map_fn({record}) 对 record.split() 的每个单词给出一个 (word, 1)",
        "map_fn({record}) gives one (word, 1) per word of record.split()",
    ),
    map_fix=(
        "应为 {want}, 实际为 {got}。单词就是 record.split() 的结果: 保留大小写和标点。",
        "expected {want}, got {got}. Words are exactly record.split(): keep case and punctuation.",
    ),
    reduce_fix=(
        "实际为 {got}; values 可以是任何 int 的可迭代对象 (迭代器没有 len())。",
        "got {got}; values may be any iterable of ints (an iterator has no len()).",
    ),
    part_range=("partition(key, 3) 的结果在 range(3) 内", "partition(key, 3) is in range(3)"),
    part_range_fix=("对 {keys} 实际得到 {got}", "got {got} for {keys}"),
    spread=(
        "partition 把 {n} 个不同的键分散到 range(2) 和 range(4) 的全部归约器上",
        "partition spreads {n} different keys over all of range(2) and range(4)",
    ),
    spread_fix=(
        "partition(key, {n}) 只把它们发给了归约器 {used}: 归约工作没有分散开。"
        "请对键做哈希 (例如 zlib.crc32(key.encode()) % n_reduce)。",
        "partition(key, {n}) sends them to reducer(s) {used} only: the reduce work is not spread. "
        "Hash the key (e.g. zlib.crc32(key.encode()) % n_reduce).",
    ),
    fresh_label=(
        "在 PYTHONHASHSEED={seed} 的进程中运行 partition",
        "partition in a process with PYTHONHASHSEED={seed}",
    ),
    stable=(
        "partition 在哈希种子不同的进程中给出相同的结果",
        "partition gives the same answer in processes with different hash seeds",
    ),
    stable_fix=(
        "Python 对 str 的 hash() 在不同进程中会变化: 请使用稳定的哈希, 例如 zlib.crc32(key.encode()) 或 hashlib。",
        "Python's hash() of a str changes from process to process: use a stable hash "
        "such as zlib.crc32(key.encode()) or hashlib.",
    ),
    counts5=(
        "run_mapreduce 在 n_map={n_map}, n_reduce={n_reduce} 时正确统计 5 条记录的语料",
        "run_mapreduce counts a 5-record corpus with n_map={n_map}, n_reduce={n_reduce}",
    ),
    expected_got=("应为 {want}\n      实际为 {got}", "expected {want}\n      got {got}"),
    got_only=("实际为 {got}", "got {got}"),
    shape_label=(
        "在 {n} 条记录上运行 run_mapreduce (n_map={n_map}, n_reduce={n_reduce})",
        "run_mapreduce on {n} records with n_map={n_map}, n_reduce={n_reduce}",
    ),
    die_label=("映射 worker 崩溃时的 run_mapreduce", "run_mapreduce with a map worker that dies"),
    die_check=(
        "在产生 {record} 的 2 个键值对之后被杀死的 worker 会被重试; 每条记录恰好计数一次",
        "a worker killed after emitting 2 pairs of {record} is retried; every record counted once",
    ),
    never_died=(
        "worker 从未崩溃: map_fn 从未在 Ray worker 中对 {record} 调用过{where}。每条记录都必须在映射任务 "
        "(@ray.remote) 中经过传给你的 map_fn。",
        "the worker never died: map_fn was never called on {record} inside a Ray worker{where}. Every record "
        "must go through the map_fn you are given, in a map task (@ray.remote).",
    ),
    in_notebook=(
        " (有 {n} 次 map_fn 调用在本 notebook 的进程中运行)",
        " ({n} map_fn calls ran in this notebook's process)",
    ),
    raise_label=("map_fn 抛出异常时的 run_mapreduce", "run_mapreduce when map_fn raises"),
    raise_text=(
        "当 map_fn 在第一次尝试处理 {victim} 时 (产生 2 个键值对之后) 抛出异常, run_mapreduce 会重试该任务或把错误"
        "传递出去{how}",
        "when map_fn raises on its first attempt at {victim} (after 2 pairs), run_mapreduce retries the task or "
        "passes the error on{how}",
    ),
    passed_on=(" (它把错误传递出去了)", " (it passed it on)"),
    retried=(" (它重试了)", " (it retried)"),
    never_ran_map=(
        "map_fn 从未在 Ray worker 中对 {victim} 运行: 请在映射任务中, 对每条记录调用传给你的 map_fn。",
        "map_fn never ran on {victim} inside a Ray worker: call the map_fn you are given, on every record, "
        "inside a map task.",
    ),
    raise_wrong=(
        "它返回的计数不对: 应为 {want}\n      实际为 {got}\n      不要在任务内部捕获并跳过错误 "
        "(失败记录的键值对会丢失或只计了一半): 让 Ray 重试整个任务 (@ray.remote(retry_exceptions=True)), "
        "或者让错误传到调用者。",
        "it returned wrong counts: expected {want}\n      got {got}\n      Do not catch and skip errors inside a "
        "task (the failed record's pairs are lost or half counted): let Ray retry the whole task "
        "(@ray.remote(retry_exceptions=True)), or let the error reach the caller.",
    ),
    reduce_die_label=("归约 worker 崩溃时的 run_mapreduce", "run_mapreduce with a reduce worker that dies"),
    reduce_die_check=(
        "在 reduce_fn('the', ...) 中被杀死的 worker 会被重试; 每个键恰好计数一次",
        "a worker killed in reduce_fn('the', ...) is retried; every key counted once",
    ),
    reduce_never=(
        "reduce_fn 从未在 Ray worker 中对 'the' 运行: 请在归约任务中, 对每个键调用传给你的 reduce_fn。",
        "reduce_fn never ran on 'the' inside a Ray worker: call the reduce_fn you are given, on every key, inside "
        "a reduce task.",
    ),
    stubs_left_one=(
        "{names} 仍然抛出 NotImplementedError (桩代码)",
        "{names} still raises NotImplementedError (the stub)",
    ),
    stubs_left_many=(
        "{names} 仍然抛出 NotImplementedError (桩代码)",
        "{names} still raise NotImplementedError (the stub)",
    ),
    undefined_one=("{names} 没有定义 (NameError)", "{names} is not defined (NameError)"),
    undefined_many=("{names} 没有定义 (NameError)", "{names} are not defined (NameError)"),
    not_finished=(
        "✘ 尚未完成: {parts}。请在答案单元中写好缺少的代码, 运行它, 然后重新运行本检查。",
        "✘ not finished yet: {parts}. Write the missing code in the answer cell, run it, then run this check again.",
    ),
    counts_given=(
        "run_mapreduce 用传给它的 map_fn 和 reduce_fn 正确统计 {n} 条记录",
        "run_mapreduce counts {n} records with the map_fn and reduce_fn it is given",
    ),
    in_ray=(
        "map_fn 和 reduce_fn 在 Ray 任务中运行, 而不是在驱动进程中",
        "map_fn and reduce_fn run inside Ray tasks, not in the driver",
    ),
    in_ray_fix=(
        "{m}/{mt} 次 map_fn 调用和 {r}/{rt} 次 reduce_fn 调用在本 notebook 的进程中运行: 请在 @ray.remote 函数 "
        "(用 .remote() 启动) 中调用它们。",
        "{m} of {mt} map_fn calls and {r} of {rt} reduce_fn calls ran in this notebook's process: call them inside "
        "@ray.remote functions (started with .remote()).",
    ),
    given=(
        "run_mapreduce 对每条记录和每个键调用传给它的 map_fn 和 reduce_fn",
        "run_mapreduce calls the map_fn and reduce_fn it is given, on every record and every key",
    ),
    given_fix=(
        "传入的 map_fn / reduce_fn 从未见到 {lost}: 请调用作为参数传入的函数 (隐藏测试会传入别的函数), "
        "而不是单元中同名的函数。",
        "the map_fn / reduce_fn passed in never saw {lost}: call the functions given as arguments (a hidden test "
        "passes in others), not the ones of the same name in the cell.",
    ),
    mapped_by=("{n} 条记录由 n_map={n_map} 个 Ray 任务映射", "the {n} records are mapped by n_map={n_map} Ray tasks"),
    map_tasks_fix=(
        "对 {records} 条记录 (n_map={n_map}), map_fn 在 {n} 个不同的 Ray 任务中被调用: 请把记录分成 n_map 个映射任务 "
        "(例如 records[i::n_map])。",
        "map_fn was called in {n} different Ray task(s) for {records} records with n_map={n_map}: split the records "
        "into n_map map tasks (e.g. records[i::n_map]).",
    ),
    map_parallel=("映射任务并行运行", "the map tasks run in parallel"),
    map_barrier=(
        "第一次 map_fn 调用在屏障处等待了 {wait} s, 等第二个映射任务启动, 却没有等到 (总共只有 {seen} 个映射任务"
        "到达屏障): 请先用 .remote() 提交所有映射任务, 再对其中任何一个调用 ray.get。",
        "the first map_fn call waited {wait} s at a barrier for a second map task to start, and none did ({seen} "
        "map task(s) reached it in all): submit all map tasks with .remote() before calling ray.get on any of them.",
    ),
    reduce_tasks_fix=(
        "n_reduce={n_reduce} 时, reduce_fn 在 {n} 个不同的 Ray 任务中被调用: 请运行 n_reduce 个归约任务, "
        "每个归约 partition() 分给它的键。",
        "reduce_fn was called in {n} different Ray task(s) with n_reduce={n_reduce}: run n_reduce reduce tasks, "
        "each reducing the keys partition() gives it.",
    ),
    split_fix=(
        "键 {k} 在 {n} 个不同的归约任务中被归约: 一个键必须只发给一个归约器, 即 partition(key, n_reduce)。",
        "key {k} was reduced in {n} different reduce tasks: a key must go to exactly one reducer, "
        "partition(key, n_reduce).",
    ),
    wrong_reducer_fix=(
        "一个归约任务归约了键 {a} 和 {b}, 但 partition() 给它们的是 {pa} 和 {pb} (n_reduce={n_reduce}): "
        "请用本单元的 partition() 把每个键值对发给归约任务 partition(key, n_reduce)。",
        "one reduce task reduced keys {a} and {b}, but partition() gives them {pa} and {pb} (n_reduce={n_reduce}): "
        "send every pair to reduce task partition(key, n_reduce), with the partition() of this cell.",
    ),
    reduce_by_one=(
        "每个键由 n_reduce={n_reduce} 个归约任务中的一个归约, 即 partition(key) 指定的那个",
        "each key is reduced by one of n_reduce={n_reduce} reduce tasks, the one partition(key) names",
    ),
    reduce_parallel=("归约任务并行运行", "the reduce tasks run in parallel"),
    reduce_barrier=(
        "第一次 reduce_fn 调用在屏障处等待了 {wait} s, 等第二个归约任务启动, 却没有等到 (总共只有 {seen} 个归约任务"
        "到达屏障): 请先用 .remote() 提交所有归约任务, 再对其中任何一个调用 ray.get{tail}",
        "the first reduce_fn call waited {wait} s at a barrier for a second reduce task to start, and none did "
        "({seen} reduce task(s) reached it in all): submit all reduce tasks with .remote() before calling ray.get "
        "on any of them{tail}",
    ),
    seed_process=("PYTHONHASHSEED={seed} 的新进程", "a fresh process with PYTHONHASHSEED={seed}"),
    this_process=("本 notebook 的进程", "this notebook's process"),
    unstable=(
        "对 n = {ns}, partition({word}, n) 在{a_where}中给出 {a}, 在{b_where}中却给出 {b}",
        "partition({word}, n) for n = {ns} gave {a} in {a_where} but {b} in {b_where}",
    ),
    needs_partition=(
        "check_run(..., parallel=True) 需要 partition=partition: 它检查每个键由 partition() 指定的归约任务归约",
        "check_run(..., parallel=True) needs partition=partition: it checks that each key is reduced by the reduce "
        "task partition() names",
    ),
    tail_same=(
        "; 而且 partition() 把每个键都发给了同一个归约器 (见上)。",
        "; and partition() sends every key to the same reducer (see above).",
    ),
)


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
    raise RayDidNotStart(M("ray_failed", tries=START_TRIES, first=first))


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


def _names(items) -> Both:
    items = [f"`{x}`" for x in items]
    if len(items) == 1:
        return Both(items[0], items[0])
    return Both(*(", ".join(items[:-1]) + sep + items[-1] for sep in M.both("and_")))


def _side(text, i: int) -> str:
    """Side ``i`` (0: Chinese, 1: English) of a Both; a str (code) reads the same in both."""
    return text[i] if isinstance(text, Both) else str(text)


def _error_text(e: BaseException) -> Both | str:
    """``Type: message`` on one line. An error raised inside a Ray task shows the last line of the
    task's traceback: the exception the task itself raised."""
    lines = [line.strip() for line in str(e).strip().splitlines() if line.strip()]
    name = type(e).__name__
    if not lines:
        return name
    if name.startswith("RayTaskError"):
        return M.both("in_ray_task", line=lines[-1])
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
        print(M("not_defined_yet", missing=", ".join(missing), names=_names(names)))
        return False
    map_fn, reduce_fn, partition, run_mapreduce = (namespace[n] for n in names)
    ok = True
    lines: list[str] = []  # printed at the end: no ✔ for a cell that turns out to be unfinished
    stubs: list[str] = []  # functions that still raise NotImplementedError
    undefined: list[str] = []  # names the cell's functions use but nothing defines (NameError)
    halt: list[str] = []  # run_mapreduce cannot run yet (a stub it calls)

    def report(passed: bool, text, fix="") -> None:
        """One ✔/✘ line (text and fix: a Both, or a str that reads the same in both languages); under
        ``both`` the Chinese line (and its fix) first, then the English."""
        nonlocal ok
        ok &= passed
        mark = "✔ " if passed else "✘ "
        zh, en = (
            mark + _side(text, i) + ("" if passed or not _side(fix, i) else f"\n    → {_side(fix, i)}") for i in (0, 1)
        )
        lines.append(zh if zh == en else say(zh, en))

    def attempt(label, func, who):
        try:
            return True, func()
        except NotImplementedError as e:
            if type(e).__name__.startswith("RayTaskError") and stubs:
                # raised in a task by a stub it calls (partition, say), already reported above
                key = "stub_calls_one" if len(stubs) == 1 else "stub_calls_many"
                report(False, M.both(key, label=label, stubs=_names(stubs)))
                halt.append(who)
            else:
                report(False, M.both("stub", label=label))
                if who not in stubs:
                    stubs.append(who)
        except NameError as e:
            name = _undefined_name(e)
            if name not in undefined:
                undefined.append(name)
            report(
                False,
                M.both("raised", label=label, error=_error_text(e)),
                M.both("uses_undefined", who=who, name=name),
            )
        except Exception as e:  # noqa: BLE001 — show the student what their code raised
            crashed = "WorkerCrashedError" in type(e).__name__ or "ray.exceptions.WorkerCrashedError" in str(e)
            report(
                False,
                M.both("raised", label=label, error=_error_text(e)),
                M.both("worker_died") if crashed else "",
            )
        return False, None

    record = "The cat, the CAT\tand\u3000数据  数据"
    want = [(w, 1) for w in record.split()]
    done, got = attempt("map_fn", lambda: list(map_fn(record)), "map_fn")
    if done:
        report(
            sorted(got) == sorted(want),
            M.both("map_check", record=repr(record)),
            M.both("map_fix", want=want, got=got),
        )
    done, got = attempt("reduce_fn", lambda: reduce_fn("cat", iter([1, 2, 3])), "reduce_fn")
    if done:
        report(
            tuple(got) == ("cat", 6) if isinstance(got, tuple) else False,
            "reduce_fn('cat', iter([1, 2, 3])) == ('cat', 6)",
            M.both("reduce_fix", got=repr(got)),
        )
    keys = ["the", "The", "cat", "über", "数据", "a,b"]
    spread_ok = True
    done, got = attempt("partition", lambda: [partition(k, 3) for k in keys], "partition")
    if done:
        report(
            all(isinstance(p, int) and 0 <= p < 3 for p in got),
            M.both("part_range"),
            M.both("part_range_fix", got=got, keys=keys),
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
                M.both("spread", n=len(SPREAD_KEYS)),
                M.both("spread_fix", n=n, used=used),
            )
        runs = []
        for seed in (1, 2):
            done2, out = attempt(
                M.both("fresh_label", seed=seed),
                lambda seed=seed: _partition_in_fresh_process(partition, seed),
                "partition",
            )
            if done2:
                runs.append(out)
        if len(runs) == 2:
            report(
                runs[0] == runs[1],
                M.both("stable"),
                M.both("stable_fix"),
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
                M.both("counts5", n_map=n_map, n_reduce=n_reduce),
                M.both("expected_got", want=want, got=got),
            )
    done, got = run("run_mapreduce([])", [], reference_map_fn, reference_reduce_fn, 4, 2)
    if done:
        report(got == {}, "run_mapreduce([]) == {}", M.both("got_only", got=repr(got)))

    # Where the work runs: every call logged with its process and Ray task; the first map_fn
    # (reduce_fn) call waits at a barrier until a second map (reduce) task arrives.
    shape, n_map, n_reduce = SHAPE_CORPUS, SHAPE_MAPS, SHAPE_REDUCES
    shape_want = dict(collections.Counter(w for r in shape for w in r.split()))
    done, obs = observed(
        M.both("shape_label", n=len(shape), n_map=n_map, n_reduce=n_reduce),
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
        done, got = run(M.both("die_label"), corpus, die, reference_reduce_fn, 2, 2)
        if done:
            died = os.path.exists(os.path.join(folder, "died"))
            in_driver = [c for c in _calls(folder) if c[0] == os.getpid() or c[1] == "None"]
            report(
                died and got == want,
                M.both("die_check", record=repr(corpus[4])),
                M.both("expected_got", want=want, got=got)
                if died
                else M.both(
                    "never_died",
                    record=repr(corpus[4]),
                    where=M.both("in_notebook", n=len(in_driver)) if in_driver else "",
                ),
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
        done, obs = attempt(M.both("raise_label"), raising, "run_mapreduce")
        if done:
            text = M.both("raise_text", victim=repr(victim), how="")
            if "raised" in obs:
                report(True, M.both("raise_text", victim=repr(victim), how=M.both("passed_on")))
            elif ["map", victim] not in obs["fired"]:
                report(
                    False,
                    text,
                    M.both("never_ran_map", victim=repr(victim)),
                )
            else:
                got = obs["result"]
                report(
                    got == want,
                    M.both("raise_text", victim=repr(victim), how=M.both("retried")) if got == want else text,
                    M.both("raise_wrong", want=want, got=got),
                )

    # A reduce worker dies on the first reduce_fn call for one key.
    done, obs = observed(M.both("reduce_die_label"), corpus, 2, 2, reduce_faults={"the": ("exit", 0)})
    if done:
        fired = ["reduce", "the"] in obs["fired"]
        report(
            fired and obs["result"] == want,
            M.both("reduce_die_check"),
            M.both("expected_got", want=want, got=obs["result"]) if fired else M.both("reduce_never"),
        )

    ray_ok = ray.is_initialized()
    if stubs or undefined:
        # Unfinished: the ✘ lines, and what is left to do (no ✔: the cell still raises).
        print("\n".join(line for line in lines if not line.startswith("✔")))
        parts = []
        if stubs:
            key = "stubs_left_one" if len(stubs) == 1 else "stubs_left_many"
            parts.append(M.both(key, names=_names(stubs)))
        if undefined:
            key = "undefined_one" if len(undefined) == 1 else "undefined_many"
            parts.append(M.both(key, names=_names(undefined)))
        print(M("not_finished", parts=Both(*("; ".join(p[i] for p in parts) for i in (0, 1)))))
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
        M.both("counts_given", n=len(records)),
        M.both("expected_got", want=want, got=got),
    )
    in_driver = [c for c in calls if c["task"] is None or c["pid"] == obs["driver_pid"]]
    where = {k: sum(c["kind"] == k for c in in_driver) for k in ("map", "reduce")}
    total = {k: sum(c["kind"] == k for c in calls) for k in ("map", "reduce")}
    report(
        not in_driver,
        M.both("in_ray"),
        M.both("in_ray_fix", m=where["map"], mt=total["map"], r=where["reduce"], rt=total["reduce"]),
    )
    mapped = {c["target"] for c in calls if c["kind"] == "map"}
    reduced = {c["target"] for c in calls if c["kind"] == "reduce"}
    lost = [r for r in records if r not in mapped] + [k for k in want if k not in reduced]
    report(
        not lost,
        M.both("given"),
        M.both("given_fix", lost=repr(lost[0] if lost else None)),
    )
    if where["map"] == 0 and total["map"]:
        map_tasks = {c["task"] for c in calls if c["kind"] == "map"}
        report(
            len(map_tasks) == n_map,
            M.both("mapped_by", n=len(records), n_map=n_map),
            M.both("map_tasks_fix", n=len(map_tasks), records=len(records), n_map=n_map),
        )
        proven, seen, _ = barrier.get("map", (False, 0, []))
        report(
            proven and obs.get("ran_together", {}).get("map", False),  # by Ray's own record, as the grader
            M.both("map_parallel"),
            M.both("map_barrier", wait=f"{BARRIER_WAIT_S:.0f}", seen=seen),
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
            fix = M.both("reduce_tasks_fix", n=len(by_task), n_reduce=n_reduce)
        elif split:
            fix = M.both("split_fix", k=repr(split[0]), n=len(by_key[split[0]]))
        else:
            try:
                part = {k: partition(k, n_reduce) for k in by_key}
            except Exception:  # noqa: BLE001 — partition's own checks above report it
                part = None
            for keys in sorted(by_task.values(), key=lambda ks: sorted(map(repr, ks))):
                if part is not None and len({repr(part[k]) for k in keys}) > 1:
                    ordered = sorted(keys, key=lambda k: (repr(part[k]), k))
                    a, b = ordered[0], ordered[-1]
                    fix = M.both(
                        "wrong_reducer_fix", a=repr(a), b=repr(b), pa=repr(part[a]), pb=repr(part[b]), n_reduce=n_reduce
                    )
                    break
        report(
            not fix,
            M.both("reduce_by_one", n_reduce=n_reduce),
            fix,
        )
        proven, seen, _ = barrier.get("reduce", (False, 0, []))
        report(
            proven and obs.get("ran_together", {}).get("reduce", False),  # by Ray's own record, as the grader
            M.both("reduce_parallel"),
            M.both(
                "reduce_barrier",
                wait=f"{BARRIER_WAIT_S:.0f}",
                seen=seen,
                tail=M.both("tail_same") if not spread_ok else Both("。", "."),
            ),
        )


# ---------------------------------------------------------------------------------------------
# Replays: a failing hidden test's feedback ends with one of these calls, which makes the same run
# in the notebook and judges it with the grader's own checks (ch13lib.word_count_checks).


def check_run(
    run_mapreduce,
    records,
    n_map: int = 4,
    n_reduce: int = 2,
    *,
    map_faults: dict | None = None,
    reduce_faults: dict | None = None,
    weighted: bool = False,
    value: str = "one",
    parallel: bool = False,
    partition=None,
) -> bool:
    """Run ``run_mapreduce(records, map_fn, reduce_fn, n_map, n_reduce)`` as a hidden test does, with
    map_fn / reduce_fn probes (ch13lib.mapreduce_probe) in place of the cell's own, and judge it as
    that test does. Prints one line (✔ passed / ✘ and what went wrong); returns True when it passes.

    ``map_faults`` / ``reduce_faults``: record / key -> (action, after): on the first attempt at it
    in a Ray worker, after ``after`` pairs, the worker dies (``"exit"``) or map_fn / reduce_fn raises
    (``"raise"``). ``weighted``: map_fn emits (word, w) with a fixed weight w of 2 to 6 per word (the
    crash runs' weights), else (word, 1), or (word, len(word)) with ``value="len"``. ``parallel``:
    the first map (reduce) call waits at a barrier for a second map (reduce) task, and every key
    must be reduced by reduce task ``partition(key, n_reduce)``."""
    from ch13lib import word_count_checks as checks

    if grading():
        print(FRAME("skipped"))
        return True
    if parallel and partition is None:
        raise TypeError(M("needs_partition"))
    records = list(records)
    map_faults, reduce_faults = dict(map_faults or {}), dict(reduce_faults or {})
    weights = checks.crash_weights(records) if weighted else None
    start_local_ray()
    from ch13lib import mapreduce_probe as probe

    label = M.both("shape_label", n=len(records), n_map=n_map, n_reduce=n_reduce)
    try:
        obs = probe.observe_run(
            run_mapreduce,
            records,
            n_map,
            n_reduce,
            map_faults,
            reduce_faults,
            barrier_guard_s=BARRIER_WAIT_S if parallel else None,
            value=weights if weighted else value,
        )
    except NotImplementedError:
        print(FRAME("stub_named", what="run_mapreduce"))
        return False
    try:
        if map_faults or reduce_faults:
            problem = checks.crash_problem(obs, records, map_faults, reduce_faults, weights or {})
        elif obs["error"] is not None:
            problem = checks.raised_problem(obs["error"])
        elif parallel:

            def partition_of(keys):
                return {k: probe.shown(partition(k, n_reduce)) for k in keys}

            problem = checks.parallel_problem(obs, records, n_map, n_reduce, partition_of)
        else:
            want = checks.want_counts(records, value)
            problem = checks.counts_problem(checks.plain(obs["result"], "run_mapreduce"), want, value)
    except checks.NotCounts as e:
        problem = e.problem
    if problem is None:
        print(f"✔ {label}")
        return True
    print(f"✘ {label}")
    print("\n".join(f"    {line}" for line in str(problem).splitlines()))
    return False


_ROWS_CHILD = (
    "import json, sys, ray.cloudpickle as cp\n"
    "f, keys, ns = cp.loads(sys.stdin.buffer.read())\n"
    "print(json.dumps([[f(k, n) for n in ns] for k in keys]))\n"
)


def _rows_in_fresh_process(partition, seed: int, keys, ns) -> list:
    """``[[partition(k, n) for n in ns] for k in keys]`` in a new Python process with PYTHONHASHSEED=seed."""
    from ray import cloudpickle

    run = subprocess.run(
        [sys.executable, "-c", _ROWS_CHILD],
        input=cloudpickle.dumps((partition, list(keys), list(ns))),
        capture_output=True,
        env=dict(os.environ, PYTHONHASHSEED=str(seed)),
        timeout=60,
    )
    if run.returncode != 0:
        raise RuntimeError(run.stderr.decode(errors="replace").strip().splitlines()[-1])
    return json.loads(run.stdout.decode().strip().splitlines()[-1])


def check_partition(partition, keys, *, spread=(), seeds=(1, 2), ns=(1, 2, 3, 4, 7, 16)) -> bool:
    """Check ``partition`` on ``keys`` as the hidden test does: for each n in ``spread``, the keys
    reach every reducer of range(n); and partition(key, n) for n in ``ns`` is the same in new
    processes with each hash seed of ``seeds`` and in this one (Ray workers are separate
    processes). Prints one line per check (✔ / ✘ and what went wrong); returns True when all pass."""
    if grading():
        print(FRAME("skipped"))
        return True
    ok = True
    keys = list(keys)
    for n in spread:
        used = sorted({partition(k, n) for k in keys}, key=repr)
        good = len(used) >= n
        ok &= good
        fix = "" if good else f"\n    → {M('spread_fix', n=n, used=used)}"
        print(("✔ " if good else "✘ ") + M("spread", n=len(keys)) + fix)
    if seeds:
        runs = [(M.both("seed_process", seed=s), _rows_in_fresh_process(partition, s, keys, ns)) for s in seeds]
        runs.append((M.both("this_process"), [[partition(k, n) for n in ns] for k in keys]))
        (a_where, first), found = runs[0], None
        for b_where, there in runs[1:]:
            found = found or next(
                ((k, a, b_where, b) for k, a, b in zip(keys, first, there) if a != b),
                None,
            )
        ok &= found is None
        line = ("✔ " if found is None else "✘ ") + M("stable")
        if found is not None:
            key, a, b_where, b = found
            ns_text = ", ".join(map(str, ns))
            why = M("unstable", ns=ns_text, word=repr(key), a=a, a_where=a_where, b=b, b_where=b_where)
            line += f"\n    → {why}\n    → {M('stable_fix')}"
        print(line)
    return ok
