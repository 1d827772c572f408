"""kit/seccomp.py: a sandboxed job cannot read the page cache's state (a board in the page cache
of host files every sandbox reads would move a relayed world's tensors unseen)."""

from __future__ import annotations

import subprocess
import sys

from kit import ROOT, seccomp

PROBE = r"""
import ctypes, mmap, os, sys
f = os.open(sys.executable, os.O_RDONLY)
libc = ctypes.CDLL(None, use_errno=True)
region = mmap.mmap(-1, 4096)
address = ctypes.addressof(ctypes.c_char.from_buffer(region))
MINCORE = {"x86_64": 27, "aarch64": 232}[os.uname().machine]

def syscall(*args):
    if libc.syscall(*args) == -1:
        raise OSError(ctypes.get_errno(), "")

def tried(fn):
    try:
        fn()
        return "ok"
    except OSError as e:
        return str(e.errno)

print(
    tried(lambda: os.preadv(f, [bytearray(8)], 0)),
    tried(lambda: os.preadv(f, [bytearray(8)], 0, os.RWF_HIPRI)),
    tried(lambda: os.preadv(f, [bytearray(8)], 0, os.RWF_NOWAIT)),
    tried(lambda: syscall(MINCORE, ctypes.c_void_p(address), 4096, ctypes.create_string_buffer(1))),
    tried(lambda: os.posix_fadvise(f, 0, 4096, os.POSIX_FADV_WILLNEED)),
)
"""


def _probe(*prefix: str) -> list[str]:
    out = subprocess.run([*prefix, sys.executable, "-c", PROBE], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.returncode == 0, out
    return out.stdout.split()


def test_a_sandboxed_job_cannot_tell_which_pages_are_cached():
    # plain reads (flags or none) and fadvise work; a no-wait read and mincore are refused (EPERM)
    assert _probe() == ["ok", "ok", "ok", "ok", "ok"]  # outside: every call works
    assert _probe(sys.executable, "-m", "kit.sandbox", "--no-network", "--") == ["ok", "ok", "1", "1", "ok"]


def test_the_filter_is_built_for_both_architectures_and_none_other():
    for machine in ("x86_64", "aarch64"):
        code = seccomp.program(machine)
        assert code and all(0 <= k < 1 << 32 and 0 <= jt < 256 and 0 <= jf < 256 for _, jt, jf, k in code)
        assert code[-2][3] == seccomp._ERRNO | 1 and code[-1][3] == seccomp._ALLOW  # EPERM, then allow
    assert seccomp.program("riscv64") is None
