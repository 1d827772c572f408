"""Notebook 02 (CUDA kernels): the graders on their catalogues, the checking simulator, the helpers.

Graders run in a child process (``NUMBA_ENABLE_CUDASIM=1`` must be set before numba's first
import, which this pytest process cannot promise), one process per grade_id for its whole
catalogue; each cell runs in its own subject process (kit/subject.py, unsandboxed here), and the
grading process itself never imports numba (it never runs the cell). GPU tests are marked ``gpu``
and skip with a reason on machines without one.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from graders import _catalogue as catalogue

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GRADE_IDS = ["vec_add", "vec_add_grid_stride", "histogram", "dot_reduction", "tiled_matmul"]
PY = sys.executable

RUNNER = textwrap.dedent(r"""
    import json, os, sys
    os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
    from graders import load_grader
    gid, out_path, paths = sys.argv[1], sys.argv[2], sys.argv[3:]
    gpu = os.environ.get("CH13_DEVICE") == "gpu"  # the test's choice of device, handed to the grader
    grader = load_grader(gid)
    out = {}
    for p in paths:
        with open(p, encoding="utf-8") as f:
            out[p] = [r.to_json() for r in grader.run(f.read(), sandbox=False, gpu=gpu)]
    assert "numba" not in sys.modules, "the judge imported numba: it must not run the cell's code"
    with open(out_path, "w", encoding="utf-8") as f:
        json.dump(out, f)
""")


def run_graders(grade_id: str, paths: list[str], tmp_path, env=None) -> dict:
    """{path: [result dicts]} from grading each file with graders.<grade_id> in a fresh process."""
    out = tmp_path / f"{grade_id}.json"
    proc = subprocess.run(
        [PY, "-c", RUNNER, grade_id, str(out), *paths],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
        env={**os.environ, **(env or {})},
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    with open(out, encoding="utf-8") as f:
        return json.load(f)


def entries(grade_id: str) -> list[str]:
    """The paths of ``grade_id``'s catalogue files (the grading process reads them)."""
    return [e.path for e in catalogue.entries(grade_id)]


# The catalogues themselves are graded once, for every grade_id, by tests/test_catalogues.py
# (sandboxed, as nbgrader grades); here the graders' own cases, the simulator and the self-checks.


def _reference_and_stub(grade_id):
    from kit.answers import reference, stub

    return reference(grade_id), stub(grade_id)


def test_the_release_stubs_raise_not_implemented_and_the_references_do_not():
    for gid in GRADE_IDS:
        ref, stub = _reference_and_stub(gid)
        assert "NotImplementedError" in stub and "NotImplementedError" not in ref


def test_the_judge_never_imports_numba(tmp_path):
    """A judge that grades a CUDA cell (here the stub: every test fails at once) runs none of its
    code and so never imports numba (RUNNER asserts it)."""
    _, stub = _reference_and_stub("vec_add")
    (tmp_path / "stub.py").write_text(stub)
    res = run_graders("vec_add", [str(tmp_path / "stub.py")], tmp_path)
    assert res and all(not r["passed"] for r in res[str(tmp_path / "stub.py")]), res


# The notebook's reference solutions (full marks) and its untouched stubs ("not implemented yet" from
# every test) are graded through plain `nbgrader autograde` by tests/test_pipeline.py, and every
# catalogue answer once by tests/test_catalogues.py: not again here.


# ---------------------------------------------------------------------------------------------
# the checking simulator itself, in a child process (it must own numba's first import); the children
# here import ch13lib from source/ through kit.source_ch13lib (ch13lib is not part of the installed kit)

