"""Checks of the notebook-02 kernels (vecAdd, grid-stride vecAdd, tiled matmul).

Each ``check_*`` function runs one case and raises :class:`CheckFailed` with a message that says
what is wrong and how to replay it; it returns figures when the case passes. A check has three
parts, so that the code that judges never has to hold the code that is judged:

1. it makes the case: the inputs (:func:`vec_inputs`, :func:`mat_inputs`), the launch, the replay line;
2. it asks for an OBSERVATION of the student's functions on that case: ``ask(op, **case)`` runs one
   of the ``observe_*`` functions below where those functions live and returns plain data only
   (the arrays after the call, what the launcher returned, each launch's configuration, which thread
   wrote each output element, per-thread memory traffic). The observation runs the kernel on the
   checking simulator of :mod:`ch13lib.cuda_sim` (``device="cpu"``), which raises CheckFailed at
   once on what only it can see (out of bounds and negative indices, races, barrier divergence,
   writes to the inputs, two threads writing one element), or on a real GPU through numba.cuda
   (``device="gpu"``);
3. it judges the observation: recomputes the numpy reference from the inputs it made and compares.

The first argument of a check says where to observe: your launcher (or kernel) itself, observed
right here (``check_matmul_results(launch_tiled_matmul, 1, 33, 3)`` in the notebook), or an
:class:`Ask`: :func:`local` for the self-checks at the bottom; the hidden graders hand the checks
an Ask of their own, which observes your cell in the grading process that runs it, on more (and
hidden) cases, and judge in their own process.

Inputs are made by :func:`vec_inputs` and :func:`mat_inputs`, and a failing check ends with its
replay line, the same check on the same case over the notebook's own functions (:func:`here`), on
the checking simulator: ``check_vec_add_results(here(), 37, 16)`` shows the same failure again.

This module holds the cases and the checks that judge them, and each notebook's self-check; its
private parts beside it hold the observations, which run where the student's functions are
(``_cuda_check_observe``), and the runner that prints a self-check's lines (``_cuda_check_selfcheck``).
"""

from __future__ import annotations

import numpy as np

from ch13lib._cuda_check_observe import (
    ARRAY_CAP,
    OBSERVE,
    REPR_CAP,
    SENDABLE,
    Ask,
    CheckFailed,
    _asked,
    _replay,
    here,
    local,
    observe_as_is,
    observe_config,
    observe_kernel,
    observe_launcher,
    replayable,
)
from ch13lib._cuda_check_selfcheck import _self_check
from ch13lib.lang import Both, Messages

__all__ = [
    "TILE",
    "SENTINEL",
    "REPR_CAP",
    "ARRAY_CAP",
    "SENDABLE",
    "CheckFailed",
    "vec_inputs",
    "mat_inputs",
    "hist_inputs",
    "dot_inputs",
    "observe_config",
    "observe_launcher",
    "observe_kernel",
    "observe_as_is",
    "OBSERVE",
    "Ask",
    "local",
    "here",
    "check_vec_add_launch",
    "check_vec_add_results",
    "check_vec_add_kernel",
    "check_launcher_as_is",
    "check_grid_stride_pattern",
    "check_matmul_launch",
    "check_matmul_results",
    "check_matmul_traffic",
    "check_histogram",
    "check_dot",
    "self_check_vec_add",
    "self_check_vec_add_grid_stride",
    "self_check_tiled_matmul",
    "self_check_histogram",
    "self_check_dot_reduction",
    "print_traffic",
]

