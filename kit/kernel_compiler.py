"""numba's CUDA compiler decides what a kernel is: the judge's compile check of notebook 02's cells.

A grading subject runs a cell's kernels on the checking simulator (ch13lib.cuda_sim), and reports
each kernel it ran with the types of its arguments. The judge then asks this compiler whether
numba's real CUDA target compiles that kernel, read from the cell's TEXT (ch13lib._cuda_source:
the kernels, device functions, library imports and literal constants of the cell, nothing it made
while running) for those types. A kernel numba refuses fails the test with numba's reason: what a
GPU could not run never scores, whatever the simulator made of it.

The compiler is NVIDIA's ``numba-cuda`` with the NVVM of ``nvidia-cuda-nvcc-cu12`` (pyproject.toml);
it needs no GPU and no driver (``compile_ptx(..., cc=(8, 0))``). It runs in a process of its own,
``python -m kit.kernel_compiler``, because numba reads ``NUMBA_ENABLE_CUDASIM`` once and the judge
runs with the simulator on; that process runs none of the cell: it makes functions from the cell's
``def`` statements (no decorator, default or annotation evaluated) and compiles them.
"""

from __future__ import annotations

import atexit
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time
import types

from kit import source_ch13lib

source_ch13lib()
from ch13lib.lang import Messages, language  # noqa: E402 - after the path to ch13lib

CC = (8, 0)
# What the kit says around numba's own reason (which stays as numba says it), in the course's
# language (ch13lib/lang.py): the grading's language reaches this process through CH13_LANG.
M = Messages(
    not_in_cell=(
        "`{kernel}` 不是在单元格顶层用 @cuda.jit 定义的核函数",
        "`{kernel}` is not a kernel defined with @cuda.jit at the top of the cell",
    ),
    refused=(
        "numba 的 CUDA 编译器拒绝编译 `{kernel}` (参数类型 {signature}): {reason}。核函数只能读取它的参数, cuda、"
        "math 和 numpy 的函数与类型, 单元格中的设备函数, 以及单元格用字面量赋值的常量; numba 在核函数中不编译 "
        "list、dict、属性赋值或对象",
        "numba's CUDA compiler refuses `{kernel}` for arguments ({signature}): {reason}. A kernel reads only its "
        "arguments, cuda's, math's and numpy's functions and types, the cell's device functions, and constants "
        "the cell assigns from literals; numba compiles no list, dict, attribute store or object in a kernel",
    ),
)
# the compiler's stage names that lead its messages: noise to a student
_PIPELINE_STEPS = tuple(
    f"Failed in cuda mode pipeline (step: {step})" for step in ("nopython frontend", "cuda native lowering")
)  # any compute capability will do: the check is what numba types and lowers, not the PTX


# ---------------------------------------------------------------------------------------------- the process


def _types(specs):
    import numpy as np
    from numba import from_dtype
    from numba.core import types

    out = []
    for spec in specs:
        dtype = from_dtype(np.dtype(spec["dtype"]))
        out.append(types.Array(dtype, spec["ndim"], spec.get("layout", "C")) if spec.get("ndim") else dtype)
    return tuple(out)


def _signature(specs) -> str:
    return ", ".join(f"{s['dtype']}[{', '.join([':'] * s['ndim'])}]" if s.get("ndim") else s["dtype"] for s in specs)


def _reason(e: BaseException) -> str:
    """numba's message, its first lines: what it could not type, without its long candidate lists."""
    lines = [ln.strip() for ln in str(e).splitlines() if ln.strip()]
    keep = []
    for ln in lines:
        ln = ln.lstrip(">- ").strip()
        for noise in (
            "Failed in cuda mode pipeline (step: nopython frontend)",
            "Resolution failure for literal arguments:",
        ):
            ln = ln.replace(noise, "").strip()
        if not ln or ln.startswith(("During:", "File ", "Of which", "There are ", "Overload", "^", "<source missing")):
            continue
        keep.append(ln)
        if len(keep) == 3:
            break
    return " ".join(keep)[:400] or type(e).__name__


def compile_kernel(text: str, filename: str, kernel: str, specs) -> str | None:
    """None when numba compiles ``kernel`` of the cell for these argument types, else why not."""
    import numba
    from numba import cuda
    from numba.cuda import dispatcher

    from ch13lib._cuda_source import kernel_source

    # a device function compiles for the current device's compute capability, which numba asks the
    # driver for; there is no driver here, and the check is the same for any capability
    dispatcher.get_current_device = lambda: types.SimpleNamespace(compute_capability=CC)

    src = kernel_source(text, filename)
    if kernel not in src.kernels.values():  # the simulator reports a kernel by its def's name
        return M("not_in_cell", kernel=kernel)
    ns = src.namespace(cuda, numba, frozen=False)  # the modules themselves: numba types them
    pyfunc = ns[kernel]
    pyfuncs = {alias: ns[alias] for alias in {**src.kernels, **src.devices}}
    for alias in src.devices:
        ns[alias] = cuda.jit(device=True)(pyfuncs[alias])
    for alias in src.kernels:
        ns[alias] = cuda.jit(pyfuncs[alias])  # a kernel calling a kernel: numba's refusal
    try:
        cuda.compile_ptx(pyfunc, _types(specs), cc=CC)
    except Exception as e:  # noqa: BLE001 - any refusal is the answer
        reason = _reason(e)
        named = [n for n in src.unusable if re.search(rf"\b{re.escape(n)}\b", reason)]
        if named:  # a name the cell defines, but not as something a kernel can read: say why
            reason += f" (`{named[0]}`: {src.why_unreadable(named[0])})"
        return M("refused", kernel=kernel, signature=_signature(specs), reason=reason)
    return None


