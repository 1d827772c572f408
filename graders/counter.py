"""Hidden grader of `counter` (notebook 01): SafeCounter and count_with_threads.

Every test runs the student's cell under ch13lib.sched, the deterministic scheduler: the cell is
loaded afresh for every schedule, and every interleaving with at most 2 deviations from the
default schedule (delay bounding, close to CHESS's preemption bounding) is tried
(fewest first), then seeded random ones. Budgets are counted in schedules, never in seconds.
"""

from ch13lib import sync_checks as sc
from ch13lib.lang import Messages
from ch13lib.sync_checks import Scenario
from graders import _sync
from graders.api import Fail, Grader

grader = Grader("counter", timeout_s=120, harness=("kit.harnesses.sync_checks",))

# What this grader says itself, in the course's language (ch13lib/lang.py); its scenarios' messages
# are in their code, say("中文", "English"), run in the grading subject (ch13lib/sched.py).
M = Messages(
    too_few_threads=(
        "场景 '{name}': count_with_threads(3, 1) 启动了 {threads} 个线程, 应为 3: 每请求一个线程就启动一个工作线程",
        "scenario '{name}': count_with_threads(3, 1) started {threads} thread(s), expected 3: one worker per "
        "thread requested",
    ),
    default_schedule=(
        "count_with_threads(3, 1), 在默认调度中 (没有偏离)",
        "count_with_threads(3, 1), in the default schedule (no deviation)",
    ),
    hint_spy=(
        "提示: 创建一个 SafeCounter, 启动所有线程, 然后 join 所有线程, 最后读取 counter.value。",
        "Tip: make one SafeCounter, start all the threads, then join all of them, then read counter.value.",
    ),
)

# Every schedule with at most 2 deviations from the default schedule (capped), then 10
# seeded random ones, per scenario. See docs/exercises/01_sync_primitives.md.
# Its scenarios' messages in each language: the English exactly as the scenario code's assert says it,
# each {expression} as in its f-string (sync_checks.feedback fills the Chinese with the same values).
SAYS = Messages(
    new_safecounter_has_value=(
        "新的 SafeCounter 的值是 {c.value!r}, 应为 0",
        "a new SafeCounter has value {c.value!r}, expected 0",
    ),
    n5_increments_one_thread=(
        "在一个线程中 increment 5 次之后, 值是 {c.value!r}, 应为 5",
        "after 5 increments in one thread, value is {c.value!r}, expected 5",
    ),
    value_should_be_int=(
        "value 应该是 int, 得到的是 {type(c.value).__name__}",
        "value should be an int, got {type(c.value).__name__}",
    ),
    two_counters_share_their=(
        "两个计数器共用了同一个计数: 值为 {c.value}, {other.value}, 应为 5, 1 (把计数保存在实例中)",
        "two counters share their count: values {c.value}, {other.value}, expected 5, 1 (keep the count in the "
        "instance)",
    ),
    n3_threads_x_1=(
        "3 个线程各加 1 次, 但值是 {c.value}, 不是 3: 丢失了一次更新",
        "3 threads x 1 increment, but value is {c.value}, not 3: an update was lost",
    ),
    no_thread_was_started=(
        "没有启动任何线程: 这些工作必须在工作线程中运行",
        "no thread was started: the work must run in worker threads",
    ),
)

BUDGET = dict(max_preemptions=2, max_schedules=3000, random_schedules=10, seed=13)
RACE = sc.public_scenario("two threads, two increments each")


def explore(answer, scenarios, obj_name="SafeCounter", **budget) -> dict | None:
    return _sync.explore(answer, scenarios, obj_name, budget or BUDGET, SAYS)


# Its scenarios' names, in each language (sync_checks.named): what the feedback calls them.
NAMES = Messages(
    one_thread=("单线程, 没有并发", "one thread, no concurrency"),
    three_threads=("三个线程, 各 increment 一次", "three threads, one increment each"),
    first_schedule=("count_with_threads(3, 1) 启动 3 个线程", "count_with_threads(3, 1) starts 3 threads"),
    spy=(
        "count_with_threads({n}, {k}), 监视每一次 increment()",
        "count_with_threads({n}, {k}), watching every increment()",
    ),
)


SEQUENTIAL = [
    Scenario(
        sc.named("one_thread", NAMES),
        '''
c = m.SafeCounter()
assert c.value == 0, f"a new SafeCounter has value {c.value!r}, expected 0"
for _ in range(5):
    c.increment()
assert c.value == 5, f"after 5 increments in one thread, value is {c.value!r}, expected 5"
assert type(c.value) is int, f"value should be an int, got {type(c.value).__name__}"
other = m.SafeCounter()
other.increment()
assert (c.value, other.value) == (5, 1), (f"two counters share their count: values {c.value}, "
                                          f"{other.value}, expected 5, 1 (keep the count in the instance)")
''',
    )
]

