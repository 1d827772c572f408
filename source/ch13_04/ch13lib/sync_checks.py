"""Self-checks for notebook 01 (synchronisation primitives), on the deterministic scheduler.

Each check runs small *scenarios* (a few threads using your class) under ``ch13lib.sched``: your
cell is loaded afresh for every schedule, and the scheduler tries the interleavings with the fewest
deviations from the default schedule first. A failure is told as a story in your own lines, with a
schedule string you can
replay::

    from ch13lib import sync_checks
    sync_checks.check_counter(SafeCounter, count_with_threads)
    sync_checks.replay(SafeCounter, SCENARIO, "0x3 1x2 2x5")

The hidden graders use the same scheduler with a larger budget and more scenarios.
"""

from __future__ import annotations

import ast
import dataclasses
import re
import string
import textwrap

from ch13lib import allowed, grading, sched
from ch13lib._sched_run import STEPS, joined, plural, trace_side
from ch13lib.cell import is_self_check_copy, self_check_filename
from ch13lib.lang import FRAME, Both, Messages, say

# What the self-checks and the hidden tests say, in the course's language (ch13lib/lang.py). A
# scenario's code stays as it is (its asserts say English, and it is what a student replays); its
# messages in each language are (Chinese, English) templates (SAYS below, and a Scenario's ``says``),
# its hints (kind, (Chinese, English)) pairs: plain data that travels to the grading subject.
M = Messages(
    # the harness helpers' checks
    handed_twice=(
        "{r} 同时被交给了两个线程 (它当时已经被借出)",
        "{r} was handed to two threads at once (it was already checked out)",
    ),
    too_many_out=(
        "同时借出了 {n} 个资源, 但池的大小是 {size}",
        "{n} resources were checked out at once, but the pool's size is {size}",
    ),
    outside=(
        "✘ {title}: 评分时不会给这个单元格打分: 它用到了本练习允许清单 (ch13lib/allowed.py) 之外的东西:",
        "✘ {title}: the grading would not grade this cell: it uses what the exercise's allow-list "
        "(ch13lib/allowed.py) does not name:",
    ),
    # a failed scenario, and how to replay it
    stub=(
        "尚未实现: 桩代码仍然抛出 NotImplementedError",
        "not implemented yet: the stub still raises NotImplementedError",
    ),
    scenario=("场景 '{name}': {what}", "scenario '{name}': {what}"),
    replay=(
        '场景 \'{name}\', 调度 "{schedule}"。运行你的单元格之后, 在 notebook 中这样重现:',
        'scenario \'{name}\', schedule "{schedule}". Replay it in the notebook after running your cell:',
    ),
    # the self-check's lines
    passed=(
        "✔ {name}  ({n} 个调度{s}: 与默认顺序相差不超过 {k} 处{ds}的{which}调度{extra})",
        "✔ {name}  ({n} schedule{s}: {which} with ≤{k} deviation{ds} from the default order{extra})",
    ),
    which_all=("全部", "all"),
    which_first=("最先的一批", "the first"),
    random=(", 另加 {r} 个随机调度", ", + {r} random"),
    todo=("✘ {title}: 尚未实现: {todo}", "✘ {title}: not implemented yet: {todo}"),
    stub_raised=(
        "✘ {title}: 尚未实现 (桩代码仍然抛出 NotImplementedError)",
        "✘ {title}: not implemented yet (the stub still raises NotImplementedError)",
    ),
    stub_raised_in=(
        "✘ {title}: 尚未实现 (桩代码仍然在 `{where}` 中抛出 NotImplementedError)",
        "✘ {title}: not implemented yet (the stub still raises NotImplementedError in `{where}`)",
    ),
    lanes=(
        "同一个交错, 画成泳道图 (每个线程一列):",
        "The same interleaving as swimlanes (one column per thread):",
    ),
    # what a cell still lacks
    missing_one=(
        "{names} 没有在这个单元格中定义 (本练习要求 {required})",
        "{names} is not defined in this cell (the exercise asks for {required})",
    ),
    missing_many=(
        "{names} 没有在这个单元格中定义 (本练习要求 {required})",
        "{names} are not defined in this cell (the exercise asks for {required})",
    ),
    stubs_one=("{names} 仍然抛出 NotImplementedError (桩代码)", "{names} still raises NotImplementedError (the stub)"),
    stubs_many=("{names} 仍然抛出 NotImplementedError (桩代码)", "{names} still raise NotImplementedError (the stub)"),
    write_it=(
        "{parts}。写好它, 运行这个单元格, 然后再运行一次这个检查。",
        "{parts}. Write it, run the cell, then run this check again.",
    ),
    write_them=(
        "{parts}。写好它们, 运行这个单元格, 然后再运行一次这个检查。",
        "{parts}. Write them, run the cell, then run this check again.",
    ),
    # the public scenarios' hints
    hint_counter=(
        "两个线程读到了同一个旧值, 又都写回了 旧值+1: `+= 1` 的读和写必须在同一把锁的保护下完成, "
        "而且每次 increment 都要持有这把锁。",
        "Two threads read the same old value and both wrote old+1: the read and the write of `+= 1` must "
        "happen under ONE lock, held by every increment.",
    ),
    hint_workers=(
        "只创建一个 SafeCounter, 让 n_threads 个线程都在它上面工作并全部启动, 再 join 所有线程, "
        "然后读取 counter.value。",
        "Make ONE SafeCounter, start all n_threads threads on it, join all of them, then read counter.value.",
    ),
    hint_wake_acquire=(
        "有一个资源已经被归还, 但仍有线程阻塞在 acquire() 中: release() 必须唤醒正在等待的 acquire()。",
        "A thread stayed blocked in acquire() although a resource had been given back: release() must wake "
        "a waiting acquire().",
    ),
    hint_too_serial=(
        "过于串行: size=2 时, 第一个线程持有资源期间, 第二个线程无法 acquire。池必须允许 `size` 个线程同时"
        "持有资源 (从 acquire() 一直持有到 release() 的锁只放一个线程进来)。",
        "Too serial: with size=2 the second thread could not acquire while the first held a resource. The "
        "pool must let `size` threads hold resources at once (a lock held from acquire() to release() lets "
        "only one in).",
    ),
    hint_second_resource=(
        "一个线程无法从大小为 3 的池中取第二个资源: 池必须允许同时借出 `size` 个资源 (从 acquire() 一直持有"
        "到 release() 的锁只允许借出一个)。",
        "One thread could not take a second resource of a pool of size 3: the pool must let `size` resources "
        "out at once (a lock held from acquire() to release() lets only one out).",
    ),
    hint_timeout=(
        "acquire(timeout=0.1) 一直等了下去: 把 timeout 交给真正阻塞的那个调用 (时间到时 "
        "Semaphore.acquire(timeout=...) 返回 False), 然后抛出 TimeoutError。",
        "acquire(timeout=0.1) waited for ever: hand the timeout to the call that blocks "
        "(Semaphore.acquire(timeout=...) returns False when time is up) and raise TimeoutError then.",
    ),
    hint_identity=(
        "按身份记账 (is、id()), 不要用 == 或 in 查找资源: 工厂可以造出彼此相等的资源, 它们仍是不同的资源。",
        "Keep the books by identity (is, id()), not by == or `in`: a factory may make resources that compare "
        "equal, and they are still different resources.",
    ),
    hint_release_check=(
        "release() 必须检查该资源此刻确实处于借出状态, 然后恰好归还一个许可; 被拒绝的 release 不改变任何东西。",
        "release() must check that the resource is checked out right now, and then give back exactly one "
        "permit; a refused release changes nothing.",
    ),
    hint_while_acquire=(
        "一个线程在 acquire() 中被唤醒后就继续往下走了, 但另一个线程已经先拿走了空闲的资源: 要在 wait() "
        "外面套一个 `while` 循环重新检查条件。",
        "A thread woke up in acquire() and went on, but another thread had taken the free resource first: "
        "re-check in a `while` loop around wait().",
    ),
    hint_release_once=(
        "检查资源是否已借出, 和把它标记为已归还, 必须在同一个临界区中完成: 如果检查在一个临界区、更新在另一个, "
        "两次 release 都会通过检查。",
        "Check that the resource is out AND mark it returned in ONE critical section: with the check in one "
        "and the update in another, both releases pass the check.",
    ),
    hint_wake=(
        "有线程永远在等待: 改变了缓冲区的 put() 或 get() 必须通知等待这一变化的线程 (两类等待者共用一个条件"
        "变量时: 用 notify_all)。",
        "A thread waits for ever: a put() or get() that changes the buffer must notify the threads waiting "
        "for that change (with one condition for both kinds of waiters: notify_all).",
    ),
    hint_while=(
        "一个线程从 wait() 醒来后就继续往下走了, 尽管缓冲区又变空 (或变满) 了: 另一个线程抢先一步。要在 "
        "wait() 外面套一个 `while` 循环重新检查条件。",
        "A thread woke up from wait() and went on although the buffer was empty (or full) again: another "
        "thread got there first. Re-check the condition in a `while` loop around wait().",
    ),
    hint_room=(
        "检查是否有空位和放入物品必须在同一个临界区中完成: 如果 put() 在两者之间释放了锁, 另一个生产者会先"
        "占掉那个空位。",
        "Check for room and add the item in ONE critical section: if put() lets go of the lock between the "
        "two, another producer fills the free slot first.",
    ),
    hint_same_slot=(
        "两个生产者都有空位时, 不能写进同一个槽位: 它们都会修改的下标 (或列表) 需要锁的保护, 即使已经用信号量"
        "来计数空槽。",
        "Two producers with room for both must not write the same slot: the index (or the list) they both "
        "change needs the lock, even when semaphores count the free slots.",
    ),
    hint_lock_order=(
        "每个线程都拿到了自己第一个账户的锁, 又在等另一个账户的锁: 无论转账方向如何, 都按同一个全局顺序"
        "获取两把锁 (例如按账户 id)。",
        "Each thread took its first account's lock and waits for the other's: take the two locks in one "
        "global order (for example by account id), whatever the direction of the transfer.",
    ),
    hint_self_transfer=(
        "transfer(a, a, ...) 两次获取同一个账户的锁, 而 Lock 不可重入: 单独处理 src is dst 的情况 (或者使用 RLock)。",
        "transfer(a, a, ...) takes the same account's lock twice, and a Lock is not re-entrant: handle src "
        "is dst on its own (or use an RLock).",
    ),
    hint_both_locks=(
        "检查 `src.balance >= amount` 和依赖这一检查的扣款必须在同一个临界区中完成, 并且同时持有两个账户的锁。",
        "The check `src.balance >= amount` and the debit that relies on it must happen in ONE critical "
        "section, holding the locks of both accounts.",
    ),
)


