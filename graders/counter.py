"""Hidden grader of `counter` (notebook 01): SafeCounter and count_with_threads.

Every test runs the student's cell under ch13lib.sched, the deterministic scheduler: the cell is
loaded afresh for every schedule, and every interleaving with at most 2 deviations from the
default schedule (delay bounding, close to CHESS's preemption bounding) is tried
(fewest first), then seeded random ones. Budgets are counted in schedules, never in seconds.
"""

from ch13lib import sync_checks as sc
from ch13lib.sync_checks import Scenario
from graders import _sync
from graders.api import Fail, Grader

grader = Grader("counter", timeout_s=120, harness=("ch13lib.sync_checks",))

# Every schedule with at most 2 deviations from the default schedule (capped), then 10
# seeded random ones, per scenario. See docs/exercises/01_sync_primitives.md.
BUDGET = dict(max_preemptions=2, max_schedules=3000, random_schedules=10, seed=13)
RACE = sc.public_scenario("two threads, two increments each")


def explore(answer, scenarios, obj_name="SafeCounter", **budget) -> dict | None:
    return _sync.explore(answer, scenarios, obj_name, budget or BUDGET)


SEQUENTIAL = [
    Scenario(
        "one thread, no concurrency",
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
        "three threads, one increment each",
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


def spy_scenario(n: int, k: int) -> Scenario:
    return Scenario(
        f"count_with_threads({n}, {k}), watching every increment()",
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
        hints=(
            (
                "check",
                "Tip: make one SafeCounter, start all the threads, then join all of them, then read counter.value.",
            ),
        ),
    )


# Run in the default schedule only; the subject reports how many threads it started and the
# judge checks that number (one worker per thread requested).
FIRST_SCHEDULE = Scenario(
    "count_with_threads(3, 1) starts 3 threads",
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
        raise Fail(
            f"scenario '{FIRST_SCHEDULE.name}': count_with_threads(3, 1) started {rep['threads']} "
            f"thread(s), expected 3: one worker per thread requested",
            "count_with_threads(3, 1), in the default schedule (no deviation)",
        )