# What the checks say, in the course's language (ch13lib/lang.py). A failing check's message is one
# of these, then the lines that replay it (``_replay``, ``replayable``), which stay as code.
M = Messages(
    no_traffic=(
        "无法读到 {launcher} 这次启动中每个线程的访存计数, 所以无法检查线程是否分担了工作",
        "could not read the per-thread memory traffic of {launcher}'s launch, so the threads' share of the work "
        "cannot be checked",
    ),
    unreadable=("它已无法作为数组读回", "it can no longer be read back as an array"),
    reshaped=("它的形状现在是 {now}, 原来是 {was}", "its shape is now {now}, it was {was}"),
    wrong_elements=(
        "{count} 个元素中有 {bad} 个是错的; 第一个是 [{index}]: 得到 {got}, 应为 {want}",
        "{bad} of {count} elements are wrong; the first is [{index}]: got {got}, expected {want}",
    ),
    out_c=("它的第三个参数 c (长度为 n)", "its third argument c (length n)"),
    out_C=("它的第三个参数 C (m x n)", "its third argument C (m x n)"),
    out_partial=("它的第三个参数 partial", "its third argument partial"),
    no_writers=(
        "无法判断 {kernel} 的哪个线程写了{what}的每个元素: 核函数要逐个命名参数, 并通过它们写输出",
        "could not tell which thread of {kernel} wrote each element of {what}: a kernel names its parameters one "
        "by one and writes its output through them",
    ),
    unwritten=(
        "输出中有 {count} 个元素从未被任何线程写入 (第一个: {first})",
        "{count} element(s) of the output were never written by any thread (first: {first})",
    ),
    not_an_array=("输出不是数组", "the output was not an array"),
    no_launch=(
        "{launcher} 从未启动核函数 `{name}` (必须以 {name}[blocks, threads_per_block](...) 的形式启动它, 使用全局"
        "名称 `{name}`)",
        "{launcher} never launched the kernel `{name}` (it must launch it as {name}[blocks, threads_per_block](...), "
        "using the global name `{name}`)",
    ),
    returned_type=(
        "{name} 返回了 {type}, 而不是 numpy 数组: 把结果复制回主机 (d_c.copy_to_host()) 并返回它",
        "{name} returned {type}, not a numpy array: copy the result back to the host (d_c.copy_to_host()) and "
        "return it",
    ),
    returned_shape=(
        "{name} 返回的数组形状是 {shape}, 应为 {want}",
        "{name} returned an array of shape {shape}, expected {want}",
    ),
    returned_dtype=(
        "{name} 返回的 dtype 是 {dtype}, 应为 {want} (输入的 dtype): 让输出与输入一致 (np.empty_like(a))",
        "{name} returned dtype {dtype}, expected {want} (the inputs' dtype): make the output like the inputs "
        "(np.empty_like(a))",
    ),
    returned_shares=(
        "{name} 返回的数组与它的输入 {input} 共享内存: 请返回一个新数组, 并保持输入不变",
        "{name} returned an array that shares memory with its input {input}: return a NEW array and leave the "
        "inputs unchanged",
    ),
    invalid_config=(
        "{launcher} 以 {kernel}[{g}, {b}] 启动: 不是有效的启动配置 (线程块数和每块线程数必须是 >= 1 的整数)。",
        "{launcher} launched {kernel}[{g}, {b}]: not a valid launch configuration (blocks and threads per block "
        "must be integers >= 1).",
    ),
    invalid_config_zero=(
        "{launcher} 以 {kernel}[{g}, {b}] 启动: 不是有效的启动配置 (线程块数和每块线程数必须是 >= 1 的整数)。"
        "n == 0 时公式给出 0 个线程块, GPU 会拒绝这样的启动: 不启动核函数, 直接返回一个空数组。",
        "{launcher} launched {kernel}[{g}, {b}]: not a valid launch configuration (blocks and threads per block "
        "must be integers >= 1). For n == 0 the formula gives 0 blocks, which a GPU refuses: return an empty "
        "array without launching.",
    ),
    default_tpb=(
        "调用时没有给 threads_per_block, 它的默认值必须是 {tpb}",
        "called without threads_per_block, whose default must be {tpb}",
    ),
    asked_tpb=("要求的是 threads_per_block={tpb}", "threads_per_block={tpb} was asked for"),
    block_threads=(
        "{launcher} 启动的线程块有 {n} 个线程 (blockdim {b}); {asked}",
        "{launcher} launched blocks of {n} threads (blockdim {b}); {asked}",
    ),
    blocks_asked=(
        "{launcher} 启动了 {g} 个线程块; 要求的是 blocks={blocks}: 使用调用者选定的网格 (循环能覆盖任意 n)",
        "{launcher} launched {g} blocks; blocks={blocks} was asked for: use the grid the caller chose (the loop "
        "covers any n)",
    ),
    too_few_blocks=(
        "{g} 个线程块 x {tpb} 个线程 = {threads} 个线程, 覆盖不了 n = {n} 个元素: 尾部永远不会被计算。向上取整: "
        "blocks = (n + threads_per_block - 1) // threads_per_block",
        "{g} blocks x {tpb} threads = {threads} threads cannot cover n = {n} elements: the tail is never computed. "
        "Round up: blocks = (n + threads_per_block - 1) // threads_per_block",
    ),
    too_many_blocks=(
        "n = {n} 时用了 {g} 个线程块, 每块 {tpb} 个线程: 其中 {idle} 个线程块没有元素可处理。请用 blocks = "
        "(n + threads_per_block - 1) // threads_per_block = {want}",
        "{g} blocks of {tpb} threads for n = {n}: {idle} block(s) have no element to work on. Use blocks = (n + "
        "threads_per_block - 1) // threads_per_block = {want}",
    ),
    launched_why=("{launcher} 以 {kernel}[{g}, {b}] 启动: {why}", "{launcher} launched {kernel}[{g}, {b}]: {why}"),
    for_n=(" (n={n} 时)", " for n={n}"),
    enough_blocks=("用足够多的线程块覆盖每个元素", "with enough blocks for every element"),
    tile_grid=("用二维的分块网格", "with a 2-D grid of tiles"),
    launched_times=(
        "{launcher} 启动了 {kernel} {times} 次{where}: 只启动一次, {how}",
        "{launcher} launched {kernel} {times} times{where}: launch it once, {how}",
    ),
    changed_input=(
        "{launcher} 修改了它的输入 {name} ({diff}): 输入必须保持原样",
        "{launcher} changed its input {name} ({diff}): the inputs must stay as they were",
    ),
    how_block=("i 里算上线程块索引了吗? 线程块够多吗?", "is the block index part of i, and are there enough blocks?"),
    how_loop=(
        "调用者为 n = {n} 选定了 {blocks} x {tpb} = {total} 个线程, 所以每个线程要循环: i = cuda.grid(1), 然后在 "
        "i < n 时 i += cuda.gridsize(1)。",
        "the caller chose {blocks} x {tpb} = {total} threads for n = {n}, so each thread loops: i = cuda.grid(1), "
        "then i += cuda.gridsize(1) while i < n.",
    ),
    how_loop_one=(
        "调用者为 n = {n} 选定了 {blocks} x {tpb} = {total} 个线程, 所以每个线程要循环: i = cuda.grid(1), 然后在 "
        "i < n 时 i += cuda.gridsize(1)。",
        "the caller chose {blocks} x {tpb} = {total} thread for n = {n}, so each thread loops: i = cuda.grid(1), "
        "then i += cuda.gridsize(1) while i < n.",
    ),
    missing=(
        "{kernel} 之后: {miss}。每个下标 0 <= i < n 都需要一个线程: {how}",
        "after {kernel}: {miss}. Every index 0 <= i < n needs a thread: {how}",
    ),
    wrong_values=("{launcher} 返回了错误的值: {diff}", "{launcher} returned wrong values: {diff}"),
    kernel_missing=("{kernel}[{blocks}, {tpb}], n = {n} 时: {miss}", "{kernel}[{blocks}, {tpb}] with n = {n}: {miss}"),
    kernel_changed=("{kernel} 修改了它的输入 {name} ({diff})", "{kernel} changed its input {name} ({diff})"),
    c_unreadable=(
        "{kernel}: 输出 c 已无法按传入时的样子读回",
        "{kernel}: the output c can no longer be read back as it was passed",
    ),
    past_n=(
        "{kernel} 写了 c[{i}], 但 n = {n}: 任何线程都不能写下标 >= n 的位置 (用 `if i < n` 保护, 用 n, 而不是数组的"
        "大小)",
        "{kernel} wrote c[{i}] although n = {n}: no thread may write at index >= n (guard with `if i < n`, using n, "
        "not the array's size)",
    ),
    kernel_wrong=("{kernel} 算出了错误的值: {diff}", "{kernel} computed wrong values: {diff}"),
    as_is_inputs=("{launcher} 在 numba 的后端上修改了它的输入", "{launcher} changed its inputs on numba's backend"),
    as_is_wrong=(
        "在 numba 自己的后端上, {launcher} 返回了错误的值: {diff}",
        "on numba's own backend {launcher} returned wrong values: {diff}",
    ),
    must_write_c=("{kernel} 必须写它的第三个参数 c (长度为 n)", "{kernel} must write its third argument c (length n)"),
    no_thread=("没有线程", "no thread"),
    global_thread=("全局线程 {t}", "global thread {t}"),
    not_grid_stride=(
        "不是网格跨步循环: c[{i}] 由{who}写入, 但在网格跨步循环中应由全局线程 i % (blocks * threads_per_block) = "
        "{want} 计算它 (从 cuda.grid(1) 开始, 步长为 cuda.gridsize(1))。这样相邻线程访问相邻元素, GPU 会把这些"
        "访问合并成一次内存事务 (合并访问)。",
        "not a grid-stride loop: c[{i}] was written by {who}, but in a grid-stride loop global thread i % (blocks "
        "* threads_per_block) = {want} computes it (start at cuda.grid(1), step by cuda.gridsize(1)). Neighbouring "
        "threads then touch neighbouring elements, which a GPU coalesces into one memory transaction.",
    ),
    mm_invalid=(
        "{launcher} 以 {kernel}[{g}, {b}] 启动: 不是有效的启动配置 (>= 1 的整数)",
        "{launcher} launched {kernel}[{g}, {b}]: not a valid launch configuration (integers >= 1)",
    ),
    mm_block=(
        "{launcher} 启动的线程块形状是 {b}: 每个线程块计算 C 的一个 TILE x TILE 分块, 所以 blockdim 必须是 "
        "(TILE, TILE) = ({tile}, {tile})",
        "{launcher} launched blocks of shape {b}: each block computes one TILE x TILE tile of C, so blockdim must "
        "be (TILE, TILE) = ({tile}, {tile})",
    ),
    mm_grid=(
        "{launcher} 为形状 ({m}, {n}) 的 C 启动了 {g} 个线程块的网格: 沿列 (x) 需要 ceil({n}/{tile}) = {tn} 个线程"
        "块, 沿行 (y) 需要 ceil({m}/{tile}) = {tm} 个, 即 ({tn}, {tm})",
        "{launcher} launched a grid of {g} blocks for C of shape ({m}, {n}): it needs ceil({n}/{tile}) = {tn} "
        "blocks along the columns (x) and ceil({m}/{tile}) = {tm} along the rows (y), i.e. ({tn}, {tm})",
    ),
    shape_is=("它的形状是 {shape}", "its shape is {shape}"),
    wrote_at=(
        "在 {index} 处它写的是 {wrote}, 而启动函数返回的是 {returned}",
        "at {index} it wrote {wrote} where the launcher returned {returned}",
    ),
    not_the_kernels=(
        "{launcher} 返回的值是对的, 但不是 {kernel} 写进它的输出参数的值 ({where}): 值必须由核函数计算, 启动函数"
        "返回核函数写出的结果{tail}",
        "{launcher} returned the right values, but not the ones {kernel} wrote into its output argument "
        "({where}): the kernel must compute them, and the launcher return what it wrote{tail}",
    ),
    # Said where the output held values before the launch that the kernel, run again on the
    # launcher's own inputs from a zeroed output, does not make (cuda_sim.Spy._own_outputs).
    prefilled=(
        "。(在启动函数给它的同一组输入上把输出清零后再次启动, 核函数写出的是那样的值: 启动前输出里的值来自主机, "
        "而不是核函数。)",
        ". (Launched again on the very inputs the launcher gave it, with its output zeroed, the kernel wrote "
        "that: what the output held before the launch came from the host, not from the kernel.)",
    ),
    mm_inputs=(
        "{launcher} 修改了它的输入 A 或 B: 它们必须保持原样",
        "{launcher} changed its input A or B: they must stay as they were",
    ),
    mm_missing=(
        "{kernel} 之后: {miss}。每个线程计算 C[row, col], 其中 row = blockIdx.y * TILE + threadIdx.y, col = "
        "blockIdx.x * TILE + threadIdx.x",
        "after {kernel}: {miss}. Each thread computes C[row, col] with row = blockIdx.y * TILE + threadIdx.y, col "
        "= blockIdx.x * TILE + threadIdx.x",
    ),
    mm_type=("{launcher} 返回了 {type}, 而不是 numpy 数组", "{launcher} returned {type}, not a numpy array"),
    mm_shape=(
        "{launcher} 返回的形状是 {shape}, 应为 ({m}, {n})",
        "{launcher} returned shape {shape}, expected ({m}, {n})",
    ),
    mm_dtype=(
        "{launcher} 返回的 dtype 是 {dtype}, 应为 float32",
        "{launcher} returned dtype {dtype}, expected float32",
    ),
    mm_wrong=("{launcher} 返回了错误的 C = A @ B: {diff}。", "{launcher} returned a wrong C = A @ B: {diff}."),
    mm_wrong_tiles=(
        "{launcher} 返回了错误的 C = A @ B: {diff}。K = {k} > TILE 时, 求和要跨越 {tiles} 个分块: 对每个分块都要"
        "加载一对新的 A 和 B 的分块 (本章的核函数只加载了一个分块)。",
        "{launcher} returned a wrong C = A @ B: {diff}. With K = {k} > TILE the sum runs over {tiles} tiles: load a "
        "new pair of tiles of A and B for each one (the chapter's kernel loads one tile only).",
    ),
    mm_alone=(
        "{kernel} 单独启动时 ({kernel}[{g}, {b}], 与你的启动函数的启动方式相同), 在其他输入和清零的 C 上得到了错误的 "
        "C = A @ B: {diff}。核函数必须由 A 和 B 计算 C, 不管启动函数在 C 里放了什么",
        "{kernel} launched on its own ({kernel}[{g}, {b}], as your launcher launches it) on other inputs and a "
        "zeroed C left a wrong C = A @ B: {diff}. The kernel must compute C from A and B, whatever the launcher "
        "put in C",
    ),
    traffic=(
        "{kernel} 为 A ({m}x{k}) @ B ({k}x{n}) 读取了 {reads} 次全局内存; 分块核函数最多读取 {bound} 次 ({blocks} "
        "个线程块中的每一个各加载 A 和 B 的 {tiles} 个分块, 每个线程每个分块读一个元素); 朴素核函数读取 {naive} 次。"
        "线程块 {block} 的线程 {thread} 进行了 {count} 次全局读取。在 k 循环内只读共享内存中的分块, 并把累加和保存"
        "在局部变量中。",
        "{kernel} read global memory {reads} times for A ({m}x{k}) @ B ({k}x{n}); a tiled kernel reads at most "
        "{bound} (each of the {blocks} block(s) loads {tiles} tile(s) of A and of B, one element per thread per "
        "tile); a naive kernel reads {naive}. Thread {thread} of block {block} made {count} global reads. Inside "
        "the k loop read only the shared tiles, and keep the running sum in a local variable.",
    ),
    writes_many=(
        "线程块 {block} 的线程 {thread} 写了 {count} 次全局内存: 在局部变量中累加, 最后只写一次 C[row, col]",
        "thread {thread} of block {block} wrote global memory {count} times: accumulate the sum in a local "
        "variable and write C[row, col] once, at the end",
    ),
    global_reads=("全局读取", "global reads"),
    global_atomics=("全局内存的原子更新", "atomic updates of global memory"),
    spread=(
        "线程块 {block} 的线程 {thread} 进行了 {count} 次{what}, 而 {launcher} 这次启动的 {threads} 个线程每个只有 "
        "{each} 个元素要计数: 每个线程计数自己的元素 (每个元素一个线程, 或用网格跨步循环), 对 bins 使用 "
        "cuda.atomic.add",
        "thread {thread} of block {block} made {count} {what}, where the {threads} threads of {launcher}'s launch "
        "have {each} element(s) each to count: every thread counts its own element(s) (one thread per element, or "
        "a grid-stride loop), with cuda.atomic.add on the bins",
    ),
    hist_input=(
        "{launcher} 修改了它的输入 data: 它必须保持原样",
        "{launcher} changed its input data: it must stay as it was",
    ),
    hist_block=(
        "{launcher} 以 {kernel}[{g}, {b}] 启动: 线程块应有 threads_per_block = {tpb} 个线程 (由调用者选定)",
        "{launcher} launched {kernel}[{g}, {b}]: launch blocks of threads_per_block = {tpb} threads (the caller's "
        "choice)",
    ),
    hist_type=(
        "{launcher} 返回了 {type}, 而不是计数的 numpy 数组",
        "{launcher} returned {type}, not a numpy array of counts",
    ),
    hist_shape=(
        "{launcher} 返回的数组形状是 {shape}, dtype 是 {dtype}: 计数应是一个新的 int32 数组, 有 n_bins = {bins} 个"
        "元素 (np.zeros({bins}, np.int32))",
        "{launcher} returned an array of shape {shape} and dtype {dtype}: the counts are a NEW int32 array of "
        "n_bins = {bins} elements (np.zeros({bins}, np.int32))",
    ),
    hist_shares=(
        "{launcher} 返回了它的输入 data: 请返回一个新的计数数组",
        "{launcher} returned its input data: return a NEW array of counts",
    ),
    hist_again=(
        "{launcher}: 对同一数据的第 {call} 次调用返回的计数与第一次不同 ({diff}): 每次调用都从零开始计数; 调用之间"
        "不要保留状态 (每次调用用一个新的、清零的 bins 数组)",
        "{launcher}: call {call} on the same data returned different counts than the first ({diff}): each call "
        "counts from zero; keep no state between calls (a new bins array per call, zeroed)",
    ),
    hist_few=(
        "{launcher}: 只计数了 {n} 个元素中的 {total} 个 ({diff}): 有些元素没有线程处理。n 不是 threads_per_block "
        "的倍数时, 线程块数要向上取整 (或使用网格跨步循环)",
        "{launcher}: it counted {total} of the {n} elements ({diff}): some elements got no thread. With n not a "
        "multiple of threads_per_block, round the number of blocks up (or loop with a grid-stride loop)",
    ),
    hist_many=(
        "{launcher}: 为 {n} 个元素计数了 {total} 个值: 有的计了两次, 或保留了之前调用的计数 (每次调用都从零开始) "
        "({diff})",
        "{launcher}: it counted {total} values for {n} elements, some twice, or counts kept from an earlier call "
        "(each call starts from zeros) ({diff})",
    ),
    hist_wrong=("{launcher}: 计数错误 ({diff})", "{launcher}: wrong counts ({diff})"),
    hist_alone=(
        "{kernel} 单独启动时 ({kernel}[{g}, {b}], 与你的启动函数第一次启动的方式相同), 在其他数据和清零的 bins 上"
        "计数错误: {diff}。核函数必须在一次启动中, 从零开始把 data 的每个元素计入 bins",
        "{kernel} launched on its own ({kernel}[{g}, {b}], as your launcher first launches it) on other data and "
        "zeroed bins counted wrong: {diff}. The kernel must count every element of data into bins, from zero, in "
        "one launch",
    ),
    dot_alone=(
        "{kernel} 单独启动时 ({kernel}[{blocks}, {tpb}]), 在其他输入和清零的 partial 上留下 partial[{k}] = {got}, "
        "而不是它的线程块之和 {want}: 核函数必须由 a 和 b 计算每个线程块的和, 不管启动函数在 partial 里放了什么",
        "{kernel} launched on its own ({kernel}[{blocks}, {tpb}]) on other inputs and a zeroed partial left "
        "partial[{k}] = {got}, not its block's sum {want}: the kernel must compute each block's sum from a and b, "
        "whatever the launcher put in partial",
    ),
    dot_input=(
        "{launcher} 修改了它的输入 {name}: 输入必须保持原样",
        "{launcher} changed its input {name}: the inputs must stay as they were",
    ),
    dot_times=(
        "{launcher} 启动了 {kernel} {times} 次: 只启动一次",
        "{launcher} launched {kernel} {times} times: launch it once",
    ),
    dot_config=(
        "{launcher} 为 n = {n} 以 {kernel}[{g}, {b}] 启动: 应恰好启动 ceil(n / threads_per_block) = {blocks} 个"
        "线程块, 每块 threads_per_block = {tpb} 个线程, 每个线程块一个部分和",
        "{launcher} launched {kernel}[{g}, {b}] for n = {n}: launch exactly ceil(n / threads_per_block) = "
        "{blocks} block(s) of threads_per_block = {tpb} threads, one partial sum per block",
    ),
    dot_shared_dtype=(
        "{kernel} 的共享数组 {name} 是 {dtype}: 请在 float64 共享数组 (cuda.shared.array(size, numba.float64)) "
        "中累加乘积, 这样和才能保留足够的有效数字",
        "{kernel}'s shared array {name} is {dtype}: accumulate the products in a float64 shared array "
        "(cuda.shared.array(size, numba.float64)) so the sum keeps its digits",
    ),
    dot_shared_size=(
        "{kernel} 的共享数组 {name} 只有 {cells} 个单元, 而线程块有 {tpb} 个线程: 每个线程一个单元, 所以至少要有"
        "最大线程块的大小 (1024)",
        "{kernel}'s shared array {name} has {cells} cells for blocks of {tpb} threads: one cell per thread, so at "
        "least the largest block (1024)",
    ),
    dot_reads=(
        "线程块 {block} 的线程 {thread} 从全局内存读取了 a 和 b 的 {count} 个元素: 每个线程只读一次自己的 a[i] 和 "
        "b[i], 由线程块在共享内存中用 cuda.syncthreads() 按树形把乘积相加 (而不是让一个线程循环累加)",
        "thread {thread} of block {block} read {count} elements of a and b from global memory: each thread reads "
        "its own a[i] and b[i] once, and the block adds the products in shared memory, in a tree with "
        "cuda.syncthreads() (not one thread looping over them)",
    ),
    dot_unwritten=(
        "{kernel} 之后: partial[{k}] 从未被写入{tail}",
        "after {kernel}: partial[{k}] was never written{tail}",
    ),
    dot_writer=(
        "partial[{k}] 由全局线程 {t} 写入, 而不是线程块 {k} 的线程 0: 树形归约之后, 由线程 0 独自 "
        "(`if cuda.threadIdx.x == 0:`) 写出它的线程块之和",
        "partial[{k}] was written by global thread {t}, not by thread 0 of block {k}: after the tree, thread 0 "
        "alone (`if cuda.threadIdx.x == 0:`) writes its block's sum",
    ),
    dot_block_sum=(
        "partial[{k}] = {got}, 但线程块 {k} 的乘积 (元素 {lo} 到 {hi}) 之和是 {want}: 线程块的每个乘积都必须进入"
        "归约树, 而且归约树必须把每个单元恰好加一次{tail}",
        "partial[{k}] = {got}, but the products of block {k} (elements {lo} to {hi}) sum to {want}: every product "
        "of the block must reach the tree, and the tree must add every cell once{tail}",
    ),
    dot_type=(
        "{launcher} 返回了 {type}: 请把点积作为 Python float 返回",
        "{launcher} returned {type}: return the dot product as a Python float",
    ),
    dot_empty=(
        "{launcher} 对两个空数组返回了 {got}, 而不是 0.0",
        "{launcher} of two empty arrays returned {got}, not 0.0",
    ),
    dot_error=(
        "{launcher} 返回了 {got}, 但 a . b = {want} (相对误差 {err} > {tol}): 请在主机上用 float64 把部分和相加",
        "{launcher} returned {got}, but a . b = {want} (relative error {err} > {tol}): sum the partials on the "
        "host in float64",
    ),
    traffic_figures=(
        "    全局读取 {reads} 次 (分块上限 {bound}, 朴素 {naive}), 共享读取 {shared} 次, 线程 {threads} 个",
        "    global reads {reads} (tiled bound {bound}, naive {naive}), shared reads {shared}, threads {threads}",
    ),
    # the self-checks' cases, as each ✔ or ✘ line names them
    va_config=(
        "启动配置: n=1000, 每块 256 个线程 -> 4 个线程块",
        "launch config: n=1000, 256 threads/block -> 4 blocks",
    ),
    va_default=(
        "不给 threads_per_block 调用 launch_vec_add(a, b): 每块 256 个线程 (n=600 -> 3 个线程块)",
        "launch_vec_add(a, b) without threads_per_block: 256 threads/block (n=600 -> 3 blocks)",
    ),
    va_tail=("尾部: n=37, 每块 16 个线程", "tail: n=37, 16 threads/block"),
    va_one=("n=1, 每块 1024 个线程, int32", "n=1 with 1024 threads/block, int32"),
    va_empty=("n=0 返回空数组", "n=0 returns an empty array"),
    va_kernel=(
        "核函数不访问 i >= n 的位置 (缓冲区比 n 长)",
        "kernel touches nothing at i >= n (buffers longer than n)",
    ),
    gs_exact=("恰好启动 blocks x threads", "launches exactly blocks x threads"),
    gs_small=("网格比 n 小: 2 个线程块 x 8 个线程, n=50", "grid smaller than n: 2 blocks x 8 threads, n=50"),
    gs_large=("网格比 n 大: 3 个线程块 x 8 个线程, n=5", "grid larger than n: 3 blocks x 8 threads, n=5"),
    gs_pattern=("网格跨步模式 (合并访问)", "grid-stride pattern (coalesced)"),
    gs_kernel=(
        "核函数不访问 i >= n 的位置: 2 个线程块 x 4 个线程, n=19, 缓冲区长 24",
        "kernel touches nothing at i >= n: 2 blocks x 4 threads, n=19, buffers of 24",
    ),
    mm_case_config=("C 为 20 x 40 时的启动配置", "launch config for C 20 x 40"),
    mm_case_one=("一个分块: 16 x 16 @ 16 x 16", "one tile: 16 x 16 @ 16 x 16"),
    mm_case_ragged=(
        "不整齐的边缘和 K 方向的两个分块: 5 x 20 @ 20 x 3",
        "ragged edges and two tiles of K: 5 x 20 @ 20 x 3",
    ),
    mm_case_traffic=(
        "分块核函数的全局内存流量: 16 x 48 @ 48 x 16",
        "global traffic of a tiled kernel: 16 x 48 @ 48 x 16",
    ),
    hi_tail=("300 个值分到 7 个桶, 每块 64 个线程 (有尾部)", "300 values into 7 bins, 64 threads/block (a tail)"),
    hi_one_bin=("所有值落在一个桶里: 40 个值, 1 个桶", "every value in one bin: 40 values, 1 bin"),
    hi_default=(
        "threads_per_block 默认为 256: 600 个值, 10 个桶",
        "threads_per_block defaults to 256: 600 values, 10 bins",
    ),
    hi_empty=("没有数据: n = 0 时不启动核函数, 返回全零", "no data: n = 0 launches nothing and returns zeros"),
    hi_twice=("调用两次: 每次调用都从零开始计数", "called twice: each call counts from zero"),
    dot_case_one=("n = 64, 一个 64 线程的线程块", "n = 64, one block of 64 threads"),
    dot_case_tail=("n = 1000, 每块 256 个线程 (尾部 232 个)", "n = 1000, blocks of 256 (a tail of 232)"),
    dot_case_f32=("n = 5, 每块 8 个线程, float32 输入", "n = 5, blocks of 8, float32 inputs"),
    dot_case_largest=("n = 1500, 每块 1024 个线程 (最大的线程块)", "n = 1500, blocks of 1024 (the largest block)"),
    dot_case_default=("threads_per_block 默认为 256: n = 300", "threads_per_block defaults to 256: n = 300"),
    dot_case_empty=("没有数据: n = 0 时不启动核函数, 返回 0.0", "no data: n = 0 launches nothing and returns 0.0"),
)