# Its scenarios' messages in each language: the English exactly as the scenario code's assert says it,
# each {expression} as in its f-string (sync_checks.feedback fills the Chinese with the same values).
SAYS = Messages(
    new_safecounter_has_value=(
        "新的 SafeCounter 的值是 {c.value!r}, 应为 0",
        "a new SafeCounter has value {c.value!r}, expected 0",
    ),
    update_lost=(
        "2 个线程各加 2 次, 但值是 {c.value}, 不是 4: 丢失了一次更新",
        "2 threads x 2 increments, but value is {c.value}, not 4: an update was lost",
    ),
    count_returned=(
        "count_with_threads(2, 2) 返回了 {result!r}, 应为 4",
        "count_with_threads(2, 2) returned {result!r}, expected 4",
    ),
    every_thread_gave_resource=(
        "每个线程都归还了资源之后, available 是 {pool.available}, 不是 1",
        "after every thread gave its resource back, available is {pool.available}, not 1",
    ),
    pool_connection_whose_body=(
        "`with pool.connection()` 的代码块抛出异常之后, available 是 {pool.available}, 不是 1: 许可泄漏了 (在 "
        "finally 中 release)",
        "after `with pool.connection()` whose body raised, available is {pool.available}, not 1: the permit leaked "
        "(release in a finally)",
    ),
    buffer_holds_items_capacity=(
        "缓冲区里有 {len(buf)} 个物品, 但它的容量是 1",
        "the buffer holds {len(buf)} items but its capacity is 1",
    ),
    consumer_got_expected_0=(
        "消费者得到了 {got}, 应为 [0, 1, 2] (每个物品恰好一次, 按顺序)",
        "the consumer got {got}, expected [0, 1, 2] (every item once, in order)",
    ),
    transfer_b_10_enough=(
        "余额足够时 transfer(a, b, 10) 必须返回 True",
        "transfer(a, b, 10) with enough money must return True",
    ),
    transfer_b_20_enough=(
        "余额足够时 transfer(b, a, 20) 必须返回 True",
        "transfer(b, a, 20) with enough money must return True",
    ),
    balances_expected_110_90=(
        "余额为 {a.balance}, {b.balance}, 应为 110, 90: 钱凭空丢失或多出来了",
        "balances {a.balance}, {b.balance}, expected 110, 90: money was lost or created",
    ),
    count_returned_early=(
        "count_with_threads(2, 2) 在它的 4 次 increment() 调用只完成了 {calls} 次时就返回了: 读取计数之前要 join "
        "每个工作线程 (用 t.join(), 不是 sleep)",
        "count_with_threads(2, 2) returned after {calls} of its 4 increment() calls: join every worker (t.join(), "
        "not a sleep) before reading the count",
    ),
    increment_ran_calling_thread=(
        "increment() 在调用者线程中运行了: 要启动线程, 让工作线程去做这些 increment",
        "increment() ran in the calling thread: start the threads and let the workers do the increments",
    ),
    count_started_no_thread=(
        "count_with_threads(2, 2) 没有启动任何线程: 工作者必须是线程",
        "count_with_threads(2, 2) started no thread: the workers must be threads",
    ),
    n4_increments_went_different=(
        "这 4 次 increment 落在了 {len(seen_counters)} 个不同的 SafeCounter 对象上: 所有工作线程必须对同一个计数器加 1",
        "the 4 increments went to {len(seen_counters)} different SafeCounter objects: every worker must increment "
        "the same, ONE counter",
    ),
    connectionpool_did_raise_valueerror=(
        "ConnectionPool({bad}) 没有抛出 ValueError: 小于 1 的大小必须被拒绝",
        "ConnectionPool({bad}) did not raise ValueError: a size below 1 must be refused",
    ),
    new_pool_size_3=(
        "一个新的大小为 3 的池给出 available={pool.available!r}, 应为 3",
        "a new pool of size 3 says available={pool.available!r}, expected 3",
    ),
    acquire_gave_hand_out=(
        "acquire() 给出了 {x!r} 和 {y!r}: 要交出 factory() 创建的资源",
        "acquire() gave {x!r} and {y!r}: hand out the resources that factory() makes",
    ),
    two_acquire_calls_row=("连续两次 acquire() 调用都返回了 {x!r}", "two acquire() calls in a row both returned {x!r}"),
    n2_3_resources_out=(
        "3 个资源借出了 2 个时, available={pool.available}, 应为 1",
        "with 2 of 3 resources out, available={pool.available}, expected 1",
    ),
    both_came_back_available=(
        "两个都归还之后, available={pool.available}, 应为 3",
        "after both came back, available={pool.available}, expected 3",
    ),
    pool_size_3_called=(
        "一个大小为 3 的池调用了 {make.made} 次 factory: 最多创建 size 个资源, 并把已归还的资源重新交出去",
        "a pool of size 3 called its factory {make.made} times: make at most size resources, and hand out released "
        "ones again",
    ),
    acquire_timeout_0_1=(
        "所有资源都已借出时, acquire(timeout=0.1) 返回了 {got!r}: 时间到了就必须抛出 TimeoutError",
        "acquire(timeout=0.1) while every resource was out returned {got!r}: when the time is up it must raise "
        "TimeoutError",
    ),
    timed_out_acquire_available=(
        "一次超时的 acquire 之后, available={pool.available}, 应为 0",
        "after a timed-out acquire, available={pool.available}, expected 0",
    ),
    release_something_pool_never=(
        "release() 一个池从未交出过的东西, 没有抛出 ValueError",
        "release() of something the pool never handed out did not raise ValueError",
    ),
    refused_release_available_expected=(
        "一次被拒绝的 release 之后, available={pool.available}, 应为 1",
        "after a refused release, available={pool.available}, expected 1",
    ),
    release_b_twice_was=(
        "a 与 b 相等 (==) 且 a 仍被借出时, 第二次 release(b) 被接受了: 用 is 比较资源, 而不是 ==",
        "release(b) twice was accepted while a, which compares equal to b, was still out: compare resources "
        "with is, not ==",
    ),
    with_a_out_and=(
        "a 借出、b 归还之后, available={pool.available}, 应为 1",
        "with a out and b given back, available={pool.available}, expected 1",
    ),
    release_second_time_was=(
        "{r!r} 已经归还之后, 第二次 release({r!r}) 没有抛出 ValueError",
        "release({r!r}) a second time, after it was given back, did not raise ValueError",
    ),
    refused_second_release_available=(
        "第二次 release 被拒绝之后, available={pool.available}, 应为 1",
        "after a refused second release, available={pool.available}, expected 1",
    ),
    pool_size_1_handed=(
        "大小为 1 的池在 {r!r} 仍被借出时又交出了 {other!r}: 某次 release() (也许是被拒绝的那次) "
        "归还了一个没有被任何 acquire() 取走的许可",
        "a pool of size 1 handed out {other!r} while {r!r} was still out: some release() (maybe a refused one) "
        "added a permit that no acquire() had taken",
    ),
    two_threads_called_release=(
        "两个线程对同一个已借出的资源调用了 release({r!r}), 结果是 {sorted(said)}; 必须一个成功, 另一个抛出 ValueError",
        "two threads called release({r!r}) for one resource that was out: {sorted(said)}; one must succeed and the "
        "other raise ValueError",
    ),
    afterwards_available_expected_2=(
        "之后 available={pool.available}, 应为 2",
        "afterwards available={pool.available}, expected 2",
    ),
    boundedbuffer_did_raise_valueerror=(
        "BoundedBuffer({bad}) 没有抛出 ValueError: 小于 1 的容量必须被拒绝",
        "BoundedBuffer({bad}) did not raise ValueError: a capacity below 1 must be refused",
    ),
    new_buffer_has_len=("新缓冲区的 len 是 {len(buf)}, 应为 0", "a new buffer has len {len(buf)}, expected 0"),
    n2_puts_len_expected=("put 2 次之后, len 是 {len(buf)}, 应为 2", "after 2 puts, len is {len(buf)}, expected 2"),
    put_p_put_q=(
        "先 put p, 再 put q, 然后 get() 返回了 {first!r}: 先放进去的物品先出来",
        "put p, put q, then get() returned {first!r}: the first item in comes out first",
    ),
    next_two_get_calls=(
        "接下来的两次 get() 调用返回了 {rest}, 应为 ['q', 0] (先进先出)",
        "the next two get() calls returned {rest}, expected ['q', 0] (first in, first out)",
    ),
    taking_everything_out_len=(
        "全部取出之后, len 是 {len(buf)}, 应为 0",
        "after taking everything out, len is {len(buf)}, expected 0",
    ),
    two_consumers_got_expected=(
        "两个消费者得到了 {got}, 应为 10 和 20, 各一次",
        "the two consumers got {got}, expected 10 and 20, once each",
    ),
    two_producers_no_consumer=(
        "两个生产者, 还没有消费者: 缓冲区里有 {len(buf)} 个物品, 它的容量是 1",
        "two producers and no consumer yet: the buffer holds {len(buf)} items, its capacity is 1",
    ),
    two_get_calls_returned=(
        "两次 get() 调用返回了 {got}, 应为 u 和 v, 各一次",
        "the two get() calls returned {got}, expected u and v, once each",
    ),
    two_puts_into_buffer=(
        "向容量为 2 的缓冲区 put 两次之后, 里面剩下 {len(buf)} 个物品",
        "two puts into a buffer of capacity 2 left {len(buf)} items in it",
    ),
    two_producers_put_b=(
        "两个生产者同时 put 了 a 和 b 之后, 两次 get 得到了 {got}: 丢失了一个物品",
        "after two producers put a and b at once, two gets gave {got}: an item was lost",
    ),
    transfer_b_15_from=(
        "从余额 40 中 transfer(a, b, 15) 返回了 {ok!r}, 余额变为 {a.balance}, {b.balance}; 应为 True 和 25, 20",
        "transfer(a, b, 15) from a balance of 40 returned {ok!r} and left balances {a.balance}, {b.balance}; "
        "expected True and 25, 20",
    ),
    transfer_b_21_only=(
        "b 中只有 20 时 transfer(b, a, 21) 返回了 {ok!r}, 余额变为 {a.balance}, {b.balance}; 应为 False 且余额不变",
        "transfer(b, a, 21) with only 20 in b returned {ok!r} and left balances {a.balance}, {b.balance}; expected "
        "False and no change",
    ),
    transfer_10_from_account=(
        "transfer(a, a, 10) (从一个账户转给它自己) 返回了 {ok!r}, 余额为 {a.balance}; 应为 True 且余额不变",
        "transfer(a, a, 10) (from an account to itself) returned {ok!r} with balance {a.balance}; expected True "
        "and no change",
    ),
    account_went_negative_two=(
        "账户 a 的余额变成了负数 ({a.balance}): 从 9 中支付两笔 6, 两笔都成功了",
        "account a went negative ({a.balance}): two payments of 6 out of 9 both went through",
    ),
    two_payments_6_out=(
        "从 9 中支付两笔 6, 返回了 {paid}; 应为一个 True, 一个 False",
        "two payments of 6 out of 9 returned {paid}; expected one True, one False",
    ),
    balances_expected_3_6=(
        "余额为 {a.balance}, {b.balance}; 应为 3, 6",
        "balances {a.balance}, {b.balance}; expected 3, 6",
    ),
)