SIM_CASES = textwrap.dedent(r"""
    import os, sys, json
    os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
    import kit; kit.source_ch13lib()        # ch13lib from source/
    if sys.argv[2] == "threads":
        sys.modules["greenlet"] = None      # the fallback: OS threads handing control over with locks
    import numpy as np
    from numba import cuda
    from ch13lib import _cuda_sim_launch     # the part that runs the threads, greenlets or OS threads
    from ch13lib.cuda_sim import launch, KernelFault
    assert (_cuda_sim_launch._greenlet is None) == (sys.argv[2] == "threads")

    out = {}
    def kind(kernel, grid, block, args, **kw):
        try:
            rec = launch(kernel, grid, block, args, **kw)
            return "ok", rec
        except KernelFault as e:
            return e.kind, e.message

    @cuda.jit
    def neg(a, c, n):
        i = cuda.grid(1) - 1
        if i < n:
            c[i] = a[i]
    a = np.arange(8.0); c = np.zeros(8)
    out["negative"] = kind(neg, 1, 8, (a, c, 8))[0]

    @cuda.jit
    def writes_input(a, c, n):
        i = cuda.grid(1)
        if i < n:
            a[i] = 0
    out["input"] = kind(writes_input, 1, 8, (a, c, 8), readonly=(0,))[0]

    @cuda.jit
    def past_n(a, c, n):
        i = cuda.grid(1)
        if i < a.size:
            c[i] = a[i]
    out["limit"] = kind(past_n, 1, 8, (a, c, 5), limits={0: 5, 1: 5})[0]

    @cuda.jit
    def dup(a, c, n):
        c[cuda.threadIdx.x] = a[cuda.threadIdx.x]
    out["duplicate"] = kind(dup, 2, 4, (a, c, 8))[0]

    @cuda.jit
    def swallow(a, c, n):
        try:
            c[100] = 1.0
        except Exception:
            pass
    out["swallowed"] = kind(swallow, 1, 2, (a, c, 8))[0]

    def shift_kernel(sync):
        @cuda.jit
        def k(a, c, n):
            s = cuda.shared.array(8, dtype=np.float64)
            t = cuda.threadIdx.x
            s[t] = a[t]
            if sync:
                cuda.syncthreads()
            c[t] = s[(t + 1) % 8]
        return k
    out["no_barrier"] = kind(shift_kernel(False), 1, 8, (a, c, 8))[0]
    r = kind(shift_kernel(True), 1, 8, (a, c, 8))
    out["barrier"] = r[0]
    out["shifted"] = c.tolist()

    @cuda.jit
    def divergent(a, c, n):
        s = cuda.shared.array(8, dtype=np.float64)
        t = cuda.threadIdx.x
        if t >= 4:
            return
        s[t] = a[t]
        cuda.syncthreads()
        c[t] = s[t]
    out["divergence"] = kind(divergent, 1, 8, (a, c, 8))[0]

    @cuda.jit
    def uninit(a, c, n):
        s = cuda.shared.array(8, dtype=np.float64)
        t = cuda.threadIdx.x
        if t < 4:
            s[t] = a[t]
        cuda.syncthreads()
        c[t] = s[t]
    out["uninit"] = kind(uninit, 1, 8, (a, c, 8))[0]

    @cuda.jit(device=True)
    def barrier():
        cuda.syncthreads()

    @cuda.jit
    def hidden_sync(a, c, n):     # syncthreads in a device function, not in its co_names: inline -> threaded rerun
        s = cuda.shared.array(8, dtype=np.float64)
        t = cuda.threadIdx.x
        s[t] = a[t]
        barrier()
        c[t] = s[7 - t]
    c[:] = 0
    out["hidden_sync"] = kind(hidden_sync, 1, 8, (a, c, 8))[0]
    out["hidden_sync_result"] = c.tolist()

    import math, numba
    @cuda.jit
    def library_view(a, c, n):    # what numba compiles of a library runs: numba.cuda is the simulator's
        t = numba.cuda.threadIdx.x
        c[t] = math.sqrt(a[t] * a[t]) + np.float64(numba.types.int32.bitwidth) + np.sqrt(4.0)
    c[:] = 0
    out["library_view"] = kind(library_view, 1, 8, (a, c, 8))[0]
    out["library_view_result"] = c.tolist()

    @cuda.jit
    def traffic(a, c, n):
        i = cuda.grid(1)
        if i < n:
            c[i] = a[i] + a[i]
    st, rec = kind(traffic, 2, 4, (a, c, 8))
    out["traffic"] = [rec.total("global_reads"), rec.total("global_writes"), rec.n_threads]
    out["zero_blocks"] = kind(traffic, 0, 4, (a, c, 8))[0]
    out["float_blocks"] = kind(traffic, 2.0, 4, (a, c, 8))[0]
    out["too_big_block"] = kind(traffic, 1, 2048, (a, c, 8))[0]

    class FakeDeviceArray:      # stands for a numba DeviceNDArray on a GPU machine
        def __init__(self, host):
            self._host = host.copy()
        @property
        def __cuda_array_interface__(self):
            return {}
        def copy_to_host(self):
            return self._host.copy()
        def copy_to_device(self, host):
            self._host[...] = host
    bins = np.zeros(2, np.int32)
    @cuda.jit
    def plain_count(a, c, n):
        c[cuda.threadIdx.x % 2] += 1       # a read-modify-write two threads apply to one element
    out["lost_update"] = kind(plain_count, 1, 4, (a, bins, 8))[0]
    @cuda.jit
    def atomic_count(a, c, n):
        cuda.atomic.add(c, cuda.threadIdx.x % 2, 1)
    bins[:] = 0
    out["atomic"] = kind(atomic_count, 2, 4, (a, bins, 8))[0]
    out["atomic_counts"] = bins.tolist()
    @cuda.jit
    def mixed(a, c, n):
        if cuda.threadIdx.x == 0:
            c[0] = 0                        # a plain store beside other threads' atomics
        cuda.atomic.add(c, 0, 1)
    out["mixed_plain_first"] = kind(mixed, 1, 4, (a, bins, 8))[0]
    @cuda.jit
    def mixed_late(a, c, n):
        cuda.atomic.add(c, 0, 1)
        if cuda.threadIdx.x == 3:
            c[0] = 0
    out["mixed_plain_last"] = kind(mixed_late, 1, 4, (a, bins, 8))[0]
    @cuda.jit
    def shared_kinds(a, c, n):
        s = cuda.shared.array(16, dtype=np.float32)
        s[cuda.threadIdx.x] = 1.0
        c[cuda.threadIdx.x] = s[cuda.threadIdx.x]
    st, rec = kind(shared_kinds, 1, 4, (a, c, 8))
    out["shared_record"] = [st, [list(x) for x in rec.shared], rec.arrays["c"][:4].tolist()]

    da, dc = FakeDeviceArray(a), FakeDeviceArray(np.zeros(8))
    st, rec = kind(traffic, 2, 4, (da, dc, 8))
    out["device_arrays"] = [st, dc._host.tolist()]
    print(json.dumps(out))
""")