MORE_RACES = [
    Scenario(
        sc.named("three_threads", NAMES),
        '''
c = m.SafeCounter()
threads = [threading.Thread(target=c.increment) for _ in range(3)]
for t in threads:
    t.start()
for t in threads:
    t.join()
assert c.value == 3, f"3 threads x 1 increment, but value is {c.value}, not 3: an update was lost"
''',
        hints=RACE.hints,
    )
]


# The spy scenarios' messages, made for each (n, k) as their code is: {n}, {k} and {nk} (n * k) are
# filled when the scenario is made, the other {expressions} are its f-strings' (sync_checks.said).
SPY = Messages(
    returned_early=(
        "count_with_threads({n}, {k}) 返回时, {nk} 次 increment() 调用只发生了 {done} 次: 读取计数之前要 join "
        "每个工作线程",
        "count_with_threads({n}, {k}) returned while only {done} of {nk} increment() calls had happened: join "
        "every worker before reading the count",
    ),
    returned=(
        "count_with_threads({n}, {k}) 返回了 {result!r}, 应为 {nk}",
        "count_with_threads({n}, {k}) returned {result!r}, expected {nk}",
    ),
    calling_thread=(
        "increment() 在调用者线程中运行了: 要启动 {n} 个 threading.Thread 工作线程, 让它们去做这些工作",
        "increment() ran in the calling thread: start {n} threading.Thread workers and let them do the work",
    ),
    counters=(
        "这些 increment 落在了 {len(counters)} 个不同的 SafeCounter 对象上: 所有工作线程必须共用同一个计数器",
        "the increments went to {len(counters)} different SafeCounter objects: all workers must share ONE counter",
    ),
)


def spy_says(n: int, k: int) -> tuple:
    """SPY's templates for count_with_threads(n, k)."""
    made = {"{n}": str(n), "{k}": str(k), "{nk}": str(n * k)}

    def fill(text: str) -> str:
        for field, value in made.items():
            text = text.replace(field, value)
        return text

    return tuple((fill(zh), fill(en)) for zh, en in SPY.texts.values())


def spy_scenario(n: int, k: int) -> Scenario:
    return Scenario(
        sc.named("spy", NAMES, n=n, k=k),
        f'''
calls, counters = [], set()
real_increment = m.SafeCounter.increment
def watched_increment(self):
    calls.append(threading.current_thread())
    counters.add(id(self))
    real_increment(self)
m.SafeCounter.increment = watched_increment
result = m.count_with_threads({n}, {k})
done = len(calls)
assert done >= {n * k}, (f"count_with_threads({n}, {k}) returned while only {{done}} of {n * k} increment() "
                         f"calls had happened: join every worker before reading the count")
assert result == {n * k}, f"count_with_threads({n}, {k}) returned {{result!r}}, expected {n * k}"
assert threading.main_thread() not in calls, ("increment() ran in the calling thread: start "
                                              "{n} threading.Thread workers and let them do the work")
assert threads_started() >= 1, "no thread was started: the work must run in worker threads"
assert len(counters) == 1, (f"the increments went to {{len(counters)}} different SafeCounter objects: "
                            f"all workers must share ONE counter")
''',
        hints=(("check", tuple(M.both("hint_spy"))),),
        says=spy_says(n, k),
    )


# Run in the default schedule only; the subject reports how many threads it started and the
# judge checks that number (one worker per thread requested).
FIRST_SCHEDULE = Scenario(
    sc.named("first_schedule", NAMES),
    '''
result = m.count_with_threads(3, 1)
''',
)


@grader.test(2)
def sequential(answer):
    """SafeCounter counts in one thread; two counters are independent."""
    explore(answer, SEQUENTIAL)


@grader.test(4)
def no_lost_update(answer):
    """No interleaving of concurrent increment() calls loses an update."""
    explore(answer, [RACE] + MORE_RACES)


@grader.test(4)
def count_with_threads(answer):
    """count_with_threads starts the workers on one counter, joins them all, returns n*k."""
    explore(answer, [spy_scenario(2, 2), spy_scenario(3, 1), spy_scenario(1, 3)], "count_with_threads")
    # in the default schedule (no deviation), every requested worker is started
    rep = explore(answer, [FIRST_SCHEDULE], "count_with_threads", max_preemptions=0, max_schedules=1)
    if rep["threads"] < 3:
        raise Fail(M("too_few_threads", name=FIRST_SCHEDULE.title(), threads=rep["threads"]), M("default_schedule"))
