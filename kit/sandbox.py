"""Run one untrusted command (a student's kernel, a grader) in a sandbox, then exec it.

    python -m kit.sandbox [--no-network] [--workdir DIR] -- CMD ...

What it does, in order, before exec'ing CMD:
- resource limits: processes, file size, open files, core dumps, CPU time (see LIMITS);
- its own private home and temp folder (HOME, TMPDIR, IPYTHONDIR, ...), removed by the caller;
- with ``--no-network``, a fresh network namespace with only its own loopback up (gloo and Ray
  still talk to themselves; nothing else is reachable);
- when started as root, it drops to the unprivileged user ``nobody``: the gradebook, the other
  students' folders and graders/ are not writable by it (see docs/design.md, "Sandbox").
A Jupyter connection file named by ``-f`` is copied where ``nobody`` can read it.

Where a step is not available (not root, no namespaces) it is skipped and a line on stderr says so;
the wall-clock kill of the whole process tree is the caller's job (kit/grading.py, kit/execute.py),
which finds every process of the job by the CH13_JOB token in its environment.
"""
from __future__ import annotations

import ctypes
import fcntl
import os
import pwd
import resource
import shutil
import socket
import struct
import sys
import tempfile

LIMITS = {                                   # per process; generous for Ray, torch and numba
    resource.RLIMIT_NPROC: 4096,             # counts every process of the user: a fork bomb stops here
    resource.RLIMIT_FSIZE: 512 * 2**20,      # no single file over 512 MiB: filling the disk stops early
    resource.RLIMIT_NOFILE: 4096,
    resource.RLIMIT_CORE: 0,
    resource.RLIMIT_CPU: 900,                # CPU seconds: a last guard; budgets are in steps
}
SANDBOX_USER = "nobody"
CLONE_NEWNET = 0x40000000


def make_reachable(paths: list[str]) -> list[str]:
    """As root, let ``nobody`` traverse (not list) the folders above the interpreter and the kit.

    pyenv keeps Python under /root (mode 700): without this the sandboxed user cannot even start
    Python. Adds the search bit (o+x) only, and only where it is missing; returns what changed.
    """
    if os.geteuid() != 0:
        return []
    changed = []
    for path in paths:
        path = os.path.realpath(path)
        while True:
            mode = os.stat(path).st_mode
            if os.path.isdir(path) and not mode & 0o001:
                os.chmod(path, mode | 0o001)
                changed.append(path)
            parent = os.path.dirname(path)
            if parent == path:
                break
            path = parent
    return changed


def set_limits() -> None:
    for which, value in LIMITS.items():
        soft, hard = resource.getrlimit(which)
        if hard != resource.RLIM_INFINITY:
            value = min(value, hard)
        try:
            resource.setrlimit(which, (value, value if hard == resource.RLIM_INFINITY else hard))
        except (ValueError, OSError):
            pass


def isolate_network() -> bool:
    """A new network namespace with loopback up. Needs CAP_SYS_ADMIN (root here)."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(CLONE_NEWNET) != 0:
        return False
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:   # SIOCSIFFLAGS lo: IFF_UP | IFF_LOOPBACK | IFF_RUNNING
        fcntl.ioctl(sock, 0x8914, struct.pack("16sH14s", b"lo", 0x1 | 0x8 | 0x40, b""))
    finally:
        sock.close()
    return True


def private_dirs(uid: int, gid: int) -> str:
    home = tempfile.mkdtemp(prefix="ch13-sandbox-")
    os.chown(home, uid, gid)
    for var in ("HOME", "TMPDIR", "IPYTHONDIR", "MPLCONFIGDIR", "HYPOTHESIS_STORAGE_DIRECTORY",
                "NUMBA_CACHE_DIR", "JUPYTER_RUNTIME_DIR", "XDG_CACHE_HOME", "XDG_RUNTIME_DIR"):
        os.environ[var] = home
    return home


def share_connection_file(argv: list[str], home: str, uid: int, gid: int) -> list[str]:
    if "-f" in argv:
        i = argv.index("-f") + 1
        copy = os.path.join(home, os.path.basename(argv[i]))
        shutil.copyfile(argv[i], copy)
        os.chown(copy, uid, gid)
        argv = argv[:i] + [copy] + argv[i + 1:]
    return argv


def main(argv: list[str]) -> None:
    no_network = False
    workdir = None
    while argv and argv[0] != "--":
        opt = argv.pop(0)
        if opt == "--no-network":
            no_network = True
        elif opt == "--workdir":
            workdir = argv.pop(0)
        else:
            sys.exit(f"kit.sandbox: unknown option {opt}")
    cmd = argv[1:]
    if not cmd:
        sys.exit("kit.sandbox: no command")
    root = os.geteuid() == 0
    user = pwd.getpwnam(SANDBOX_USER) if root else pwd.getpwuid(os.geteuid())
    uid, gid = user.pw_uid, user.pw_gid
    home = private_dirs(uid, gid)
    os.environ["CH13_SANDBOX_HOME"] = home
    if no_network and not isolate_network():
        print("kit.sandbox: no network namespace here; network not isolated", file=sys.stderr)
    cmd = share_connection_file(cmd, home, uid, gid)
    if workdir:
        if root:
            os.chown(workdir, uid, gid)
        os.chdir(workdir)
    set_limits()
    if root:
        os.setgroups([])
        os.setgid(gid)
        os.setuid(uid)
    os.umask(0o022)
    os.execvp(cmd[0], cmd)


if __name__ == "__main__":
    main(sys.argv[1:])
