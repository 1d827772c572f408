"""A seccomp filter for a job's processes: the page cache's state is not theirs to read.

Every sandbox reads the same host files (the interpreter, site-packages: one inode each), and the
page cache is one per machine. A rank that loads pages of a large library file (a plain read, or
``posix_fadvise(WILLNEED)``) and another that asks which pages are cached without loading them
(``preadv2`` with ``RWF_NOWAIT``: EAGAIN means not cached) share a board the audit hook never
sees, since none of these calls raises an audit event: a relayed world's ranks moved tensors
past the broker that way, and the board reaches across
jobs, two students' too. Loading a page cannot be refused (every read does it), so this closes
the reading side, the calls that tell a page's state without the cost of loading it:

- ``preadv2``/``pwritev2`` with ``RWF_NOWAIT``; ``mincore``; ``cachestat``;
- ``io_uring_setup`` and ``io_setup`` (their requests carry the same no-wait flags, out of a
  filter's reach: nothing the exercises run uses either);
- any system call of another ABI than the interpreter's (``int 0x80``, x32: other numbers).

They fail with EPERM; everything else is allowed. Telling a cached page by how long a read takes
stays possible (a timing channel), and so does a mapping's fault-around read back from
``/proc/self/pagemap`` (docs/sandbox.md: an open channel). Installed by kit.sandbox after
``no_new_privs`` and before the job's command, which inherits it with every process it starts.

Raw BPF through ctypes rather than libseccomp: a dozen instructions, no system library to
require on a grading machine, and the same code on x86_64 and aarch64 (the numbers below).
"""

from __future__ import annotations

import ctypes
import errno
import platform
import struct

_libc = ctypes.CDLL(None, use_errno=True)

PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 22, 2
RWF_NOWAIT = 0x8

# BPF: struct sock_filter {u16 code; u8 jt; u8 jf; u32 k}, over struct seccomp_data {int nr;
# u32 arch; u64 ip; u64 args[6]} (little-endian: an argument's low half at 16 + 8 * i).
_LD_ABS, _JEQ, _JGE, _JSET, _RET = 0x20, 0x15, 0x35, 0x45, 0x06
_ALLOW, _ERRNO = 0x7FFF0000, 0x00050000
_NR, _ARCH, _ARG5 = 0, 4, 16 + 8 * 5

# audit arch, the numbers of the refused calls, and those whose flags (argument 5) are checked
_ABI = {
    "x86_64": (0xC000003E, {"mincore": 27, "cachestat": 451, "io_uring_setup": 425, "io_setup": 206}, (327, 328)),
    "aarch64": (0xC00000B7, {"mincore": 232, "cachestat": 451, "io_uring_setup": 425, "io_setup": 0}, (286, 287)),
}
_X32 = 0x40000000  # x86_64's x32 ABI: the same arch, numbers from here up


def program(machine: str | None = None) -> list[tuple[int, int, int, int]] | None:
    """The filter's instructions for this machine (None: an architecture it does not know)."""
    abi = _ABI.get(machine or platform.machine())
    if abi is None:
        return None
    arch, refused, flagged = abi
    code: list = []
    code.append((_LD_ABS, 0, 0, _ARCH))
    code.append((_JEQ, 1, 0, arch))  # the interpreter's ABI: on; any other: refused
    code.append("deny")
    code.append((_LD_ABS, 0, 0, _NR))
    if arch == _ABI["x86_64"][0]:
        code.append((_JGE, 0, 1, _X32))
        code.append("deny")
    for nr in refused.values():
        code.append((_JEQ, 0, 1, nr))
        code.append("deny")
    for nr in flagged:
        code.append((_JEQ, 0, 1, nr))
        code.append("flags")
    code.append((_RET, 0, 0, _ALLOW))
    flags_at = len(code)
    code += [(_LD_ABS, 0, 0, _ARG5), (_JSET, 0, 1, RWF_NOWAIT)]
    deny_at = len(code)
    code += [(_RET, 0, 0, _ERRNO | errno.EPERM), (_RET, 0, 0, _ALLOW)]
    # the labels, as jumps from where they stand (a jump counts from the next instruction)
    out = []
    for i, ins in enumerate(code):
        if ins == "deny":
            ins = (0x05, 0, 0, deny_at - i - 1)  # BPF_JMP|BPF_JA
        elif ins == "flags":
            ins = (0x05, 0, 0, flags_at - i - 1)
        out.append(ins)
    return out


class _Filter(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def install() -> str | None:
    """Install the filter on this thread and what it starts (no_new_privs must be set). Returns
    a problem to tell (the architecture unknown, the kernel refused), or None."""
    code = program()
    if code is None:
        return f"no seccomp filter for {platform.machine()}: the page cache's state is readable"
    raw = b"".join(struct.pack("<HBBI", *ins) for ins in code)
    buf = ctypes.create_string_buffer(raw, len(raw))
    prog = _Filter(len(code), ctypes.cast(buf, ctypes.c_void_p))
    if _libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(prog), 0, 0) != 0:
        why = errno.errorcode.get(ctypes.get_errno(), "?")
        return f"seccomp filter refused ({why}): the page cache's state is readable"
    return None