@pytest.fixture(scope="module", params=["greenlets", "threads"])
def sim_cases(request):
    proc = subprocess.run([PY, "-c", SIM_CASES, ROOT, request.param], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize(
    "case,expected",
    [
        ("negative", "negative"),
        ("input", "input"),
        ("limit", "bounds"),
        ("duplicate", "duplicate"),
        ("swallowed", "bounds"),
        ("no_barrier", "race"),
        ("barrier", "ok"),
        ("divergence", "divergence"),
        ("uninit", "uninit"),
        ("hidden_sync", "ok"),
        ("library_view", "ok"),
        ("zero_blocks", "config"),
        ("float_blocks", "config"),
        ("too_big_block", "config"),
        ("lost_update", "lost-update"),
        ("atomic", "ok"),
        ("mixed_plain_first", "race"),
        ("mixed_plain_last", "race"),
    ],
)
def test_checking_simulator_finds(sim_cases, case, expected):
    if isinstance(expected, list):  # [kind, the start of its message]
        assert sim_cases[case][0] == expected[0] and sim_cases[case][1].startswith(expected[1]), sim_cases[case]
    else:
        assert sim_cases[case] == expected


def test_checking_simulator_results_and_traffic(sim_cases):
    assert sim_cases["shifted"] == [float((t + 1) % 8) for t in range(8)]
    assert sim_cases["hidden_sync_result"] == [float(7 - t) for t in range(8)]
    assert sim_cases["library_view_result"] == [t + 32.0 + 2.0 for t in range(8)]
    assert sim_cases["traffic"] == [16, 8, 8]  # 2 reads and 1 write per active thread, 8 threads
    assert sim_cases["atomic_counts"] == [4, 4]  # 8 threads, atomics on two bins
    status, shared, out = sim_cases["shared_record"]  # shared arrays: (name, shape, dtype); c after the launch
    assert status == "ok" and [x[1:] for x in shared] == [[[16], "float32"]] and out == [1.0] * 4
    # GPU device arrays (e.g. from cuda.to_device on a GPU machine) are simulated on a host copy
    assert sim_cases["device_arrays"] == ["ok", [2.0 * i for i in range(8)]]


def test_backend_selection_never_imports_numba():
    code = (
        "import os, sys, kit; kit.source_ch13lib(); os.environ.pop('NUMBA_ENABLE_CUDASIM', None);"
        "from ch13lib.cuda_env import select_cuda_backend, gpu_present;"
        "b = select_cuda_backend(verbose=False);"
        "assert 'numba' not in sys.modules;"
        "assert (b == 'gpu') == gpu_present();"
        "assert os.environ['NUMBA_ENABLE_CUDASIM'] == ('0' if b == 'gpu' else '1');"
        "import numba; print(select_cuda_backend(verbose=False))"
    )
    proc = subprocess.run([PY, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() in ("gpu", "simulator")


@pytest.mark.parametrize(
    "gpu,nvvm,backend",
    [(False, False, "simulator"), (False, True, "simulator"), (True, False, "simulator"), (True, True, "gpu")],
)
def test_backend_selection_needs_a_gpu_and_nvvm(monkeypatch, capsys, gpu, nvvm, backend):
    """A student's GPU laptop without NVVM gets the simulator and one line saying why and what to install."""
    kit_source = __import__("kit").source_ch13lib()
    sys.path.insert(0, kit_source) if kit_source not in sys.path else None
    from ch13lib import cuda_env

    monkeypatch.delitem(sys.modules, "numba", raising=False)
    monkeypatch.delenv("NUMBA_ENABLE_CUDASIM", raising=False)
    monkeypatch.setattr(cuda_env, "gpu_present", lambda: gpu)
    monkeypatch.setattr(cuda_env, "nvvm_present", lambda: nvvm)
    assert cuda_env.select_cuda_backend() == backend
    out = capsys.readouterr().out
    assert (cuda_env.NO_NVVM in out) == (gpu and not nvvm), out
    assert os.environ["NUMBA_ENABLE_CUDASIM"] == ("0" if backend == "gpu" else "1")


def test_nvvm_is_found_in_the_kits_venv():
    """numba-cuda[cu12] is one of the kit's pins: its NVVM is what the judge compiles kernels with."""
    kit_source = __import__("kit").source_ch13lib()
    sys.path.insert(0, kit_source) if kit_source not in sys.path else None
    from ch13lib.cuda_env import nvvm_present

    assert nvvm_present()


SELF_CHECK = textwrap.dedent(r"""
    import contextlib, io, json, os, sys
    os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
    import kit; kit.source_ch13lib()        # ch13lib from source/
    from ch13lib import cuda_check as cc
    gid, out_path, paths = sys.argv[2], sys.argv[3], sys.argv[4:]
    kernel, launcher = {"vec_add": ("vec_add", "launch_vec_add"),
                        "vec_add_grid_stride": ("vec_add_grid_stride", "launch_vec_add_grid_stride"),
                        "histogram": ("histogram_kernel", "launch_histogram"),
                        "dot_reduction": ("dot_kernel", "launch_dot"),
                        "tiled_matmul": ("tiled_matmul", "launch_tiled_matmul")}[gid]
    results = {}
    for path in paths:
        g = {"__name__": "__main__"}
        exec(compile(open(path).read(), "<cell>", "exec"), g)
        for grading in (False, True):
            os.environ["NBGRADER_EXECUTION"] = "autograde" if grading else ""
            out, err = io.StringIO(), io.StringIO()
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                getattr(cc, "self_check_" + gid)(g[kernel], g[launcher])
            results[f"{path}|{grading}"] = [out.getvalue(), err.getvalue()]
    with open(out_path, "w") as f:
        json.dump(results, f)
""")


@pytest.mark.parametrize("grade_id", GRADE_IDS)
def test_self_checks(grade_id, tmp_path):
    ref, stub = _reference_and_stub(grade_id)
    wrong = sorted(p for p in entries(grade_id) if "wrong_" in p)[0]
    paths = {}
    for name, src in [("ref", ref), ("stub", stub), ("wrong", open(wrong).read())]:
        paths[name] = tmp_path / f"{name}.py"
        paths[name].write_text(src)
    out_path = tmp_path / "out.json"
    proc = subprocess.run(
        [PY, "-c", SELF_CHECK, ROOT, grade_id, str(out_path), *map(str, paths.values())],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    res = json.loads(out_path.read_text())
    outputs = {}
    for name, path in paths.items():
        for grading in (False, True):
            stdout, stderr = res[f"{path}|{grading}"]
            assert stderr == "", stderr
            outputs[name, grading] = stdout
    assert "All self-checks passed" in outputs["ref", False] and "✘" not in outputs["ref", False]
    assert "not implemented yet" in outputs["stub", False]
    assert "✘" in outputs["wrong", False] and "Replay it" in outputs["wrong", False]
    for name in ("ref", "stub", "wrong"):
        assert outputs[name, True].count("\n") == 1 and "skipped while grading" in outputs[name, True]


# ---------------------------------------------------------------------------------------------
# GPU


def _gpu_available() -> bool:
    from kit import source_ch13lib

    source_ch13lib()
    from ch13lib.cuda_env import gpu_present

    if not gpu_present():
        return False
    proc = subprocess.run(
        [PY, "-c", "import cupy; print(cupy.cuda.runtime.getDeviceCount())"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    return proc.returncode == 0 and proc.stdout.strip() not in ("", "0")


@pytest.mark.gpu
@pytest.mark.parametrize("grade_id", GRADE_IDS)
def test_gpu_grading(grade_id, tmp_path):
    if not _gpu_available():
        pytest.skip("no CUDA GPU on this machine: the GPU path of the CUDA graders is not exercised")
    right = [p for p in entries(grade_id) if "right_reference" in p]
    wrong = sorted(p for p in entries(grade_id) if "wrong_" in p)[:3]
    env = {"CH13_DEVICE": "gpu", "NUMBA_ENABLE_CUDASIM": "0"}
    code = RUNNER.replace('os.environ["NUMBA_ENABLE_CUDASIM"] = "1"', 'pass')
    out = tmp_path / "gpu.json"
    proc = subprocess.run(
        [PY, "-c", code, grade_id, str(out), *right, *wrong],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
        env={**os.environ, **env},
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    res = json.loads(out.read_text())
    assert all(r["passed"] for r in res[right[0]]), res[right[0]]
    for p in wrong:
        assert not all(r["passed"] for r in res[p]), p


# ---------------------------------------------------------------------------------------------
# numba decides what a kernel is: the cell's kernels read from its text (ch13lib._cuda_source) and
# compiled by numba's real CUDA target (kit/kernel_compiler.py), in a child without the simulator

CELL_HEAD = "import numpy as np\nimport math\nimport numba\nfrom numba import cuda, float64\nTPB = 8\n"
KERNEL_CELLS = {
    # what a GPU runs, written in several ways: all compile
    "reference": "@cuda.jit\ndef k(a, c, n):\n    i = cuda.grid(1)\n    if i < n:\n        c[i] = a[i] * 2.0\n",
    "dynamic_shared": (
        "@cuda.jit\ndef k(a, c, n):\n    s = cuda.shared.array(0, float64)\n    t = cuda.threadIdx.x\n"
        "    s[t] = a[t]\n    cuda.syncthreads()\n    c[t] = s[TPB - 1 - t]\n"
    ),
    "device_and_constants": (
        "SCALE = TPB * 2 + 1\n@cuda.jit(device=True)\ndef twice(x):\n    return x * SCALE\n"
        "@cuda.jit\ndef k(a, c, n):\n    i = cuda.grid(1)\n    if i < n:\n        c[i] = twice(a[i]) + math.sqrt(4.0)\n"
    ),
    "jit_call": "def _k(a, c, n):\n    c[cuda.grid(1)] = a[0]\nk = cuda.jit(_k)\n",
    # what numba refuses: each was a board or a reader the simulator alone did not see
    "global_store": (
        "board = np.zeros(8)\n@cuda.jit\ndef k(a, c, n):\n    board[cuda.threadIdx.x] += 1\n    c[0] = board[0]\n"
    ),
    "star_args": "@cuda.jit\ndef k(a, *rest):\n    rest[0][cuda.threadIdx.x] = a[0]\n",
    "dict": "@cuda.jit\ndef k(a, c, n):\n    d = {}\n    d[0] = 1.0\n    c[0] = d[0]\n",
    "attribute_store": "@cuda.jit\ndef k(a, c, n):\n    c.dtype = [0.0] * n\n",
    "private_attribute": "@cuda.jit\ndef k(a, c, n):\n    c._arr[cuda.threadIdx.x] = 1.0\n",
    "library_getattr": ("@cuda.jit\ndef k(a, c, n):\n    numba.cloudpickle.builtins.getattr(c, 'x')[0] = 1.0\n"),
    "str_format": "@cuda.jit\ndef k(a, c, n):\n    c[0] = float('{0}'.format(a))\n",
    "numpy_module_dict": "@cuda.jit\ndef k(a, c, n):\n    np.__dict__.setdefault('b', [])\n",
    "python_function": "def helper(x):\n    return x\n@cuda.jit\ndef k(a, c, n):\n    c[0] = helper(a[0])\n",
}
COMPILES = {"reference", "dynamic_shared", "device_and_constants", "jit_call"}

COMPILE_CASES = textwrap.dedent(r"""
    import json, os, sys
    os.environ.pop("NUMBA_ENABLE_CUDASIM", None)
    import kit; kit.source_ch13lib()
    from kit.kernel_compiler import compile_kernel
    cells = json.loads(sys.stdin.read())
    arr = {"dtype": "float64", "ndim": 1, "layout": "C"}
    out = {}
    for name, text in cells.items():
        args = [arr, arr] if name == "star_args" else [arr, arr, {"dtype": "int64", "ndim": 0}]
        kernel = "_k" if name == "jit_call" else "k"
        out[name] = compile_kernel(text, "<answer cell t>", kernel, args)
    print(json.dumps(out))
""")


@pytest.fixture(scope="module")
def compiled_cells():
    cells = {name: CELL_HEAD + body for name, body in KERNEL_CELLS.items()}
    proc = subprocess.run(
        [PY, "-c", COMPILE_CASES], input=json.dumps(cells), capture_output=True, text=True, timeout=300, cwd=ROOT
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("name", sorted(KERNEL_CELLS))
def test_numba_compiles_what_a_gpu_runs_and_refuses_the_rest(compiled_cells, name):
    refused = compiled_cells[name]
    if name in COMPILES:
        assert refused is None, refused
    else:
        assert refused and "numba's CUDA compiler refuses `k`" in refused, refused  # after the Chinese


def test_one_compiler_answers_each_judge_in_the_judges_language():
    """The compiler a grading process's judges share started under one language; each request
    carries its judge's (kit.config's c.Feedback.language reaches the judge, not the compiler)."""
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    env.update(CH13_LANG="en", PYTHONPATH=os.pathsep.join([ROOT, __import__("kit").source_ch13lib()]))
    arr = {"dtype": "float64", "ndim": 1, "layout": "C"}
    ask = {"text": CELL_HEAD + KERNEL_CELLS["global_store"], "filename": "<answer cell t>", "kernel": "k"}
    ask["args"] = [arr, arr, {"dtype": "int64", "ndim": 0}]
    lines = "".join(json.dumps({**ask, "lang": language}) + "\n" for language in ("zh", "en", "zh"))
    proc = subprocess.run(
        [PY, "-m", "kit.kernel_compiler"], input=lines, capture_output=True, text=True, timeout=300, cwd=ROOT, env=env
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    zh, en, zh_again = (json.loads(line)["refused"] for line in proc.stdout.splitlines())
    assert zh.startswith("numba 的 CUDA 编译器拒绝编译 `k`") and "refuses" not in zh, zh
    assert en.startswith("numba's CUDA compiler refuses `k`") and "拒绝" not in en, en
    assert zh_again == zh


def test_the_cells_kernels_are_read_from_its_text_alone():
    """Only literal constants, library imports and top-level @cuda.jit defs reach a kernel: a name the
    cell binds at run time, rebinds through `global` or imports from elsewhere is unreadable, with why."""
    kit_source = __import__("kit").source_ch13lib()
    sys.path.insert(0, kit_source) if kit_source not in sys.path else None
    from ch13lib._cuda_source import kernel_source

    text = CELL_HEAD + (
        "import os\nDT = np.float32\nSIZE = TPB << 2\nboard = np.zeros(4)\nflag = 1\n"
        "def launcher():\n    global flag\n    flag = 2\n"
        "if True:\n    LATE = 3\n"
        "@cuda.jit(device=True)\ndef d(x):\n    return x\n" + KERNEL_CELLS["reference"]
    )
    src = kernel_source(text, "<answer cell t>")
    assert set(src.kernels) == {"k"} and set(src.devices) == {"d"}
    assert src.values["TPB"] == 8 and src.values["SIZE"] == 32 and src.values["DT"] is __import__("numpy").float32
    for name, why in [
        ("board", "calls something other than"),
        ("flag", "`global`"),
        ("LATE", "inside a statement"),
        ("os", "the module os"),
        ("launcher", "a Python function"),
    ]:
        assert why in src.why_unreadable(name), (name, src.why_unreadable(name))
    assert "not defined at the top of the cell" in src.why_unreadable("missing")


def test_a_constant_and_a_kernels_libraries_are_never_the_cells(monkeypatch):
    """A cell that swaps numpy's int32 for a subclass of its own (whose operators could count across
    threads), or math.isnan for math.isfinite, changes its own code's view of the libraries, not the
    kernels': they read the libraries as they were when the harness was imported."""
    kit_source = __import__("kit").source_ch13lib()
    sys.path.insert(0, kit_source) if kit_source not in sys.path else None
    import math

    import numpy as np

    from ch13lib._cuda_source import freeze_libraries, kernel_source

    freeze_libraries()  # as the grading subject does before the cell runs (kit.harnesses.cuda_check.subject_setup)
    int32, isnan = np.int32, math.isnan

    class Counting(np.int32):
        pass

    monkeypatch.setattr(np, "int32", Counting)
    monkeypatch.setattr(math, "isnan", math.isfinite)
    src = kernel_source("import math\nimport numpy as np\nN = np.int32(3)\nM = 3\n", "<answer cell swapped>")
    assert type(src.values["N"]) is int32 and src.values["M"] == 3, src.unusable
    ns = src.namespace(None, None)
    assert ns["math"].isnan is isnan and ns["np"].int32 is int32
    assert src.namespace(None, None, frozen=False)["math"].isnan is math.isfinite  # numba's compiler: the module


def test_the_kernels_record_cannot_be_edited():
    """The record every launch's kernel is built from is a tuple of read-only mappings: no attribute
    of it, or of a library name in it, can be set, not even with object.__setattr__."""
    kit_source = __import__("kit").source_ch13lib()
    sys.path.insert(0, kit_source) if kit_source not in sys.path else None
    from ch13lib._cuda_source import kernel_source

    src = kernel_source(CELL_HEAD + KERNEL_CELLS["reference"], "<answer cell record>")
    lib = next(v for v in src.values.values() if type(v).__name__ == "Lib")
    for target, name in ((src, "devices"), (src, "code"), (lib, "attr")):
        with pytest.raises(AttributeError):
            object.__setattr__(target, name, None)
    with pytest.raises(TypeError):
        src.devices["d"] = "e"


AGREEMENT = textwrap.dedent(r"""
    import json, os, sys
    os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
    import graders  # noqa: F401 - ch13lib on the path
    from ch13lib._cuda_source import kernel_source
    from ch13lib._cuda_sim_launch import python_function
    out = {}
    for label, text in json.load(sys.stdin).items():
        filename = "<answer cell " + label + ">"
        source, ns = kernel_source(text, filename), {}
        exec(compile(text, filename, "exec"), ns)
        out[label] = {k: source.disagreement(python_function(ns[k])) for k in source.kernels}
    json.dump(out, sys.stdout)
""")


def _disagreements(cells: dict[str, str]) -> dict:
    """{label: {kernel: the first name the running cell changed, or None}}, from a fresh process."""
    proc = subprocess.run(
        [PY, "-c", AGREEMENT], cwd=ROOT, input=json.dumps(cells), capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


REBOUND = """
from numba import cuda

ATOMIC = True
{rebind}

@cuda.jit(device=True)
def bump(bins, k):
    cuda.atomic.add(bins, k, 1)

@cuda.jit
def kernel(data, bins):
    i = cuda.grid(1)
    if i < min(data.shape[0], 1 << 30) and ATOMIC:
        bump(bins, data[i])
"""
SPELLINGS = {
    "as written": ("", None),
    "a match capture": ("match False:\n    case ATOMIC:\n        pass", "ATOMIC"),
    "a walrus in another value": ("SEED = (ATOMIC := False)", "ATOMIC"),
    "an except clause deletes it": ("try:\n    1 / 0\nexcept ZeroDivisionError as ATOMIC:\n    pass", "ATOMIC"),
    "the module's dict": ("globals()['ATOMIC'] = False", "ATOMIC"),
    "a built-in rebound by a loop": ("for min in (max,):\n    pass", "min"),
}


def test_a_launch_runs_the_kernel_only_while_the_running_cell_agrees_with_its_text():
    """Whatever spelling rebinds a name a kernel reads (a constant, a device function, a library),
    the running cell disagrees with the text the simulator and the compiler read: the launch fails.
    Every catalogue answer of notebook 02 agrees, right and wrong."""
    cells = {name: REBOUND.format(rebind=rebind) for name, (rebind, _) in SPELLINGS.items()}
    cells["a device function swapped"] = (
        REBOUND.format(rebind="")
        + "\n@cuda.jit(device=True)\ndef plain(bins, k):\n    bins[k] += 1\n"
        + "\nmatch plain:\n    case bump:\n        pass\n"
    )
    found = _disagreements(cells)
    for name, (_, changed) in SPELLINGS.items():
        assert found[name] == {"kernel": changed}, name
    assert found["a device function swapped"] == {"kernel": "bump"}
    answers = {f"{e.grade_id} {e.name}": e.source for gid in GRADE_IDS for e in catalogue.entries(gid)}
    assert len(answers) > 50
    disagreeing = {k: v for k, v in _disagreements(answers).items() if any(v.values())}
    assert disagreeing == {}