# The scenarios' names, in each language: what a self-check's ✔ and ✘ lines and a failure's feedback
# call a scenario. The English name is also how the graders pick a public scenario (public_scenario).
NAMES = Messages(
    two_increments=("两个线程, 各 increment 两次", "two threads, two increments each"),
    count_2_2=("调用 count_with_threads(2, 2)", "count_with_threads(2, 2)"),
    take_turns=("大小为 1, 两个线程轮流使用", "size 1, two threads take turns"),
    two_holders=("大小为 2, 允许两个线程同时持有资源", "size 2 admits two holders at once"),
    body_raises=("代码块抛出异常时仍然归还资源", "a body that raises still gives the resource back"),
    one_each=("容量为 1, 一个生产者, 一个消费者", "capacity 1, one producer, one consumer"),
    opposite=("同时进行 A->B 和 B->A", "A->B and B->A at the same time"),
    workers=(
        "count_with_threads(2, 2): 工作线程, 同一个计数器, 全部 join",
        "count_with_threads(2, 2): worker threads, one counter, all joined",
    ),
    pool_one_thread=("单线程: size、available、资源复用", "one thread: size, available, resources reused"),
    pool_equal_resources=("彼此相等 (==) 的两个资源", "two resources that compare equal (==)"),
    pool_timeout=("单线程: acquire(timeout) 抛出 TimeoutError", "one thread: acquire(timeout) raises TimeoutError"),
    wrong_release=(
        "单线程: 错误的 release 抛出 ValueError, 且不改变任何东西",
        "one thread: a wrong release raises ValueError and changes nothing",
    ),
    taken_again=(
        "大小为 1: 等待者被唤醒时, 资源又被拿走了",
        "size 1: a waiter woken while the resource is taken again",
    ),
    release_at_once=("两个线程同时 release 同一个资源", "two threads release one resource at once"),
    buffer_one_thread=("单线程: 容量、先进先出、len", "one thread: capacity, first in first out, len"),
    two_consumers=("容量为 1, 两个消费者和一个生产者", "capacity 1, two consumers and one producer"),
    two_producers=(
        "容量为 1, 两个生产者, 然后本线程取出两个物品",
        "capacity 1, two producers, then this thread takes both items",
    ),
    producers_at_once=(
        "容量为 2, 两个生产者同时 put, 然后 get 两次",
        "capacity 2, two producers at once, then two gets",
    ),
    bank_one_thread=("单线程: 支付成功、被拒绝、转给同一个账户", "one thread: paid, refused, to the same account"),
    afford_one=("同一个账户的两笔付款, 余额只够其中一笔", "two payments from one account that can afford only one"),
)


