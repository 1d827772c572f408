"""GPU check of notebook 02: vec_add, vec_add_grid_stride, histogram, dot_reduction and tiled_matmul on real CUDA.

On a machine with a CUDA GPU:
1. grades, for each of the five grade_ids, the notebook's reference solution and two wrong
   answers from the catalogue with the GPU path of the graders (`python -m graders --gpu`, as
   autograde --gpu runs it): the reference must get full marks, the wrong ones must not;
2. runs the reference kernels directly on cupy device arrays and prints figures: vecAdd and the
   grid-stride vecAdd on a large array, as effective bandwidth (3 arrays moved) against a
   device-to-device copy (2 arrays moved) measured in the same run; the tiled matmul against
   cupy's cuBLAS matmul, results checked exactly.
Without a GPU it prints "no GPU: skipped" and returns 0.

    .venv/bin/python gpu/check_vec_add.py [--no-sandbox] [--n 67108864]
"""

from __future__ import annotations

import os
import statistics
import sys
import types

from gpu.common import check_main, grade_on_gpu
from kit import source_ch13lib
from kit.answers import reference

source_ch13lib()  # this check imports the pristine copy beside the notebooks

WRONG = {  # two realistic wrong answers per exercise, graded on the GPU
    "vec_add": ["wrong_blocks_floor", "wrong_thread_idx_only"],
    "vec_add_grid_stride": ["wrong_no_loop", "wrong_stride_block_width"],
    "histogram": ["wrong_blocks_floor", "wrong_plain_increment"],
    "dot_reduction": ["wrong_no_barrier_in_tree", "wrong_float32_host_sum"],
    "tiled_matmul": ["wrong_tile_loaded_once", "wrong_swapped_tile_index"],
}


def gpu_ready() -> str:
    """'' when a CUDA GPU is usable from cupy and numba, else the reason it is not."""
    from ch13lib.cuda_env import gpu_present

    if not gpu_present():
        return "no nvidia-smi or libcuda on this machine"
    try:
        import cupy as cp

        if cp.cuda.runtime.getDeviceCount() < 1:
            return "cupy sees no CUDA device"
    except Exception as e:  # noqa: BLE001
        return f"cupy cannot reach a GPU ({type(e).__name__}: {e})"
    return ""


def load(grade_id: str) -> types.ModuleType:
    """The reference solution of ``grade_id`` in a fresh module, loaded as the graders load a cell."""
    from ch13lib.cell import load as load_cell

    return load_cell(reference(grade_id), grade_id, "ref")


def _time(fn, reps: int = 10) -> float:
    """Median seconds of fn() over reps runs, timed with CUDA events after a warm-up."""
    import cupy as cp

    fn()
    cp.cuda.runtime.deviceSynchronize()
    times = []
    for _ in range(reps):
        start, stop = cp.cuda.Event(), cp.cuda.Event()
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, stop) / 1e3)
    return statistics.median(times)


