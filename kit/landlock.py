"""Landlock: an allow-list file system and signal scoping for a job, without root.

Tiers 2 and 3 of kit/sandbox.py cannot pivot to a fresh root (that needs a mount namespace we own
with root's rights), so the host's files stay visible there and a job shares the TA's uid with
every other job. Linux's Landlock LSM (5.13+; ABI 6, 6.12+, adds scopes) lets any process take
rights away from itself and its descendants for good: after ``restrict`` a job opens, lists,
executes and writes only beneath the paths it was given, and signals only processes of its own
domain (not the judges, their zygote, nbgrader or another student's job). It complements the
namespaces; it does not replace them (stat, the names in a listed folder and open descriptors stay
reachable, and the network is the network namespace's job).

Written here with ctypes (about 80 lines) rather than pinned from PyPI: its one binding,
``landlock`` 1.0.0.dev5, is an alpha without scopes (ABI 6), and signal scoping is half of what
we want (design notes: "Landlock"). The kernel's ABI decides
what we can ask for; an older kernel is asked for less, and one without Landlock for nothing
(``restrict`` returns 0 and the caller says so on stderr).
"""

from __future__ import annotations

import ctypes
import os

_libc = ctypes.CDLL(None, use_errno=True)
# The same numbers on every architecture (the unified syscall table, Linux 5.13).
SYS_CREATE_RULESET, SYS_ADD_RULE, SYS_RESTRICT_SELF = 444, 445, 446
CREATE_RULESET_VERSION = 1
RULE_PATH_BENEATH = 1

# LANDLOCK_ACCESS_FS_*, and the ABI that introduced each
EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
ABI1_ALL = (
    1 << 13
) - 1  # ... REMOVE_DIR, REMOVE_FILE, MAKE_CHAR, MAKE_DIR, MAKE_REG, MAKE_SOCK, MAKE_FIFO, MAKE_BLOCK, MAKE_SYM
REFER, TRUNCATE, IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15  # ABI 2, 3, 5
SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1 << 0, 1 << 1  # ABI 6

READ = EXECUTE | READ_FILE | READ_DIR
FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV  # all a rule on a non-folder may hold


class _RulesetAttr(ctypes.Structure):
    _fields_ = [
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    ]


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def abi() -> int:
    """The kernel's Landlock ABI version; 0 where there is none (too old, or not enabled)."""
    version = _libc.syscall(
        ctypes.c_long(SYS_CREATE_RULESET), None, ctypes.c_size_t(0), ctypes.c_uint32(CREATE_RULESET_VERSION)
    )
    return max(version, 0)


def handled(version: int) -> int:
    """Every file-system right this ABI knows: what we do not grant is refused."""
    rights = ABI1_ALL
    if version >= 2:
        rights |= REFER
    if version >= 3:
        rights |= TRUNCATE
    if version >= 5:
        rights |= IOCTL_DEV
    return rights


def _check(result: int, what: str) -> int:
    if result < 0:
        err = ctypes.get_errno()
        raise OSError(err, f"landlock: {what}: {os.strerror(err)}")
    return result


def restrict(read: list[str], write: list[str], listing: list[str] = ()) -> int:
    """From now on this process and its children reach only beneath ``read`` (list, read, execute),
    ``write`` (everything, creating and removing included) and ``listing`` (names only), and signal
    or connect to abstract sockets only inside their own domain. Paths that do not exist are skipped. Needs no_new_privs
    (kit.sandbox.drop_privileges sets it). Returns the ABI used; 0 and nothing done without Landlock."""
    version = abi()
    if version == 0:
        return 0
    everything = handled(version)
    attr = _RulesetAttr(handled_access_fs=everything, handled_access_net=0, scoped=0)
    size = 8  # ABI 1-3: the file-system rights only; 4-5 add the network's; 6 the scopes
    if version >= 6:
        attr.scoped = SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL
        size = 24
    ruleset = _check(
        _libc.syscall(ctypes.c_long(SYS_CREATE_RULESET), ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0)),
        "create_ruleset",
    )
    try:
        for paths, rights in ((listing, READ_DIR), (read, READ), (write, everything)):
            for path in paths:
                try:
                    fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
                except FileNotFoundError:
                    continue
                try:
                    allowed = rights if os.path.isdir(path) else rights & FILE_RIGHTS & everything
                    rule = _PathBeneath(allowed_access=allowed, parent_fd=fd)
                    _check(
                        _libc.syscall(
                            ctypes.c_long(SYS_ADD_RULE),
                            ctypes.c_int(ruleset),
                            ctypes.c_int(RULE_PATH_BENEATH),
                            ctypes.byref(rule),
                            ctypes.c_uint32(0),
                        ),
                        f"add_rule {path}",
                    )
                finally:
                    os.close(fd)
        _check(
            _libc.syscall(ctypes.c_long(SYS_RESTRICT_SELF), ctypes.c_int(ruleset), ctypes.c_uint32(0)), "restrict_self"
        )
    finally:
        os.close(ruleset)
    return version