def named(key: str, table: Messages | None = None, **fields) -> tuple[str, str]:
    """A scenario's name as a :class:`Scenario` carries it: (Chinese, English), plain data, from
    ``table`` (a grader's own names) or this module's NAMES."""
    return tuple((NAMES if table is None else table).both(key, **fields))


def hint(key: str) -> tuple[str, str]:
    """A hint of this module's table as a scenario carries it: (Chinese, English), plain data."""
    return tuple(M.both(key))


def pairs(table: Messages) -> tuple:
    """A table's sentences as a scenario carries them: ((Chinese, English), ...), plain data."""
    return tuple(table.texts.values())


def _parse(template: str) -> list:
    try:
        return list(string.Formatter().parse(template))
    except ValueError:
        return []


def _values(template: str, text: str) -> dict | None:
    """{expression: its text} when ``text`` is what ``template`` says (its {expressions} filled), else None."""
    pattern, names = "", []
    for literal, field, _, _ in _parse(template):
        pattern += re.escape(literal)
        if field is None:
            continue
        if field in names:
            pattern += f"(?P=v{names.index(field)})"
        else:
            pattern += f"(?P<v{len(names)}>.*?)"
            names.append(field)
    m = re.fullmatch(pattern, text, re.S) if pattern else None
    return None if m is None else {name: m.group(f"v{i}") for i, name in enumerate(names)}


def _filled(template: str, values: dict) -> str:
    return "".join(literal + (values[field] if field is not None else "") for literal, field, _, _ in _parse(template))


def said(scenario: Scenario, failure: sched.Failure) -> Both:
    """The failure's message in each language: a scenario's assert says English (its code is what a
    student replays), the Chinese is its template in ``scenario.says`` or SAYS, filled with the same
    values; any other message is said in each language already."""
    message = failure.said()
    if failure.kind != "check" or message[0] != message[1]:
        return message
    for zh, en in tuple(scenario.says) + pairs(SAYS):
        values = _values(en, message[1])
        if values is not None and all(f in values for _, f, _, _ in _parse(zh) if f is not None):
            return Both(_filled(zh, values), message[1])
    return message


# What the self-checks in the notebook may spend: every schedule with at most one deviation from the default order
# (capped), then a few seeded random ones. Counted in schedules, never in seconds.
PUBLIC_BUDGET = dict(max_preemptions=1, max_schedules=400, random_schedules=20)


@dataclasses.dataclass(frozen=True)
class Scenario:
    name: tuple | str  # what it checks, in a few words: (Chinese, English) (see :func:`named`), or a str for both
    code: str  # the scenario: runs as the main thread, your module is ``m``
    hints: tuple = ()  # (failure kind, what it usually means) pairs; the meaning a str or (Chinese, English)
    # A timed wait (sleep, acquire/wait/join with a timeout) may end at any scheduling point: a
    # running thread can always be slower than any sleep. Ordered time (it passes only when every
    # thread waits) would let staggered sleeps order unlocked sections like a lock;
    # only a scenario that checks a wakeup *before* a timeout turns it off.
    early_timeouts: bool = True
    # (Chinese, English) templates of its asserts' messages besides this module's SAYS: the English
    # as the code's f-string says it, each {expression} as written there (see :func:`said`)
    says: tuple = ()

    def __post_init__(self) -> None:
        if not isinstance(self.name, str):  # a Both (a tuple's subclass) travels to the subject as a plain tuple
            object.__setattr__(self, "name", tuple(self.name))

    @property
    def key(self) -> str:
        """Its English name: what the graders pick it by (:func:`public_scenario`) and its cell's copy is
        called; the same in every language, so a run's trace and schedule do not depend on the language."""
        return self.name if isinstance(self.name, str) else self.name[1]

    def title(self) -> Both:
        """Its name in each language, as a field of a sentence of a :class:`Messages` table."""
        return Both(self.name, self.name) if isinstance(self.name, str) else Both(*self.name)

    def hint(self, kind: str):
        """The hint for a failure of this ``kind``: (Chinese, English), or a str (or "" when none)."""
        return next((h for k, h in self.hints if k == kind), "")