ENV = "CH13_KERNEL_COMPILER"  # the socket of the compiler a grading process's judges share


def _serve(lines, out, cache: dict, lock: threading.Lock) -> None:
    """One request a line ({"text", "filename", "kernel", "args", "lang"}), one answer a line, in
    the asking judge's language (one compiler serves gradings of any language)."""
    from ch13lib import lang

    for line in lines:
        req = json.loads(line)
        key = (req["text"], req["kernel"], json.dumps(req["args"], sort_keys=True), req.get("lang"))
        with lock:  # one compilation at a time: numba compiles under a lock of its own anyway
            if key not in cache:
                lang.use(req.get("lang"))
                try:
                    cache[key] = compile_kernel(req["text"], req["filename"], req["kernel"], req["args"])
                finally:
                    lang.use(None)
        out.write(json.dumps({"refused": cache[key]}) + "\n")
        out.flush()


def _warm() -> None:
    """numba's imports and NVVM's first start (about two seconds), before the first judge asks."""
    text = "from numba import cuda\n\n@cuda.jit\ndef k(a):\n    a[0] = 1\n"
    compile_kernel(text, "<warm>", "k", [{"dtype": "int32", "ndim": 1, "layout": "C"}])


def _serve_socket(path: str) -> None:
    """Answer every judge that connects to ``path``, each on a thread of its own, from one cache."""
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    os.chmod(path, 0o600)
    server.listen(64)
    cache, lock = {}, threading.Lock()
    threading.Thread(target=_warm, daemon=True).start()

    def connection(conn: socket.socket) -> None:
        with conn, conn.makefile("r", encoding="utf-8") as lines, conn.makefile("w", encoding="utf-8") as out:
            _serve(lines, out, cache, lock)

    while True:
        conn, _ = server.accept()
        threading.Thread(target=connection, args=(conn,), daemon=True).start()


def _env() -> dict:
    import kit

    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_ENABLE_CUDASIM", ENV)}
    env["PYTHONPATH"] = os.pathsep.join([kit.source_ch13lib(), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return env


_shared: tuple[subprocess.Popen, str] | None = None
_shared_lock = threading.Lock()


def shared_socket() -> str:
    """The socket of this process's one compiler, started at its first need: every judge this
    process starts (kit/grading.py hands it down as CH13_KERNEL_COMPILER) asks it, so numba and NVVM
    load once per grading process, not once per cell."""
    global _shared
    with _shared_lock:
        if _shared is None or _shared[0].poll() is not None:
            path = os.path.join(tempfile.mkdtemp(prefix="ch13-compiler-"), "socket")
            proc = subprocess.Popen([sys.executable, "-m", "kit.kernel_compiler", "--socket", path], env=_env())
            atexit.register(proc.kill)
            _shared = (proc, path)
        return _shared[1]


# ---------------------------------------------------------------------------------------------- the judge's side


class Compiler:
    """The judge's handle: ``check(text, filename, kernel, specs)`` -> None or numba's reason. It asks
    the grading process's shared compiler (``CH13_KERNEL_COMPILER``) or, without one, a process of
    its own, started at the first question (or at :meth:`start`, so its imports overlap other work)."""

    def __init__(self) -> None:
        self._proc: subprocess.Popen | None = None
        self._io = None  # (reader, writer)
        self._lock = threading.Lock()
        self._answers: dict = {}

    def start(self) -> None:
        with self._lock:
            if self._io is None:
                self._io = self._connect() or self._spawn()

    def _connect(self):
        path = os.environ.get(ENV)
        if not path:
            return None
        for _ in range(200):  # the shared compiler binds its socket first thing: it is there within seconds
            try:
                conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                conn.connect(path)
                return conn.makefile("r", encoding="utf-8"), conn.makefile("w", encoding="utf-8")
            except OSError:
                conn.close()
                time.sleep(0.05)  # not bound yet
        return None  # then a process of our own: slower, the same answers

    def _spawn(self):
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "kit.kernel_compiler"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=_env(),
            text=True,
        )
        return self._proc.stdout, self._proc.stdin

    def check(self, text: str, filename: str, kernel: str, specs) -> str | None:
        key = (text, kernel, json.dumps(specs, sort_keys=True))
        if key in self._answers:
            return self._answers[key]
        self.start()
        with self._lock:
            reader, writer = self._io
            request = {"text": text, "filename": filename, "kernel": kernel, "args": specs, "lang": language()}
            writer.write(json.dumps(request) + "\n")
            writer.flush()
            line = reader.readline()
        if not line:
            raise RuntimeError("the kernel compiler (python -m kit.kernel_compiler) ended without an answer")
        self._answers[key] = json.loads(line)["refused"]
        return self._answers[key]


if __name__ == "__main__":
    if sys.argv[1:2] == ["--socket"]:
        _serve_socket(sys.argv[2])
    else:
        _serve(sys.stdin, sys.stdout, {}, threading.Lock())