NONE = Both("", "")  # an empty field: no hint, no tail

TILE = 16  # the tiled matmul's tile edge (the notebook's module constant)
SENTINEL = -7  # what the grader puts in output cells a kernel must not touch


def vec_inputs(n: int, dtype="float32") -> tuple[np.ndarray, np.ndarray]:
    """Two distinct, exactly representable 1-D inputs of length n (any dtype the exercise uses)."""
    i = np.arange(n)
    return (i % 251 + 1).astype(dtype), (i * 7 % 13 + 100).astype(dtype)


def mat_inputs(m: int, k: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """A (m x k) and B (k x n), float32, small integers: every product sum is exact in float32."""
    a = ((np.arange(m * k).reshape(m, k) * 5 + 3) % 7 - 3).astype(np.float32)
    b = ((np.arange(k * n).reshape(k, n) * 3 + 1) % 5 - 2).astype(np.float32)
    return a, b


def _first_diff(got: np.ndarray, want: np.ndarray) -> Both | str:
    """Where ``got`` differs from ``want``, a phrase in both languages ("" where it does not)."""
    if got is None:
        return M.both("unreadable")
    if got.shape != want.shape:
        return M.both("reshaped", now=got.shape, was=want.shape)
    bad = np.argwhere(got != want)
    if not len(bad):
        return ""
    idx = tuple(int(v) for v in bad[0])
    return M.both(
        "wrong_elements",
        bad=len(bad),
        count=want.size,
        index=", ".join(map(str, idx)),
        got=repr(got[idx]),
        want=repr(want[idx]),
    )


def _same(got, want: np.ndarray) -> bool:
    return got is not None and got.shape == want.shape and np.array_equal(got, want)


def _writers(launch: dict, shape, kernel_name: str, what: str, call: str) -> np.ndarray:
    """Which thread wrote each element of a launch's output. A check that cannot tell fails: it
    never passes a launch it did not see."""
    out = launch.get("writers")
    if not isinstance(out, np.ndarray) or out.ndim != len(shape):
        raise CheckFailed(M("no_writers", kernel=kernel_name, what=M.both(what)) + _replay(call))
    return out


def _unwritten(writer: np.ndarray, limit=None) -> Both | str:
    w = writer if limit is None else writer[:limit]
    missing = np.argwhere(w == -1)
    if not len(missing):
        return ""
    first = [tuple(int(v) for v in m) for m in missing[:5]]
    shown = ", ".join(str(f[0]) if len(f) == 1 else str(f) for f in first)
    return M.both("unwritten", count=len(missing), first=shown)


def _no_launch_msg(name, launcher):
    return M("no_launch", launcher=launcher, name=name)


# ---------------------------------------------------------------------------------------------
# judging what a launcher returned


def _check_returned(res: dict, n_shape, dtype, name, names=("a", "b")):
    if res["type"] != "ndarray":
        raise CheckFailed(M("returned_type", name=name, type=res["type"]))
    if tuple(res["shape"]) != n_shape:
        raise CheckFailed(M("returned_shape", name=name, shape=tuple(res["shape"]), want=n_shape))
    if res["dtype"] != str(np.dtype(dtype)):
        raise CheckFailed(M("returned_dtype", name=name, dtype=res["dtype"], want=np.dtype(dtype)))
    for i in res["shares"]:
        raise CheckFailed(M("returned_shares", name=name, input=names[i]))


# ---------------------------------------------------------------------------------------------
# vecAdd


def _vec_args(n, dtype, tpb, blocks, default_tpb=False) -> tuple:
    """The launcher's arguments, with fresh inputs (the judge keeps its own copy to compare)."""
    a, b = vec_inputs(n, dtype)
    return (a, b) if default_tpb else (a, b, tpb) if blocks is None else (a, b, blocks, tpb)


def _vec_call(n, dtype, launcher, args) -> str:
    return f"a, b = vec_inputs({n}, {str(np.dtype(dtype))!r}); {launcher}({', '.join(['a', 'b', *map(str, args[2:])])})"


@replayable
def check_vec_add_launch(
    ask,
    n: int,
    tpb: int,
    dtype="float32",
    *,
    kernel_name="vec_add",
    launcher="launch_vec_add",
    blocks: int | None = None,
    default_tpb: bool = False,
) -> tuple:
    """One launch, ``tpb`` threads per block, the fewest blocks that cover n (or exactly ``blocks``).
    ``default_tpb``: call the launcher without threads_per_block (its default must be ``tpb``)."""
    ask = _asked(ask, launcher)
    args = _vec_args(n, dtype, tpb, blocks, default_tpb)
    call = _vec_call(n, dtype, launcher, args)
    launches = ask("config", launcher=launcher, kernel_name=kernel_name, args=args, replay=call)["launches"]
    want_blocks = blocks if blocks is not None else -(-n // tpb)
    if n == 0 and not launches:
        return (0,)  # nothing to do: not launching at all is right
    g, bd, raw_g, raw_b = _one_launch(
        launches, kernel_name, launcher, call, M.both("for_n", n=n), M.both("enough_blocks")
    )
    if g is None:
        invalid = "invalid_config_zero" if n == 0 else "invalid_config"
        raise CheckFailed(M(invalid, launcher=launcher, kernel=kernel_name, g=raw_g, b=raw_b) + _replay(call))
    g, bd = tuple(g), tuple(bd)
    if bd != (tpb, 1, 1):
        asked = M.both("default_tpb" if default_tpb else "asked_tpb", tpb=tpb)
        raise CheckFailed(
            M("block_threads", launcher=launcher, n=bd[0] * bd[1] * bd[2], b=raw_b, asked=asked) + _replay(call)
        )
    if n == 0 and blocks is None:
        return g[:1]
    if g[1:] != (1, 1) or g[0] != want_blocks:
        if blocks is not None:
            raise CheckFailed(M("blocks_asked", launcher=launcher, g=raw_g, blocks=blocks) + _replay(call))
        few = g[0] * tpb < n
        why = (
            M.both("too_few_blocks", g=g[0], tpb=tpb, threads=g[0] * tpb, n=n)
            if few
            else M.both("too_many_blocks", g=g[0], tpb=tpb, n=n, idle=g[0] - want_blocks, want=want_blocks)
        )
        raise CheckFailed(
            M("launched_why", launcher=launcher, kernel=kernel_name, g=raw_g, b=raw_b, why=why) + _replay(call)
        )
    return g[:1]


def _run_vec_launcher(ask, n, tpb, dtype, device, kernel_name, launcher, blocks=None):
    ask = _asked(ask, launcher)
    args = _vec_args(n, dtype, tpb, blocks)
    call = _vec_call(n, dtype, launcher, args)
    obs = ask("launcher", launcher=launcher, kernel_name=kernel_name, args=args, device=device, replay=call)
    return obs, call


@replayable
def check_vec_add_results(
    ask,
    n: int,
    tpb: int,
    dtype="float32",
    device="cpu",
    *,
    kernel_name="vec_add",
    launcher="launch_vec_add",
    blocks=None,
) -> dict:
    """The launcher returns a new array equal to a + b; the kernel faults nowhere; inputs unchanged."""
    obs, call = _run_vec_launcher(ask, n, tpb, dtype, device, kernel_name, launcher, blocks)
    a0, b0 = vec_inputs(n, dtype)  # the inputs as they were sent, made again here
    for arr, orig, nm in zip(obs["inputs"], (a0, b0), "ab"):
        if not _same(arr, orig):
            raise CheckFailed(
                M("changed_input", launcher=launcher, name=nm, diff=_first_diff(arr, orig)) + _replay(call)
            )
    launches = obs["launches"]
    if n > 0 and not launches:
        raise CheckFailed(_no_launch_msg(kernel_name, launcher) + _replay(call))
    if device == "cpu":
        for item in launches:
            out = _writers(item, (n,), kernel_name, "out_c", call)
            if out.shape == (n,):
                miss = _unwritten(out)
                if miss:
                    if blocks is None:
                        how = M.both("how_block")
                    else:
                        total = blocks * tpb
                        loop = "how_loop" if total > 1 else "how_loop_one"
                        how = M.both(loop, blocks=blocks, tpb=tpb, total=total, n=n)
                    raise CheckFailed(M("missing", kernel=kernel_name, miss=miss, how=how) + _replay(call))
    _check_returned(obs["result"], (n,), dtype, launcher)
    want = a0 + b0
    c = obs["result"]["value"]
    if not np.array_equal(c, want):
        raise CheckFailed(M("wrong_values", launcher=launcher, diff=_first_diff(c, want)) + _replay(call))
    return {"launches": len(launches)}


@replayable
def check_vec_add_kernel(
    ask,
    n: int,
    tpb: int,
    extra: int = 3,
    dtype="float32",
    device="cpu",
    *,
    kernel_name="vec_add",
    blocks: int | None = None,
) -> dict:
    """Launch the kernel directly on arrays LONGER than n (n + extra), with more threads than n.

    No thread may touch index n or beyond (the buffers go on, so only ``n`` tells the kernel
    where to stop); c[:n] == a + b; c[n:] and the inputs untouched.
    """
    ask = _asked(ask, kernel_name)
    size = n + extra
    a0, b0 = vec_inputs(size, dtype)
    c0 = np.full(size, SENTINEL, dtype)
    if blocks is None:
        blocks = -(-n // tpb) + 1  # one whole block more than needed
    call = (
        f"a, b = vec_inputs({size}, {str(np.dtype(dtype))!r}); c = np.full({size}, {SENTINEL}, a.dtype); "
        f"{kernel_name}[{blocks}, {tpb}](a, b, c, {n})  # buffers of {size}, n = {n}"
    )
    obs = ask(
        "kernel",
        kernel_name=kernel_name,
        griddim=blocks,
        blockdim=tpb,
        args=(a0.copy(), b0.copy(), c0, n),
        device=device,
        replay=call,
        readonly=(0, 1),
        limits={0: n, 1: n, 2: n},
    )
    a, b, c = obs["args"]
    if device == "cpu":
        writers = obs["writers"]
        miss = _unwritten(writers, n) if writers is not None else M.both("not_an_array")
        if miss:
            raise CheckFailed(
                M("kernel_missing", kernel=kernel_name, blocks=blocks, tpb=tpb, n=n, miss=miss) + _replay(call)
            )
    for arr, orig, nm in ((a, a0, "a"), (b, b0, "b")):
        if not _same(arr, orig):
            raise CheckFailed(
                M("kernel_changed", kernel=kernel_name, name=nm, diff=_first_diff(arr, orig)) + _replay(call)
            )
    if c is None or c.shape != (size,):
        raise CheckFailed(M("c_unreadable", kernel=kernel_name) + _replay(call))
    tail = c[n:]
    if not np.all(tail == SENTINEL):
        i = int(np.argwhere(tail != SENTINEL)[0][0]) + n
        raise CheckFailed(M("past_n", kernel=kernel_name, i=i, n=n) + _replay(call))
    want = a0[:n] + b0[:n]
    if not np.array_equal(c[:n], want):
        raise CheckFailed(M("kernel_wrong", kernel=kernel_name, diff=_first_diff(c[:n], want)) + _replay(call))
    return {"threads": blocks * tpb, "writers": obs["writers"]}


@replayable
def check_launcher_as_is(ask, n: int, tpb: int, dtype="float32", *, launcher="launch_vec_add", blocks=None) -> None:
    """Run the launcher unchanged, on whatever numba.cuda is where it runs (numba's own simulator
    on a CPU, the GPU on a GPU machine), and compare with numpy."""
    ask = _asked(ask, launcher)
    args = _vec_args(n, dtype, tpb, blocks)
    call = _vec_call(n, dtype, launcher, args)
    a0, b0 = vec_inputs(n, dtype)
    obs = ask("as_is", launcher=launcher, args=args)
    if not all(_same(arr, orig) for arr, orig in zip(obs["inputs"], (a0, b0))):
        raise CheckFailed(M("as_is_inputs", launcher=launcher) + _replay(call))
    _check_returned(obs["result"], (n,), dtype, launcher)
    c = obs["result"]["value"]
    if not np.array_equal(c, a0 + b0):
        raise CheckFailed(M("as_is_wrong", launcher=launcher, diff=_first_diff(c, a0 + b0)) + _replay(call))


@replayable
def check_grid_stride_pattern(
    ask,
    n: int,
    blocks: int,
    tpb: int,
    dtype="float32",
    *,
    kernel_name="vec_add_grid_stride",
    launcher="launch_vec_add_grid_stride",
) -> None:
    """Element i is computed by global thread i % (blocks * threads_per_block): the grid-stride
    loop, in which neighbouring threads touch neighbouring elements (coalesced accesses)."""
    obs, call = _run_vec_launcher(ask, n, tpb, dtype, "cpu", kernel_name, launcher, blocks)
    if not obs["launches"]:
        raise CheckFailed(_no_launch_msg(kernel_name, launcher) + _replay(call))
    first = obs["launches"][0]
    out = first.get("writers")
    if out is None or out.shape != (n,):
        raise CheckFailed(M("must_write_c", kernel=kernel_name) + _replay(call))
    stride = first["griddim"][0] * first["blockdim"][0]
    want = np.arange(n) % stride
    bad = np.argwhere(out != want)
    if len(bad):
        i = int(bad[0][0])
        who = M.both("no_thread") if out[i] < 0 else M.both("global_thread", t=int(out[i]))
        raise CheckFailed(M("not_grid_stride", i=i, who=who, want=i % stride) + _replay(call))


# ---------------------------------------------------------------------------------------------
# tiled matmul


def _mm_call(m, k, n, launcher="launch_tiled_matmul"):
    return f"A, B = mat_inputs({m}, {k}, {n}); {launcher}(A, B)"


def _one_launch(launches, kernel_name, launcher, call, where: Both, how: Both) -> tuple:
    """The one launch a launcher must make: (griddim, blockdim, and both as the cell wrote them);
    no launch or several fail with their message (``where``: " for n=...", ``how``: what one
    launch must cover, phrases in both languages)."""
    if not launches:
        raise CheckFailed(_no_launch_msg(kernel_name, launcher) + _replay(call))
    if len(launches) > 1:
        raise CheckFailed(
            M("launched_times", launcher=launcher, kernel=kernel_name, times=len(launches), where=where, how=how)
            + _replay(call)
        )
    raw_g, raw_b = launches[0]["raw"]
    return launches[0]["griddim"], launches[0]["blockdim"], raw_g, raw_b


@replayable
def check_matmul_launch(
    ask, m: int, k: int, n: int, *, kernel_name="tiled_matmul", launcher="launch_tiled_matmul"
) -> tuple:
    """One launch of TILE x TILE blocks, just enough of them to cover C (m x n)."""
    ask = _asked(ask, launcher)
    call = _mm_call(m, k, n, launcher)
    launches = ask("config", launcher=launcher, kernel_name=kernel_name, args=mat_inputs(m, k, n), replay=call)[
        "launches"
    ]
    if not launches:
        if m == 0 or n == 0:
            return ()
        raise CheckFailed(_no_launch_msg(kernel_name, launcher) + _replay(call))
    g, bd, raw_g, raw_b = _one_launch(launches, kernel_name, launcher, call, NONE, M.both("tile_grid"))
    if g is None:
        raise CheckFailed(M("mm_invalid", launcher=launcher, kernel=kernel_name, g=raw_g, b=raw_b) + _replay(call))
    g, bd = tuple(g), tuple(bd)
    if bd != (TILE, TILE, 1):
        raise CheckFailed(M("mm_block", launcher=launcher, b=raw_b, tile=TILE) + _replay(call))
    tiles_n, tiles_m = -(-n // TILE), -(-m // TILE)
    if g not in ((tiles_n, tiles_m, 1), (tiles_m, tiles_n, 1)):
        raise CheckFailed(
            M("mm_grid", launcher=launcher, g=raw_g, m=m, n=n, tile=TILE, tn=tiles_n, tm=tiles_m) + _replay(call)
        )
    return g


def _not_the_kernels(launches, got: np.ndarray, kernel_name: str, launcher: str) -> str:
    """On the checking simulator: why ``got`` (what the launcher returned) is not what the kernel
    wrote into its output argument in its last launch (leading block: a padded output may be cut);
    "" when it is, or when nothing was recorded. So a launcher cannot compute the answer on the host
    and launch a kernel that does nothing."""
    outs = [item for item in launches if isinstance(item.get("out"), np.ndarray)]
    if not outs:
        return ""
    out, prefilled = outs[-1]["out"], outs[-1].get("prefilled")
    if out.ndim == got.ndim and all(a >= b for a, b in zip(out.shape, got.shape)):
        if np.array_equal(out[tuple(slice(0, s) for s in got.shape)], got):
            return ""
    where = M.both("shape_is", shape=str(out.shape))
    if out.shape == got.shape:
        i = tuple(int(v) for v in np.argwhere(out != got)[0])
        where = M.both("wrote_at", index=list(i), wrote=repr(out[i].item()), returned=repr(got[i].item()))
    return M("not_the_kernels", launcher=launcher, kernel=kernel_name, where=where, tail=_prefilled(prefilled))


def _prefilled(prefilled) -> Both:
    """The tail said where the output held values before the launch (M's ``prefilled``)."""
    return M.both("prefilled") if prefilled else NONE


@replayable
def check_matmul_results(
    ask,
    m: int,
    k: int,
    n: int,
    device="cpu",
    *,
    kernel_name="tiled_matmul",
    launcher="launch_tiled_matmul",
    stats: bool = False,
):
    """C = A @ B exactly (small integers in float32); no faults, races or divergent barriers.
    Returns the first launch as observed (with per-thread traffic if ``stats``), or None."""
    ask = _asked(ask, launcher)
    A0, B0 = mat_inputs(m, k, n)
    call = _mm_call(m, k, n, launcher)
    obs = ask(
        "launcher",
        launcher=launcher,
        kernel_name=kernel_name,
        args=mat_inputs(m, k, n),
        device=device,
        replay=call,
        stats=stats,
    )
    if not all(_same(arr, orig) for arr, orig in zip(obs["inputs"], (A0, B0))):
        raise CheckFailed(M("mm_inputs", launcher=launcher) + _replay(call))
    launches = obs["launches"]
    if m and n and not launches:
        raise CheckFailed(_no_launch_msg(kernel_name, launcher) + _replay(call))
    first = launches[0] if launches else None
    if first is not None:
        out = _writers(first, (m, n), kernel_name, "out_C", call)
        if out.shape == (m, n):
            miss = _unwritten(out)
            if miss:
                raise CheckFailed(M("mm_missing", kernel=kernel_name, miss=miss) + _replay(call))
    want = (A0.astype(np.float64) @ B0.astype(np.float64)).astype(np.float32)
    res = obs["result"]
    if res["type"] != "ndarray":
        raise CheckFailed(M("mm_type", launcher=launcher, type=res["type"]) + _replay(call))
    if tuple(res["shape"]) != (m, n):
        raise CheckFailed(M("mm_shape", launcher=launcher, shape=tuple(res["shape"]), m=m, n=n) + _replay(call))
    if res["dtype"] != "float32":
        raise CheckFailed(M("mm_dtype", launcher=launcher, dtype=res["dtype"]) + _replay(call))
    C = res["value"]
    if not np.array_equal(C, want):
        diff = _first_diff(C, want)
        if k > TILE:
            wrong = M("mm_wrong_tiles", launcher=launcher, diff=diff, k=k, tiles=-(-k // TILE))
        else:
            wrong = M("mm_wrong", launcher=launcher, diff=diff)
        raise CheckFailed(wrong + _replay(call))
    why = _not_the_kernels(launches, C, kernel_name, launcher)
    if why:
        raise CheckFailed(why + _replay(call))
    if device == "cpu" and first is not None and first["griddim"] and first["blockdim"] and m and n:
        alone = _check_matmul_kernel_alone(ask, m, k, n, first, kernel_name, stats=stats)
        if stats:
            first = {**first, "alone_stats": alone.get("stats")}
    return first


def _check_matmul_kernel_alone(ask, m, k, n, launch, kernel_name, stats: bool = False) -> dict:
    """The kernel alone, launched as the launcher launched it, on inputs the launcher never saw and
    a zeroed C, must compute A @ B: the kernel, not the host, computes C."""
    A, B = (x + 1 for x in mat_inputs(m, k, n))  # small integers still: every sum exact in float32
    g, b = tuple(launch["griddim"]), tuple(launch["blockdim"])
    call = (
        f"A, B = mat_inputs({m}, {k}, {n}); A, B = A + 1, B + 1; C = np.zeros(({m}, {n}), np.float32); "
        f"{kernel_name}[{g}, {b}](A, B, C)"
    )
    obs = ask(
        "kernel",
        kernel_name=kernel_name,
        griddim=g,
        blockdim=b,
        args=(A, B, np.zeros((m, n), np.float32)),
        replay=call,
        readonly=(0, 1),
        stats=stats,
    )
    C, want = obs["args"][2], (A.astype(np.float64) @ B.astype(np.float64)).astype(np.float32)
    if not np.array_equal(C, want):
        raise CheckFailed(M("mm_alone", kernel=kernel_name, g=g, b=b, diff=_first_diff(C, want)) + _replay(call))
    return obs


def _coords(a: np.ndarray, i: int) -> tuple:
    return tuple(int(v) for v in a[i][:2])


@replayable
def check_matmul_traffic(
    ask, m: int, k: int, n: int, *, kernel_name="tiled_matmul", launcher="launch_tiled_matmul"
) -> dict:
    """Global traffic of a tiled kernel: each block reads each needed tile of A and B once, so no
    more than 2 * TILE * TILE * ceil(K / TILE) global reads per block in all, and every thread
    writes C once (accumulating in a register). A naive kernel reads 2 * K per thread."""
    ask = _asked(ask, launcher)
    first = check_matmul_results(ask, m, k, n, "cpu", kernel_name=kernel_name, launcher=launcher, stats=True)
    call = _mm_call(m, k, n, launcher)
    # the launcher's launch, and the kernel alone on a zeroed C: a kernel is tiled whatever C held
    # before the launch, not only on the launcher's own inputs
    alone = first.get("alone_stats")
    st = first["stats"]
    if isinstance(alone, dict) and isinstance(alone.get("global_reads"), np.ndarray):
        if int(alone["global_reads"].sum()) > int(st["global_reads"].sum()):
            st = alone
    g = first["griddim"]
    blocks = g[0] * g[1] * g[2]
    tiles = -(-k // TILE)
    bound = blocks * 2 * TILE * TILE * tiles
    reads = int(st["global_reads"].sum())
    naive = blocks * TILE * TILE * 2 * k
    figures = {
        "global_reads": reads,
        "tiled_bound": bound,
        "naive": naive,
        "shared_reads": int(st["shared_reads"].sum()),
        "threads": int(len(st["global_reads"])),
    }
    if reads > bound:
        w = int(np.argmax(st["global_reads"]))
        raise CheckFailed(
            M(
                "traffic",
                kernel=kernel_name,
                reads=reads,
                m=m,
                k=k,
                n=n,
                bound=bound,
                blocks=blocks,
                tiles=tiles,
                naive=naive,
                thread=_coords(st["thread"], w),
                block=_coords(st["block"], w),
                count=int(st["global_reads"][w]),
            )
            + _replay(call)
        )
    if len(st["global_writes"]):
        w = int(np.argmax(st["global_writes"]))
        if st["global_writes"][w] > 1:
            raise CheckFailed(
                M(
                    "writes_many",
                    thread=_coords(st["thread"], w),
                    block=_coords(st["block"], w),
                    count=int(st["global_writes"][w]),
                )
                + _replay(call)
            )
    return figures


# ---------------------------------------------------------------------------------------------
# histogram (atomics)


def hist_inputs(n: int, n_bins: int) -> np.ndarray:
    """n int32 values in [0, n_bins), unevenly spread, so that many threads hit the same bin."""
    i = np.arange(n, dtype=np.int64)
    return ((i * i * 11 + i * 37 + 5) % max(n_bins, 1)).astype(np.int32)


def _hist_call(n, n_bins, tpb, launcher="launch_histogram") -> str:
    extra = "" if tpb is None else f", {tpb}"
    return f"data = hist_inputs({n}, {n_bins}); {launcher}(data, {n_bins}{extra})"


def _check_spread(launch: dict, n: int, n_bins: int, kernel_name: str, launcher: str, call: str) -> None:
    """The launch's threads share the elements: none reads global memory much more than its share of
    the data (each element read once, with slack), nor makes many more atomic updates than its
    elements and one merge of a whole shared histogram (n_bins: a block's thread 0 may merge it
    alone, as the contract allows). One thread counting every element with a plain ``bins[v] += 1``
    loses no update, and is no parallel histogram; atomics are not counted as reads, so a thread-0
    merge passes."""
    stats, g, b = launch.get("stats") or {}, launch["griddim"], launch["blockdim"]
    reads, atomics = stats.get("global_reads"), stats.get("global_atomics")
    if n == 0:
        return  # nothing to share out
    if not (isinstance(reads, np.ndarray) and isinstance(atomics, np.ndarray) and reads.size and g and b):
        raise CheckFailed(M("no_traffic", launcher=launcher) + _replay(call))  # a check that cannot see, fails
    threads, tpb = int(np.prod(g)) * int(np.prod(b)), int(np.prod(b))
    each = -(-n // threads)
    plain = reads - atomics
    for counts, share, what in (
        (plain, 3 * each + 4, "global_reads"),
        (atomics, each + n_bins + 4, "global_atomics"),
    ):
        t = int(counts.argmax())
        if int(counts[t]) > share:
            raise CheckFailed(
                M(
                    "spread",
                    thread=t % tpb,
                    block=t // tpb,
                    count=int(counts[t]),
                    what=M.both(what),
                    threads=threads,
                    launcher=launcher,
                    each=each,
                )
                + _replay(call)
            )


@replayable
def check_histogram(
    ask,
    n: int,
    n_bins: int,
    tpb: int | None = 256,
    device="cpu",
    *,
    calls: int = 1,
    kernel_name="histogram_kernel",
    launcher="launch_histogram",
) -> dict:
    """launch_histogram returns a NEW int32 array of n_bins counts equal to np.bincount(data); the
    kernel runs on the checking simulator (a plain ``bins[v] += 1`` that two threads apply to one bin
    is reported, whatever the order); blocks of ``threads_per_block`` threads; data unchanged.
    ``calls`` > 1 calls it again on the same data: every call counts from zero."""
    ask = _asked(ask, launcher)
    call = _hist_call(n, n_bins, tpb, launcher)
    want = np.bincount(hist_inputs(n, n_bins), minlength=n_bins).astype(np.int32)
    for k in range(calls):
        args = (hist_inputs(n, n_bins), n_bins) if tpb is None else (hist_inputs(n, n_bins), n_bins, tpb)
        obs = ask(
            "launcher",
            launcher=launcher,
            kernel_name=kernel_name,
            args=args,
            device=device,
            replay=call,
            readonly=(0,),
            out_pos=1,
            stats=device == "cpu",
        )
        if not _same(obs["inputs"][0] if obs["inputs"] else None, hist_inputs(n, n_bins)):
            raise CheckFailed(M("hist_input", launcher=launcher) + _replay(call))
        launches = obs["launches"]
        if n > 0 and not launches:
            raise CheckFailed(_no_launch_msg(kernel_name, launcher) + _replay(call))
        want_tpb = 256 if tpb is None else tpb
        for item in launches:
            if item["blockdim"] is not None and tuple(item["blockdim"]) != (want_tpb, 1, 1):
                g, b = item["raw"]
                raise CheckFailed(
                    M("hist_block", launcher=launcher, kernel=kernel_name, g=g, b=b, tpb=want_tpb) + _replay(call)
                )
        for item in launches if device == "cpu" else ():  # per-thread traffic is the simulator's to see
            _check_spread(item, n, n_bins, kernel_name, launcher, call)
        res = obs["result"]
        if res["type"] != "ndarray":
            raise CheckFailed(M("hist_type", launcher=launcher, type=res["type"]) + _replay(call))
        if tuple(res["shape"]) != (n_bins,) or res["dtype"] != "int32":
            raise CheckFailed(
                M("hist_shape", launcher=launcher, shape=tuple(res["shape"]), dtype=res["dtype"], bins=n_bins)
                + _replay(call)
            )
        if res["shares"]:
            raise CheckFailed(M("hist_shares", launcher=launcher) + _replay(call))
        got = res["value"]
        if not np.array_equal(got, want):
            total = int(got.sum())
            diff = _first_diff(got, want)
            if k > 0:
                why = M("hist_again", launcher=launcher, call=k + 1, diff=diff)
            elif total < n:
                why = M("hist_few", launcher=launcher, total=total, n=n, diff=diff)
            elif total > n:
                why = M("hist_many", launcher=launcher, total=total, n=n, diff=diff)
            else:
                why = M("hist_wrong", launcher=launcher, diff=diff)
            raise CheckFailed(why + _replay(call))
        why = _not_the_kernels(launches, got, kernel_name, launcher)
        if why:
            raise CheckFailed(why + _replay(call))
        if k == 0 and device == "cpu" and n > 0:
            _check_histogram_kernel_alone(ask, n, n_bins, launches[0], kernel_name, launcher)
    return {"launches": len(launches)}


def _check_histogram_kernel_alone(ask, n, n_bins, launch, kernel_name, launcher) -> None:
    """The kernel alone, launched as the launcher first launched it, on data the launcher never saw
    and zeroed bins, must count every element with no lost update and no thread over its share: a
    launcher cannot pass np.bincount in as ``bins`` to a kernel that does nothing, nor split a plain
    ``bins[v] += 1`` over launches so that no bin is hit twice in one."""
    if launch["griddim"] is None or launch["blockdim"] is None:
        return
    data = ((hist_inputs(n, n_bins).astype(np.int64) * 7 + 3) % n_bins).astype(np.int32)
    data[: min(n, 64)] = 0  # one bin hit by many threads of the first block
    g, b = tuple(launch["griddim"]), tuple(launch["blockdim"])
    call = (
        f"data = (hist_inputs({n}, {n_bins}).astype(np.int64) * 7 + 3) % {n_bins}; data[:64] = 0; "
        f"bins = np.zeros({n_bins}, np.int32); {kernel_name}[{g}, {b}](data.astype(np.int32), bins)"
    )
    obs = ask(
        "kernel",
        kernel_name=kernel_name,
        griddim=g,
        blockdim=b,
        args=(data, np.zeros(n_bins, np.int32)),
        replay=call,
        readonly=(0,),
        out_pos=1,
        stats=True,
    )
    got, want = obs["args"][1], np.bincount(data, minlength=n_bins).astype(np.int32)
    if not np.array_equal(got, want):
        raise CheckFailed(M("hist_alone", kernel=kernel_name, g=g, b=b, diff=_first_diff(got, want)) + _replay(call))
    _check_spread({"griddim": g, "blockdim": b, "stats": obs.get("stats")}, n, n_bins, kernel_name, launcher, call)


# ---------------------------------------------------------------------------------------------
# dot product: a tree reduction in shared memory


def _dot_tol(dtype) -> float:
    """The relative error a dot product (or a block's partial sum) may carry: 1e-12 in float64."""
    return 1e-12 if np.dtype(dtype) == np.float64 else 1e-6


def _check_dot_kernel_alone(ask, n, tpb, dtype, blocks, kernel_name) -> None:
    """The kernel alone, on inputs the launcher never saw and a zeroed ``partial``: each block's sum
    of products, written by its thread 0: the block sums are the kernel's, not the host's."""
    a, b = (x[::-1].copy() for x in dot_inputs(n, dtype))
    call = (
        f"a, b = (x[::-1].copy() for x in dot_inputs({n}, {dtype!r})); partial = np.zeros({blocks}); "
        f"{kernel_name}[{blocks}, {tpb}](a, b, partial)"
    )
    obs = ask(
        "kernel",
        kernel_name=kernel_name,
        griddim=(blocks, 1, 1),
        blockdim=(tpb, 1, 1),
        args=(a, b, np.zeros(blocks, np.float64)),
        replay=call,
        readonly=(0, 1),
        out_pos=2,
    )
    part = obs["args"][2]
    for k in range(blocks):
        lo, hi = k * tpb, min(n, (k + 1) * tpb)
        block_sum = _exact_dot(a[lo:hi], b[lo:hi])
        if _rel(float(part[k]), block_sum) > _dot_tol(dtype):
            raise CheckFailed(
                M(
                    "dot_alone",
                    kernel=kernel_name,
                    blocks=blocks,
                    tpb=tpb,
                    k=k,
                    got=repr(float(part[k])),
                    want=repr(block_sum),
                )
                + _replay(call)
            )


def dot_inputs(n: int, dtype="float64") -> tuple[np.ndarray, np.ndarray]:
    """Two 1-D inputs of length n in [0.5, 1.5) (no cancellation, so relative errors are meaningful)."""
    rng = np.random.default_rng(1000 + n)
    return (rng.random(n) + 0.5).astype(dtype), (rng.random(n) + 0.5).astype(dtype)


def _dot_call(n, dtype, tpb, launcher="launch_dot") -> str:
    extra = "" if tpb is None else f", {tpb}"
    return f"a, b = dot_inputs({n}, {str(np.dtype(dtype))!r}); {launcher}(a, b{extra})"


def _exact_dot(a: np.ndarray, b: np.ndarray) -> float:
    import math

    return math.fsum((a.astype(np.float64) * b.astype(np.float64)).tolist())


def _rel(got: float, want: float) -> float:
    return abs(got - want) / max(abs(want), 1e-300)


@replayable
def check_dot(
    ask,
    n: int,
    tpb: int | None = 256,
    dtype="float64",
    device="cpu",
    *,
    kernel_name="dot_kernel",
    launcher="launch_dot",
) -> dict:
    """launch_dot(a, b, tpb) == a @ b (relative error <= 1e-12 for float64 inputs, 1e-6 for float32)
    as a Python float; one launch of ceil(n / tpb) blocks of tpb threads; thread 0 of block k alone
    writes partial[k], the sum of its block's products; float64 shared memory; inputs unchanged."""
    ask = _asked(ask, launcher)
    call = _dot_call(n, dtype, tpb, launcher)
    a0, b0 = dot_inputs(n, dtype)
    want_tpb = 256 if tpb is None else tpb
    args = (a0.copy(), b0.copy()) if tpb is None else (a0.copy(), b0.copy(), tpb)
    obs = ask(
        "launcher",
        launcher=launcher,
        kernel_name=kernel_name,
        args=args,
        device=device,
        replay=call,
        readonly=(0, 1),
        out_pos=2,
        stats=device == "cpu",
    )
    for arr, orig, nm in zip(obs["inputs"], (a0, b0), "ab"):
        if not _same(arr, orig):
            raise CheckFailed(M("dot_input", launcher=launcher, name=nm) + _replay(call))
    launches = obs["launches"]
    blocks = -(-n // want_tpb)
    if n > 0 and not launches:
        raise CheckFailed(_no_launch_msg(kernel_name, launcher) + _replay(call))
    if len(launches) > 1:
        raise CheckFailed(M("dot_times", launcher=launcher, kernel=kernel_name, times=len(launches)) + _replay(call))
    for item in launches:
        g, bd = item["griddim"], item["blockdim"]
        if g is not None and (tuple(g), tuple(bd)) != ((blocks, 1, 1), (want_tpb, 1, 1)):
            raw_g, raw_b = item["raw"]
            raise CheckFailed(
                M(
                    "dot_config",
                    launcher=launcher,
                    kernel=kernel_name,
                    g=raw_g,
                    b=raw_b,
                    n=n,
                    blocks=blocks,
                    tpb=want_tpb,
                )
                + _replay(call)
            )
        for name, shape, dt in item.get("shared") or ():
            if dt != "float64":
                raise CheckFailed(M("dot_shared_dtype", kernel=kernel_name, name=name, dtype=dt) + _replay(call))
            if shape and shape[0] < want_tpb:
                raise CheckFailed(
                    M("dot_shared_size", kernel=kernel_name, name=name, cells=shape[0], tpb=want_tpb) + _replay(call)
                )
        reads = (item.get("stats") or {}).get("global_reads")
        if isinstance(reads, np.ndarray) and reads.size and int(reads.max()) > 4:  # a[i], b[i], some slack
            t = int(reads.argmax())
            raise CheckFailed(
                M("dot_reads", thread=t % want_tpb, block=t // want_tpb, count=int(reads[t])) + _replay(call)
            )
        if device == "cpu":
            _writers(item, (blocks,), kernel_name, "out_partial", call)
        w, part = item.get("writers"), item.get("out")
        if device == "cpu" and part is not None and w.ndim == 1 and len(w) >= blocks:
            for k in range(blocks):
                lo, hi = k * want_tpb, min(n, (k + 1) * want_tpb)
                tail = _prefilled(item.get("prefilled"))
                if w[k] == -1:
                    raise CheckFailed(M("dot_unwritten", kernel=kernel_name, k=k, tail=tail) + _replay(call))
                if w[k] != k * want_tpb:
                    raise CheckFailed(M("dot_writer", k=k, t=int(w[k])) + _replay(call))
                block_sum = _exact_dot(a0[lo:hi], b0[lo:hi])
                if _rel(float(part[k]), block_sum) > _dot_tol(dtype):
                    got = repr(float(part[k]))
                    raise CheckFailed(
                        M("dot_block_sum", k=k, got=got, lo=lo, hi=hi - 1, want=repr(block_sum), tail=tail)
                        + _replay(call)
                    )
    if device == "cpu" and n > 0 and launches and launches[0]["griddim"] is not None:
        _check_dot_kernel_alone(ask, n, want_tpb, dtype, blocks, kernel_name)
    res = obs["result"]
    if res["type"] not in ("float", "float64") or "value" not in res:
        raise CheckFailed(M("dot_type", launcher=launcher, type=res["type"]) + _replay(call))
    want = _exact_dot(a0, b0)
    got = res["value"]
    tol = _dot_tol(dtype)
    if n == 0:
        if got != 0.0:
            raise CheckFailed(M("dot_empty", launcher=launcher, got=repr(got)) + _replay(call))
    elif not _rel(got, want) <= tol:
        err, bound = f"{_rel(got, want):.1e}", f"{tol:.0e}"
        raise CheckFailed(
            M("dot_error", launcher=launcher, got=repr(got), want=repr(want), err=err, tol=bound) + _replay(call)
        )
    return {"blocks": blocks}


def self_check_vec_add(vec_add, launch_vec_add) -> bool:
    return _self_check(
        "vec_add",
        dict(vec_add=vec_add, launch_vec_add=launch_vec_add),
        lambda ask: [
            (M("va_config"), lambda: check_vec_add_launch(ask, 1000, 256)),
            (
                M("va_default"),
                lambda: check_vec_add_launch(ask, 600, 256, default_tpb=True),
            ),
            (M("va_tail"), lambda: check_vec_add_results(ask, 37, 16)),
            (M("va_one"), lambda: check_vec_add_results(ask, 1, 1024, "int32")),
            (M("va_empty"), lambda: check_vec_add_results(ask, 0, 32)),
            (M("va_kernel"), lambda: check_vec_add_kernel(ask, 20, 8)),
        ],
    )


def self_check_vec_add_grid_stride(vec_add_grid_stride, launch_vec_add_grid_stride) -> bool:
    kw = dict(kernel_name="vec_add_grid_stride", launcher="launch_vec_add_grid_stride")
    return _self_check(
        "vec_add_grid_stride",
        dict(vec_add_grid_stride=vec_add_grid_stride, launch_vec_add_grid_stride=launch_vec_add_grid_stride),
        lambda ask: [
            (M("gs_exact"), lambda: check_vec_add_launch(ask, 50, 8, blocks=2, **kw)),
            (
                M("gs_small"),
                lambda: check_vec_add_results(ask, 50, 8, blocks=2, **kw),
            ),
            (M("gs_large"), lambda: check_vec_add_results(ask, 5, 8, blocks=3, **kw)),
            (M("gs_pattern"), lambda: check_grid_stride_pattern(ask, 40, 2, 4)),
            (
                M("gs_kernel"),
                lambda: check_vec_add_kernel(ask, 19, 4, 5, blocks=2, kernel_name="vec_add_grid_stride"),
            ),
        ],
    )


def self_check_tiled_matmul(tiled_matmul, launch_tiled_matmul) -> bool:
    return _self_check(
        "tiled_matmul",
        dict(tiled_matmul=tiled_matmul, launch_tiled_matmul=launch_tiled_matmul),
        lambda ask: [
            (M("mm_case_config"), lambda: check_matmul_launch(ask, 20, 8, 40)),
            (M("mm_case_one"), lambda: check_matmul_results(ask, 16, 16, 16)),
            (M("mm_case_ragged"), lambda: check_matmul_results(ask, 5, 20, 3)),
            (
                M("mm_case_traffic"),
                lambda: print_traffic(check_matmul_traffic(ask, 16, 48, 16)),
            ),
        ],
    )


def print_traffic(fig: dict) -> None:
    print(
        M(
            "traffic_figures",
            reads=fig["global_reads"],
            bound=fig["tiled_bound"],
            naive=fig["naive"],
            shared=fig["shared_reads"],
            threads=fig["threads"],
        )
    )


def self_check_histogram(histogram_kernel, launch_histogram) -> bool:
    return _self_check(
        "histogram",
        dict(histogram_kernel=histogram_kernel, launch_histogram=launch_histogram),
        lambda ask: [
            (M("hi_tail"), lambda: check_histogram(ask, 300, 7, 64)),
            (M("hi_one_bin"), lambda: check_histogram(ask, 40, 1, 32)),
            (M("hi_default"), lambda: check_histogram(ask, 600, 10, None)),
            (M("hi_empty"), lambda: check_histogram(ask, 0, 5, 32)),
            (M("hi_twice"), lambda: check_histogram(ask, 50, 4, 16, calls=2)),
        ],
    )


def self_check_dot_reduction(dot_kernel, launch_dot) -> bool:
    return _self_check(
        "dot_reduction",
        dict(dot_kernel=dot_kernel, launch_dot=launch_dot),
        lambda ask: [
            (M("dot_case_one"), lambda: check_dot(ask, 64, 64)),
            (M("dot_case_tail"), lambda: check_dot(ask, 1000, 256)),
            (M("dot_case_f32"), lambda: check_dot(ask, 5, 8, "float32")),
            (M("dot_case_largest"), lambda: check_dot(ask, 1500, 1024)),
            (M("dot_case_default"), lambda: check_dot(ask, 300, None)),
            (M("dot_case_empty"), lambda: check_dot(ask, 0, 32)),
        ],
    )