# --------------------------------------------------------------------------------------------
# Helpers the scenarios use (harness code: the scheduler never switches threads inside them)
# --------------------------------------------------------------------------------------------


class Res:
    """A resource made by a pool's factory: named conn1, conn2, ... in the order they are made.

    Each factory is a fresh subclass (see :func:`new_factory`) with its own ``made`` count, so
    this class itself never changes (the grading subject treats a changed harness as tampering)."""

    made = 0

    def __init__(self) -> None:
        cls = type(self)
        cls.made += 1
        self.n = cls.made

    def __repr__(self) -> str:
        return f"conn{self.n}"

    def __hash__(self) -> int:  # no address-based hashing: same order on every run
        return self.n

    def __eq__(self, other) -> bool:
        return self is other


def new_factory():
    """A fresh factory (a class of ``Res``), counting from conn1 again."""
    return type("Res", (Res,), {"made": 0, "__module__": __name__})


class Holders:
    """Who holds what, checked at every acquire: no resource twice, never more than ``size``."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.held: list = []
        self.peak = 0

    def got(self, r) -> None:
        assert not any(r is h for h in self.held), M.both("handed_twice", r=repr(r))
        self.held.append(r)
        self.peak = max(self.peak, len(self.held))
        assert len(self.held) <= self.size, M.both("too_many_out", n=len(self.held), size=self.size)

    def giving_back(self, r) -> None:
        self.held = [h for h in self.held if h is not r]


# --------------------------------------------------------------------------------------------
# Running scenarios and telling what went wrong
# --------------------------------------------------------------------------------------------

HELPERS = {"new_factory": new_factory, "Holders": Holders}  # names every scenario may use


def run(source: str, scenario: Scenario, *, load=None, filename=None, **budget) -> sched.Report:
    """Explore ``scenario`` on the cell ``source`` (or on ``load``, a fresh-module loader)."""
    if load is None:
        src = sched.Source(source, filename or self_check_filename(scenario.key))
        load, filename = src.load, src.filename
    main = sched.scenario_main(load, scenario.code, HELPERS)
    return sched.explore(main, traced={filename}, early_timeouts=scenario.early_timeouts, **budget)


def picture(rep: dict) -> bytes:
    """The failing interleaving of a grading subject's report as swimlanes (the judge draws it)."""
    events = rep.get("events")
    if type(events) is not list or not events:
        return b""
    from ch13lib.pictures import swimlanes

    return swimlanes(events, (str(rep.get("message", "")).splitlines() or [""])[0])


def feedback(scenario: Scenario, failure: sched.Failure, obj_name: str) -> tuple[str, str]:
    """(message, example) for a failed scenario: what went wrong and how to replay it."""
    hint = scenario.hint(failure.kind)
    if _is_stub(failure):
        return (M("stub"), "")
    msg = M("scenario", name=scenario.title(), what=said(scenario, failure))
    tip = ("\n" + (say(*hint) if isinstance(hint, (tuple, list)) else hint)) if hint else ""
    if failure.steps:
        msg += "\n" + _shortened(failure.told(), MESSAGE_KEPT - len(msg) - len(tip) - 1)
    msg += tip
    code = textwrap.indent(scenario.code.strip("\n"), "    ")
    example = (
        M("replay", name=scenario.title(), schedule=failure.schedule) + "\n"
        f"from ch13lib import sync_checks\n"
        f"SCENARIO = '''\n{code}\n'''\n"
        f"sync_checks.replay({obj_name}, SCENARIO, \"{failure.schedule}\""
        f"{'' if scenario.early_timeouts else ', early_timeouts=False'})"
    )
    return msg, example


# What the feedback keeps of a message (kit/result.py: MESSAGE_CAP): a story told in two languages
# beside its message could push the hint past it, so a long story loses steps from its middle first.
MESSAGE_KEPT = 4000


def _shortened(told: str, room: int) -> str:
    """The story ``told`` (a header line, then one line per step) in at most ``room`` characters:
    as it is when it fits, else its first and last steps around a line saying how many were left out."""
    if len(told) <= room:
        return told
    header, *rows = told.split("\n")
    first, last = rows[:8], rows[8:]
    while last and len("\n".join([header, *first, "", *last])) + 30 > room:
        last = last[1:]
    left_out = len(rows) - len(first) - len(last)
    return "\n".join([header, *first, f"  ... {STEPS.both('more', n=left_out)[trace_side()]} ...", *last])


def _is_stub(failure: sched.Failure) -> bool:
    """The failure is the stub's ``raise NotImplementedError``: nothing written yet."""
    return failure.kind == "exception" and isinstance(failure.exc, NotImplementedError)


def replay(obj, scenario_code: str, schedule: str, early_timeouts: bool = True) -> None:
    """Run your cell (the one that defines ``obj``) on one scenario and one schedule; print the story."""
    src = sched.Source(sched.cell_source(obj), self_check_filename())
    main = sched.scenario_main(src.load, textwrap.dedent(scenario_code), HELPERS)
    failure = sched.replay(main, schedule, traced={src.filename}, early_timeouts=early_timeouts)
    if failure is not None:
        print(failure.explain())


def _stub_functions(tree: ast.Module, names) -> list[str]:
    """The functions ``names`` of a cell, and the methods of its classes ``names``, whose whole body is
    ``raise NotImplementedError`` (after a docstring or ``pass``): the parts of the exercise still to
    write, in the order they appear."""

    def is_stub(fn) -> bool:
        body = [
            st
            for st in fn.body
            if not (isinstance(st, ast.Expr) and isinstance(st.value, ast.Constant)) and not isinstance(st, ast.Pass)
        ]
        if len(body) != 1 or not isinstance(body[0], ast.Raise) or body[0].exc is None:
            return False
        exc = body[0].exc.func if isinstance(body[0].exc, ast.Call) else body[0].exc
        return isinstance(exc, ast.Name) and exc.id == "NotImplementedError"

    out = []
    for node in tree.body:
        if getattr(node, "name", None) not in names:
            continue
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and is_stub(node):
            out.append(node.name)
        elif isinstance(node, ast.ClassDef):
            out += [
                f"{node.name}.{f.name}"
                for f in node.body
                if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)) and is_stub(f)
            ]
    return out