def figures(n: int) -> bool:
    import cupy as cp
    from numba import cuda

    ok = True
    dev = cp.cuda.Device()
    props = cp.cuda.runtime.getDeviceProperties(dev.id)
    sms = props["multiProcessorCount"]
    print(
        f"2. figures on {props['name'].decode() if isinstance(props['name'], bytes) else props['name']} "
        f"({sms} SMs), n = {n:,} float32"
    )
    va = load("vec_add")
    gs = load("vec_add_grid_stride")
    mm = load("tiled_matmul")

    a = cp.arange(n, dtype=cp.float32) % 251
    b = cp.arange(n, dtype=cp.float32) % 13
    c = cp.empty_like(a)
    dst = cp.empty_like(a)
    nbytes = a.nbytes
    d2d = cp.cuda.runtime.memcpyDeviceToDevice
    t_copy = _time(
        lambda: cp.cuda.runtime.memcpyAsync(dst.data.ptr, a.data.ptr, nbytes, d2d, cp.cuda.get_current_stream().ptr)
    )
    copy_bw = 2 * nbytes / t_copy / 1e9
    print(f"   cudaMemcpy device-to-device: {t_copy * 1e3:8.3f} ms  {copy_bw:8.1f} GB/s (2 arrays moved)")

    def vector_kernel(label, launch):
        """Time one launch of c = a + b and print its bandwidth against the copy's; exact or not."""
        c.fill(0)
        t = _time(launch)
        good = bool(cp.array_equal(c, a + b))
        bw = 3 * nbytes / t / 1e9
        print(
            f"   {label}: {t * 1e3:8.3f} ms  {bw:8.1f} GB/s (3 arrays) "
            f"= {bw / copy_bw:5.1%} of copy bandwidth; result {'exact' if good else 'WRONG'}"
        )
        return good

    tpb = 256
    blocks = (n + tpb - 1) // tpb
    ok &= vector_kernel(f"vec_add[{blocks}, {tpb}]   ", lambda: va.vec_add[blocks, tpb](a, b, c, n))
    g_blocks = 4 * sms
    ok &= vector_kernel(
        f"vec_add_grid_stride[{g_blocks}, {tpb}]", lambda: gs.vec_add_grid_stride[g_blocks, tpb](a, b, c, n)
    )

    for m, k, nn in [(1024, 1024, 1024), (1000, 333, 777)]:
        A = ((cp.arange(m * k, dtype=cp.float32).reshape(m, k) * 5 + 3) % 7 - 3).astype(cp.float32)
        B = ((cp.arange(k * nn, dtype=cp.float32).reshape(k, nn) * 3 + 1) % 5 - 2).astype(cp.float32)
        C = cp.empty((m, nn), dtype=cp.float32)
        T = mm.TILE
        grid = ((nn + T - 1) // T, (m + T - 1) // T)
        t_mm = _time(lambda: mm.tiled_matmul[grid, (T, T)](A, B, C), reps=5)
        want = A @ B
        t_blas = _time(lambda: A @ B, reps=5)
        good = bool(cp.array_equal(C, want))
        ok &= good
        flops = 2 * m * k * nn
        print(
            f"   tiled_matmul {m}x{k} @ {k}x{nn}: {t_mm * 1e3:8.3f} ms  {flops / t_mm / 1e9:8.1f} GFLOP/s; "
            f"cuBLAS {flops / t_blas / 1e9:8.1f} GFLOP/s; result {'exact' if good else 'WRONG'}"
        )
    # atomics: the reference histogram with many bins and with all threads on one bin (contention)
    hist = load("histogram")
    for n_bins in (256, 1):
        data = (cp.arange(n, dtype=cp.int64) * 2654435761 % n_bins).astype(cp.int32)
        bins = cp.zeros(n_bins, dtype=cp.int32)
        hb = (n + tpb - 1) // tpb
        t_h = _time(lambda: (bins.fill(0), hist.histogram_kernel[hb, tpb](data, bins)), reps=5)
        good = bool(cp.array_equal(bins, cp.bincount(data, minlength=n_bins).astype(cp.int32)))
        ok &= good
        print(
            f"   histogram_kernel, {n_bins:3d} bin(s): {t_h * 1e3:8.3f} ms  {n / t_h / 1e9:6.2f} G elements/s; "
            f"counts {'exact' if good else 'WRONG'}"
        )
    # the block reduction against cupy's dot (cuBLAS), float64
    dot = load("dot_reduction")
    x64 = cp.arange(n, dtype=cp.float64) % 7 * 0.5 + 0.5
    y64 = cp.arange(n, dtype=cp.float64) % 5 * 0.25 + 0.5
    db = (n + tpb - 1) // tpb
    partial = cp.zeros(db, dtype=cp.float64)
    t_d = _time(lambda: dot.dot_kernel[db, tpb](x64, y64, partial), reps=5)
    t_c = _time(lambda: cp.dot(x64, y64), reps=5)
    want = float(cp.dot(x64, y64))
    got = float(partial.sum())
    good = abs(got - want) <= 1e-12 * abs(want)
    ok &= good
    print(
        f"   dot_kernel[{db}, {tpb}] float64: {t_d * 1e3:8.3f} ms ({2 * x64.nbytes / t_d / 1e9:6.1f} GB/s); "
        f"cupy.dot {t_c * 1e3:8.3f} ms; relative error {abs(got - want) / abs(want):.1e}"
    )
    # the launcher contract on the GPU: numpy in, numpy out
    import numpy as np

    x = np.arange(1_000_003, dtype=np.float32)
    good = bool(np.array_equal(va.launch_vec_add(x, x, 256), x + x))
    ok &= good
    print(f"   launch_vec_add on numpy arrays (n=1,000,003): {'exact' if good else 'WRONG'}")
    cuda.synchronize()
    return ok


def _ready() -> str:
    why = gpu_ready()
    if not why:  # real CUDA from here on (numba reads this once, at its first import)
        os.environ.pop("NUMBA_ENABLE_CUDASIM", None)
    return why


def main(argv=None) -> int:
    return check_main(
        argv,
        ready=_ready,
        grade=lambda args: grade_on_gpu(WRONG, sandbox=not args.no_sandbox),
        figures=lambda args: figures(args.n),
        options=lambda ap: ap.add_argument("--n", type=int, default=1 << 26),
    )


if __name__ == "__main__":
    sys.exit(main())