def _top_level_names(tree: ast.Module) -> set:
    """Every name the cell binds at module level (def, class, import, assignment, also inside a
    top-level if/try/with/for; not inside functions or classes)."""
    names = set()

    def visit(node) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif not isinstance(node, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            for child in ast.iter_child_nodes(node):
                visit(child)

    visit(tree)
    return names


def _names(items) -> Both:
    items = [f"`{x}`" for x in items]
    if len(items) == 1:
        return Both(items[0], items[0])
    return Both("、".join(items[:-1]) + " 和 " + items[-1], ", ".join(items[:-1]) + " and " + items[-1])


def _left_to_do(source: str, required=()) -> Both | str:
    """What the cell still lacks, in words (empty when nothing): the names of ``required`` it does
    not define, and the functions whose body is still the stub's ``raise NotImplementedError()``."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return ""
    bound = _top_level_names(tree)
    # a name the cell never even mentions (bound some other way, it would still be mentioned)
    missing = [n for n in required if n not in bound and not re.search(rf"\b{re.escape(n)}\b", source)]
    stubs = _stub_functions(tree, required)
    parts = []
    if missing:
        key = "missing_one" if len(missing) == 1 else "missing_many"
        parts.append(M.both(key, names=_names(missing), required=_names(required)))
    if stubs:
        parts.append(M.both("stubs_one" if len(stubs) == 1 else "stubs_many", names=_names(stubs)))
    if not parts:
        return ""
    key = "write_it" if len(missing) + len(stubs) == 1 else "write_them"
    return M.both(key, parts=joined(parts, "; "))


def _raised_in(failure: sched.Failure) -> str:
    """The function of your cell that raised the failure's exception (its innermost frame there)."""
    tb, where = getattr(failure.exc, "__traceback__", None), ""
    while tb is not None:
        code = tb.tb_frame.f_code
        if is_self_check_copy(code.co_filename):
            where = getattr(code, "co_qualname", code.co_name)
        tb = tb.tb_next
    return where


def _self_check(title: str, obj, scenarios, obj_name: str, required=()) -> bool:
    if grading():
        print(f"{title}: " + FRAME("skipped"))
        return True
    try:
        source = sched.cell_source(obj)
    except ValueError as e:
        print(f"✘ {title}: {e}")
        return False
    todo = _left_to_do(source, required)
    if todo:
        print(M("todo", title=title, todo=todo))
        return False
    refused = allowed.outside(title, source)  # as the judge checks it: the cell would not be graded
    if refused:
        print(M("outside", title=title) + "\n" + "\n".join(refused))
        return False
    lines, ok, lanes = [], True, []  # printed at the end: no ✔ for a cell that turns out to be a stub
    for sc in scenarios:
        rep = run(source, sc, filename=self_check_filename(), **PUBLIC_BUDGET)
        if rep.ok:
            n = rep.schedules - rep.random_schedules
            k = rep.max_preemptions
            extra = M.both("random", r=rep.random_schedules) if rep.random_schedules else Both("", "")
            which = M.both("which_all" if rep.exhaustive else "which_first")
            lines.append(M("passed", name=sc.title(), n=n, s=plural(n), which=which, k=k, ds=plural(k), extra=extra))
            continue
        ok = False
        msg, example = feedback(sc, rep.failure, obj_name)
        if _is_stub(rep.failure):
            where = _raised_in(rep.failure)
            print(M("stub_raised_in", title=title, where=where) if where else M("stub_raised", title=title))
            return False
        lines.append(f"✘ {msg}\n\n{example}\n")
        lanes = rep.failure.events
        break
    print("\n".join(lines))
    if not ok and lanes:
        try:
            from ch13lib.pictures import show, swimlanes

            print(M("lanes"))
            show(swimlanes(lanes, msg.splitlines()[0]))
        except Exception as e:  # noqa: BLE001 - no matplotlib here: the story above says it all
            print(FRAME("no_picture", why=type(e).__name__))
    if ok:
        print(f"{title}: " + FRAME("passed"))
    return ok


# --------------------------------------------------------------------------------------------
# The public scenarios
# --------------------------------------------------------------------------------------------

COUNTER_SCENARIOS = [
    Scenario(
        named("two_increments"),
        '''
c = m.SafeCounter()
assert c.value == 0, f"a new SafeCounter has value {c.value!r}, expected 0"
def worker():
    for _ in range(2):
        c.increment()
threads = [threading.Thread(target=worker) for _ in range(2)]
for t in threads:
    t.start()
for t in threads:
    t.join()
assert c.value == 4, f"2 threads x 2 increments, but value is {c.value}, not 4: an update was lost"
''',
        hints=(("check", hint("hint_counter")),),
    ),
    Scenario(
        named("count_2_2"),
        '''
result = m.count_with_threads(2, 2)
assert result == 4, f"count_with_threads(2, 2) returned {result!r}, expected 4"
''',
    ),
]

POOL_SCENARIOS = [
    Scenario(
        named("take_turns"),
        '''
pool = m.ConnectionPool(1, factory=new_factory())
holders = Holders(1)
def worker():
    r = pool.acquire()
    holders.got(r)
    holders.giving_back(r)
    pool.release(r)
threads = [threading.Thread(target=worker) for _ in range(2)]
for t in threads:
    t.start()
for t in threads:
    t.join()
assert pool.available == 1, f"after every thread gave its resource back, available is {pool.available}, not 1"
''',
        hints=(("blocked_at_exit", hint("hint_wake_acquire")),),
    ),
    Scenario(
        named("two_holders"),
        '''
pool = m.ConnectionPool(2, factory=new_factory())
both = threading.Barrier(2)          # each thread waits here until the other one holds a resource too
def worker():
    r = pool.acquire()
    both.wait()
    pool.release(r)
threads = [threading.Thread(target=worker) for _ in range(2)]
for t in threads:
    t.start()
for t in threads:
    t.join()
''',
        hints=(("deadlock", hint("hint_too_serial")),),
    ),
    Scenario(
        named("body_raises"),
        '''
pool = m.ConnectionPool(1, factory=new_factory())
try:
    with pool.connection() as conn:
        raise KeyError("boom")
except KeyError:
    pass
assert pool.available == 1, (f"after `with pool.connection()` whose body raised, available is "
                             f"{pool.available}, not 1: the permit leaked (release in a finally)")
r = pool.acquire(timeout=1.0)
pool.release(r)
''',
    ),
]

_WAKE = hint("hint_wake")
BUFFER_SCENARIOS = [
    Scenario(
        named("one_each"),
        '''
buf = m.BoundedBuffer(1)
got = []
def producer():
    for i in range(3):
        buf.put(i)
        assert len(buf) <= 1, f"the buffer holds {len(buf)} items but its capacity is 1"
def consumer():
    for _ in range(3):
        got.append(buf.get())
threads = [threading.Thread(target=consumer), threading.Thread(target=producer)]
for t in threads:
    t.start()
for t in threads:
    t.join()
assert got == [0, 1, 2], f"the consumer got {got}, expected [0, 1, 2] (every item once, in order)"
''',
        hints=(("blocked_at_exit", _WAKE), ("deadlock", _WAKE)),
    ),
]

BANK_SCENARIOS = [
    Scenario(
        named("opposite"),
        '''
a, b = m.Account(1, 100), m.Account(2, 100)
def t1():
    assert m.transfer(a, b, 10) is True, "transfer(a, b, 10) with enough money must return True"
def t2():
    assert m.transfer(b, a, 20) is True, "transfer(b, a, 20) with enough money must return True"
threads = [threading.Thread(target=t1), threading.Thread(target=t2)]
for t in threads:
    t.start()
for t in threads:
    t.join()
assert (a.balance, b.balance) == (110, 90), (f"balances {a.balance}, {b.balance}, expected 110, 90: "
                                            f"money was lost or created")
''',
        hints=(("deadlock", hint("hint_lock_order")),),
    ),
]


# More public scenarios: the rules the notebook states, each in a small scenario of its own.
# A self-check runs the one-thread ones first (the contract), then the concurrent ones.

COUNTER_WORKERS = Scenario(
    named("workers"),
    '''
seen_threads, seen_counters = [], []
plain_increment = m.SafeCounter.increment
def watched(self):
    seen_threads.append(threading.current_thread())
    if not any(self is c for c in seen_counters):
        seen_counters.append(self)
    plain_increment(self)
m.SafeCounter.increment = watched
result = m.count_with_threads(2, 2)
calls = len(seen_threads)
assert calls >= 4, (f"count_with_threads(2, 2) returned after {calls} of its 4 increment() calls: "
                    f"join every worker (t.join(), not a sleep) before reading the count")
assert result == 4, f"count_with_threads(2, 2) returned {result!r}, expected 4"
assert threading.main_thread() not in seen_threads, ("increment() ran in the calling thread: start "
                                                     "the threads and let the workers do the increments")
assert threads_started() >= 1, "count_with_threads(2, 2) started no thread: the workers must be threads"
assert len(seen_counters) == 1, (f"the 4 increments went to {len(seen_counters)} different SafeCounter "
                                 f"objects: every worker must increment the same, ONE counter")
''',
    hints=(("check", hint("hint_workers")),),
)

POOL_CONTRACT = [
    Scenario(
        named("pool_one_thread"),
        '''
for bad in (0, -4):
    try:
        m.ConnectionPool(bad)
    except ValueError:
        continue
    raise AssertionError(f"ConnectionPool({bad}) did not raise ValueError: a size below 1 must be refused")
make = new_factory()
pool = m.ConnectionPool(3, factory=make)
assert pool.available == 3, f"a new pool of size 3 says available={pool.available!r}, expected 3"
x = pool.acquire()
y = pool.acquire()
assert isinstance(x, make) and isinstance(y, make), (f"acquire() gave {x!r} and {y!r}: hand out the "
                                                     f"resources that factory() makes")
assert x is not y, f"two acquire() calls in a row both returned {x!r}"
assert pool.available == 1, f"with 2 of 3 resources out, available={pool.available}, expected 1"
pool.release(y)
pool.release(x)
assert pool.available == 3, f"after both came back, available={pool.available}, expected 3"
for _ in range(4):
    pool.release(pool.acquire())
assert make.made <= 3, (f"a pool of size 3 called its factory {make.made} times: make at most size "
                        f"resources, and hand out released ones again")
''',
        hints=(("deadlock", hint("hint_second_resource")),),
    ),
    Scenario(
        named("pool_timeout"),
        '''
pool = m.ConnectionPool(1, factory=new_factory())
r = pool.acquire()
try:
    got = pool.acquire(timeout=0.1)
except TimeoutError:
    pass
else:
    raise AssertionError(f"acquire(timeout=0.1) while every resource was out returned {got!r}: "
                         f"when the time is up it must raise TimeoutError")
assert pool.available == 0, f"after a timed-out acquire, available={pool.available}, expected 0"
pool.release(r)
''',
        hints=(("deadlock", hint("hint_timeout")),),
    ),
    Scenario(
        named("wrong_release"),
        '''
pool = m.ConnectionPool(1, factory=new_factory())
try:
    pool.release(object())
except ValueError:
    pass
else:
    raise AssertionError("release() of something the pool never handed out did not raise ValueError")
assert pool.available == 1, f"after a refused release, available={pool.available}, expected 1"
r = pool.acquire()
pool.release(r)
try:
    pool.release(r)
except ValueError:
    pass
else:
    raise AssertionError(f"release({r!r}) a second time, after it was given back, did not raise ValueError")
assert pool.available == 1, f"after a refused second release, available={pool.available}, expected 1"
r = pool.acquire(timeout=2.0)
try:
    other = pool.acquire(timeout=0.5)
except TimeoutError:
    pass
else:
    raise AssertionError(f"a pool of size 1 handed out {other!r} while {r!r} was still out: some release() "
                         f"(maybe a refused one) added a permit that no acquire() had taken")
pool.release(r)
''',
        hints=(("check", hint("hint_release_check")),),
    ),
    Scenario(
        named("pool_equal_resources"),
        '''
class Same:
    def __eq__(self, other):
        return isinstance(other, Same)
    def __hash__(self):
        return 1
pool = m.ConnectionPool(2, factory=Same)
a = pool.acquire()
b = pool.acquire()
pool.release(b)
try:
    pool.release(b)
except ValueError:
    pass
else:
    raise AssertionError("release(b) twice was accepted while a, which compares equal to b, was still out: "
                         "compare resources with is, not ==")
assert pool.available == 1, f"with a out and b given back, available={pool.available}, expected 1"
''',
        hints=(("check", hint("hint_identity")),),
    ),
]

POOL_RACES = [
    Scenario(
        named("taken_again"),
        '''
pool = m.ConnectionPool(1, factory=new_factory())
holders = Holders(1)
mine = pool.acquire()
holders.got(mine)
def waiter():
    r = pool.acquire()
    holders.got(r)
    holders.giving_back(r)
    pool.release(r)
t = threading.Thread(target=waiter)
t.start()
settle()                        # the waiter is blocked in acquire() now
holders.giving_back(mine)
pool.release(mine)              # wakes the waiter ...
mine = pool.acquire()           # ... but this thread takes the resource straight back
holders.got(mine)
holders.giving_back(mine)
pool.release(mine)
t.join()
assert pool.available == 1, f"after every thread gave its resource back, available is {pool.available}, not 1"
''',
        hints=(("blocked_at_exit", hint("hint_wake_acquire")), ("exception", hint("hint_while_acquire"))),
    ),
    Scenario(
        named("release_at_once"),
        '''
pool = m.ConnectionPool(2, factory=new_factory())
r = pool.acquire()
said = []
def give_back():
    try:
        pool.release(r)
        said.append("released")
    except ValueError:
        said.append("ValueError")
threads = [threading.Thread(target=give_back) for _ in range(2)]
for t in threads:
    t.start()
for t in threads:
    t.join()
assert sorted(said) == ["ValueError", "released"], (f"two threads called release({r!r}) for one resource "
    f"that was out: {sorted(said)}; one must succeed and the other raise ValueError")
assert pool.available == 2, f"afterwards available={pool.available}, expected 2"
''',
        hints=(("check", hint("hint_release_once")),),
    ),
]

_WHILE = hint("hint_while")
BUFFER_MORE = [
    Scenario(
        named("buffer_one_thread"),
        '''
for bad in (0, -2):
    try:
        m.BoundedBuffer(bad)
    except ValueError:
        continue
    raise AssertionError(f"BoundedBuffer({bad}) did not raise ValueError: a capacity below 1 must be refused")
buf = m.BoundedBuffer(2)
assert len(buf) == 0, f"a new buffer has len {len(buf)}, expected 0"
buf.put("p")
buf.put("q")
assert len(buf) == 2, f"after 2 puts, len is {len(buf)}, expected 2"
first = buf.get()
assert first == "p", f"put p, put q, then get() returned {first!r}: the first item in comes out first"
buf.put(0)
rest = [buf.get(), buf.get()]
assert rest == ["q", 0], f"the next two get() calls returned {rest}, expected ['q', 0] (first in, first out)"
assert len(buf) == 0, f"after taking everything out, len is {len(buf)}, expected 0"
''',
    ),
    Scenario(
        named("two_consumers"),
        '''
buf = m.BoundedBuffer(1)
got = []
def consumer():
    got.append(buf.get())
def producer():
    for item in (10, 20):
        buf.put(item)
        assert len(buf) <= 1, f"the buffer holds {len(buf)} items but its capacity is 1"
threads = [threading.Thread(target=consumer), threading.Thread(target=consumer),
           threading.Thread(target=producer)]
for t in threads:
    t.start()
for t in threads:
    t.join()
assert sorted(got) == [10, 20], f"the two consumers got {got}, expected 10 and 20, once each"
''',
        hints=(("blocked_at_exit", _WAKE), ("deadlock", _WAKE), ("exception", _WHILE)),
    ),
    Scenario(
        named("two_producers"),
        '''
buf = m.BoundedBuffer(1)
def producer(item):
    buf.put(item)
    assert len(buf) <= 1, f"the buffer holds {len(buf)} items but its capacity is 1"
threads = [threading.Thread(target=producer, args=(item,)) for item in ("u", "v")]
for t in threads:
    t.start()
settle()                        # one producer is done, the other waits for room
assert len(buf) <= 1, f"two producers and no consumer yet: the buffer holds {len(buf)} items, its capacity is 1"
got = [buf.get(), buf.get()]
for t in threads:
    t.join()
assert sorted(got) == ["u", "v"], f"the two get() calls returned {got}, expected u and v, once each"
''',
        hints=(
            ("blocked_at_exit", _WAKE),
            ("deadlock", _WAKE),
            ("exception", _WHILE),
            ("check", hint("hint_room")),
        ),
    ),
    Scenario(
        named("producers_at_once"),
        '''
buf = m.BoundedBuffer(2)
def producer(x):
    buf.put(x)
threads = [threading.Thread(target=producer, args=(x,)) for x in ("a", "b")]
for t in threads:
    t.start()
for t in threads:
    t.join()
assert len(buf) == 2, f"two puts into a buffer of capacity 2 left {len(buf)} items in it"
got = sorted([buf.get(), buf.get()], key=str)
assert got == ["a", "b"], f"after two producers put a and b at once, two gets gave {got}: an item was lost"
''',
        hints=(("check", hint("hint_same_slot")),),
    ),
]

_BOTH_LOCKS = hint("hint_both_locks")
BANK_MORE = [
    Scenario(
        named("bank_one_thread"),
        '''
a, b = m.Account(1, 40), m.Account(2, 5)
ok = m.transfer(a, b, 15)
assert ok is True and (a.balance, b.balance) == (25, 20), (f"transfer(a, b, 15) from a balance of 40 "
    f"returned {ok!r} and left balances {a.balance}, {b.balance}; expected True and 25, 20")
ok = m.transfer(b, a, 21)
assert ok is False and (a.balance, b.balance) == (25, 20), (f"transfer(b, a, 21) with only 20 in b "
    f"returned {ok!r} and left balances {a.balance}, {b.balance}; expected False and no change")
ok = m.transfer(a, a, 10)
assert ok is True and a.balance == 25, (f"transfer(a, a, 10) (from an account to itself) returned "
    f"{ok!r} with balance {a.balance}; expected True and no change")
''',
        hints=(("deadlock", hint("hint_self_transfer")),),
    ),
    Scenario(
        named("afford_one"),
        '''
a, b = m.Account(1, 9), m.Account(2, 0)
paid = []
def pay():
    paid.append(m.transfer(a, b, 6))
threads = [threading.Thread(target=pay), threading.Thread(target=pay)]
for t in threads:
    t.start()
for t in threads:
    t.join()
assert a.balance >= 0, f"account a went negative ({a.balance}): two payments of 6 out of 9 both went through"
assert sorted(paid) == [False, True], f"two payments of 6 out of 9 returned {paid}; expected one True, one False"
assert (a.balance, b.balance) == (3, 6), f"balances {a.balance}, {b.balance}; expected 3, 6"
''',
        hints=(("check", _BOTH_LOCKS),),
    ),
]


def public_scenario(name: str) -> Scenario:
    """The public scenario called ``name`` (the hidden graders pick them by name, not position)."""
    for s in (
        COUNTER_SCENARIOS
        + [COUNTER_WORKERS]
        + POOL_SCENARIOS
        + POOL_CONTRACT
        + POOL_RACES
        + BUFFER_SCENARIOS
        + BUFFER_MORE
        + BANK_SCENARIOS
        + BANK_MORE
    ):
        if s.key == name:
            return s
    raise KeyError(f"no public scenario is called {name!r}")


def check_counter(SafeCounter, count_with_threads=None) -> bool:
    """Self-check of the `counter` cell (pass the class; the whole cell is re-run)."""
    return _self_check(
        "counter",
        SafeCounter,
        COUNTER_SCENARIOS + [COUNTER_WORKERS],
        "SafeCounter",
        ("SafeCounter", "count_with_threads"),
    )


def check_pool(ConnectionPool) -> bool:
    """Self-check of the `semaphore_pool` cell."""
    return _self_check(
        "semaphore_pool",
        ConnectionPool,
        POOL_CONTRACT + POOL_SCENARIOS + POOL_RACES,
        "ConnectionPool",
        ("ConnectionPool",),
    )


def check_buffer(BoundedBuffer) -> bool:
    """Self-check of the `bounded_buffer` cell."""
    return _self_check(
        "bounded_buffer",
        BoundedBuffer,
        BUFFER_MORE[:1] + BUFFER_SCENARIOS + BUFFER_MORE[1:],
        "BoundedBuffer",
        ("BoundedBuffer",),
    )


def check_bank(transfer) -> bool:
    """Self-check of the `bank_transfer` cell (pass `transfer` or `Account`)."""
    return _self_check(
        "bank_transfer", transfer, BANK_MORE[:1] + BANK_SCENARIOS + BANK_MORE[1:], "transfer", ("Account", "transfer")
    )
