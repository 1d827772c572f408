"""Run one untrusted command (a student's kernel, a grader) in a sandbox.

    python -m kit.sandbox [options] -- CMD ...

    --uid UID          run as this unprivileged uid (root only; kit.jobs.job_uid gives each job its own)
    --no-network       a fresh network namespace with only its own loopback up
    --workdir DIR      start in a PRIVATE COPY of DIR (a size-capped tmpfs at the same path)
    --writeback FILE   a file of DIR that stays the real one (the grader's results file)
    --keep PATH        a path that stays visible and writable (the kernel's ipc socket folder)
    --hide PATH        hide this path too; repeatable
    --course DIR       hide this course's gradebook, submitted/, autograded/, feedback/ (as the kit's own)
    --home DIR         the job's HOME and TMPDIR where the job sees DIR (tier 3; the caller removes it)

Three tiers, chosen by what the machine allows (docs/sandbox.md):

1. root (CI, a grading container): a new mount namespace and network namespace; /tmp, /var/tmp
   and /dev/shm are fresh size-capped tmpfs (the host's are invisible; everything written there is
   freed when the job ends); the hidden paths (graders/, tests/, solutions/, .git, the source
   notebooks, every course's gradebook, submitted/, autograded/, feedback/) are covered by empty
   folders; the job runs under its own uid with no_new_privs (setuid binaries do nothing).
2. not root, but unprivileged user namespaces work (a TA's laptop): the same namespaces inside a
   user namespace, under the TA's own uid, the host read-only; Landlock (kit/landlock.py) draws
   the allow-list the root tier pivots to.
3. neither (or --no-namespaces): resource limits, private HOME/TMPDIR, Landlock's allow-list and
   the caller's wall-clock and memory watchdogs only; a line on stderr says what is missing.

    --data-mb MB       RLIMIT_DATA of each process of the job
    --no-namespaces    the third tier wherever the machine stands

Both come from kit.config.Sandbox (``proc_data_mb``, ``namespaces``): the kit's callers pass them
explicitly (Sandbox.sandbox_args); a command line without them gets Sandbox's defaults and its
environment variables (CH13_PROC_DATA_MB, CH13_SANDBOX_NAMESPACES=0).

Every tier sets the resource limits of LIMITS (processes, file size, open files, CPU seconds, no
core dumps) and the data segment's. The wall-clock kill of the whole process tree and the job-wide memory
limit are the caller's (kit/grading.py, kit/execute.py with kit.jobs).
"""

from __future__ import annotations

import ctypes
import fcntl
import glob
import os
import pwd
import resource
import shutil
import socket
import struct
import sys
import tempfile

from kit import ROOT, SOURCE_DIR, seccomp
from kit.jobs import enter_cpu_group

MB = 2**20
LIMITS = {  # per process; generous for Ray, torch and numba
    resource.RLIMIT_NPROC: 1024,  # processes AND threads of the job's uid: a fork bomb stops here
    resource.RLIMIT_FSIZE: 256 * MB,  # no single file over 256 MiB
    resource.RLIMIT_NOFILE: 4096,
    resource.RLIMIT_CORE: 0,
    resource.RLIMIT_CPU: 900,  # CPU seconds: a last guard; budgets are in steps
}  # RLIMIT_DATA (heap + private maps) is --data-mb, kit.config.Sandbox.proc_data_mb; RLIMIT_AS would
# break Ray/torch/numba (huge reservations)
TMPFS_MB = {"/tmp": 1024, "/var/tmp": 64, "/dev/shm": 1024, "/run/lock": 1}  # a disk bomb fills these, nothing else
WORKDIR_MB = 512
SANDBOX_USER = "nobody"

CLONE_NEWNS, CLONE_NEWUSER, CLONE_NEWNET, CLONE_NEWIPC, CLONE_NEWPID = (
    0x00020000,
    0x10000000,
    0x40000000,
    0x08000000,
    0x20000000,
)
MS_RDONLY, MS_REMOUNT, MNT_DETACH = 1, 32, 2
PR_SET_PDEATHSIG = 1
SYS_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41}
# The allow-list (root tier): all a job sees of the host, read-only, besides its own folders.
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/sys")
# Of the kit's checkout, what a job runs: the subject's code and the public harnesses. Named, not
# "the checkout less its secrets": a deny-list missed hypothesis's cache of the graders' literals.
KIT_RUNS = (os.path.join(ROOT, "kit"), os.path.join(SOURCE_DIR, "ch13lib"))
MS_NOSUID, MS_NODEV, MS_BIND, MS_REC, MS_PRIVATE = 2, 4, 4096, 16384, 1 << 18
PR_SET_DUMPABLE, PR_SET_NO_NEW_PRIVS = 4, 38

_libc = ctypes.CDLL(None, use_errno=True)


def make_reachable(paths: list[str]) -> list[str]:
    """As root, let the sandboxed uids traverse (not list) the folders above the interpreter and the kit.

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


_kit_reachable = False


def make_kit_reachable() -> None:
    """make_reachable for what every job runs (the interpreter, its standard library, the kit): once
    per process, before the first sandboxed job starts."""
    global _kit_reachable
    if not _kit_reachable:
        import sysconfig

        make_reachable([sys.executable, sysconfig.get_paths()["stdlib"], ROOT])
        _kit_reachable = True


def hidden_paths(course: str | None = None) -> list[str]:
    """What a sandboxed job must not see: hidden tests, solutions, the gradebook, other students."""
    roots = [ROOT] + ([os.path.realpath(course)] if course else [])
    # .hypothesis: hypothesis caches the literals of every local module it loads there (the
    # graders' hidden answers among them), whoever ran it from the checkout (a judge, pytest)
    out = [os.path.join(ROOT, p) for p in ("tests", "solutions", ".git", "out", ".hypothesis")]
    src = os.path.join(ROOT, "source")
    for folder, _dirs, files in os.walk(src):
        out += [os.path.join(folder, f) for f in files if f.endswith(".ipynb")]  # the reference solutions
    for r in roots:
        out += [
            os.path.join(r, p)
            for p in ("gradebook.db", "submitted", "autograded", "feedback", "solutions", "nbgrader_config.py")
        ]
    return sorted({p for p in out if os.path.lexists(p)})


def _threads_of(uid: int) -> int:
    n = 0
    for entry in os.listdir("/proc"):
        try:
            if entry.isdigit() and os.stat(f"/proc/{entry}").st_uid == uid:
                n += len(os.listdir(f"/proc/{entry}/task"))
        except OSError:
            continue
    return n


def set_limits(shared_uid: bool, data_mb: int) -> None:
    """LIMITS and RLIMIT_DATA; RLIMIT_NPROC counts every thread of the uid: a uid shared with
    others gets headroom."""
    for which, value in {**LIMITS, resource.RLIMIT_DATA: data_mb * MB}.items():
        if which == resource.RLIMIT_NPROC and shared_uid:
            value += _threads_of(os.getuid())
        soft, hard = resource.getrlimit(which)
        if hard != resource.RLIM_INFINITY:
            value = min(value, hard)
        try:
            resource.setrlimit(which, (value, value if hard == resource.RLIM_INFINITY else hard))
        except (ValueError, OSError):
            pass


def _mount(source: str, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    if (
        _libc.mount(
            source.encode(),
            target.encode(),
            fstype.encode() if fstype else None,
            ctypes.c_ulong(flags),
            data.encode() if data else None,
        )
        != 0
    ):
        err = ctypes.get_errno()
        raise OSError(err, f"mount {source} on {target}: {os.strerror(err)}")


SYS_MOUNT_SETATTR, AT_FDCWD, AT_RECURSIVE, MOUNT_ATTR_RDONLY = 442, -100, 0x8000, 1  # Linux 5.12


class _MountAttr(ctypes.Structure):
    _fields_ = [(n, ctypes.c_uint64) for n in ("attr_set", "attr_clr", "propagation", "userns_fd")]


def _read_only(target: str, on: bool, recursive: bool = False) -> None:
    """mount_setattr: make the mount at ``target`` (and every mount below it) read-only, or writable again."""
    attr = _MountAttr(attr_set=MOUNT_ATTR_RDONLY if on else 0, attr_clr=0 if on else MOUNT_ATTR_RDONLY)
    flags = AT_RECURSIVE if recursive else 0
    if _libc.syscall(ctypes.c_long(SYS_MOUNT_SETATTR), AT_FDCWD, target.encode(), flags, ctypes.byref(attr), 32) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"mount_setattr {target}: {os.strerror(err)}")


def _tmpfs(target: str, mb: int, mode: str = "1777", uid: int | None = None) -> None:
    owner = f",uid={uid},gid={uid}" if uid is not None else ""
    _mount("tmpfs", target, "tmpfs", MS_NOSUID | MS_NODEV, f"size={mb}m,mode={mode}{owner}")


def loopback_up() -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:  # SIOCSIFFLAGS lo: IFF_UP | IFF_LOOPBACK | IFF_RUNNING
        fcntl.ioctl(sock, 0x8914, struct.pack("16sH14s", b"lo", 0x1 | 0x8 | 0x40, b""))
    finally:
        sock.close()


def enter_namespaces(network: bool, namespaces: bool = True) -> str:
    """New mount (and network) namespaces: 'root', 'userns' or '' when none could be made (or
    ``namespaces`` is False)."""
    if not namespaces:
        return ""
    # Its own IPC namespace: SysV shared memory, semaphores and message queues die with the job.
    # Its own PID namespace: the job sees only its processes (with a fresh /proc: not the other
    # jobs' command lines and tokens, tiers 2 and 3 go by), and all die with its first one (see
    # become_pid_one).
    flags = CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWPID | (CLONE_NEWNET if network else 0)
    if os.geteuid() == 0:
        if _libc.unshare(flags) != 0:
            return ""
        tier = "root"
    else:
        uid, gid = os.getuid(), os.getgid()
        if _libc.unshare(flags | CLONE_NEWUSER) != 0:
            return ""
        try:  # keep our own uid inside: no privilege beyond this namespace
            with open("/proc/self/setgroups", "w") as f:
                f.write("deny")
            with open("/proc/self/uid_map", "w") as f:
                f.write(f"{uid} {uid} 1")
            with open("/proc/self/gid_map", "w") as f:
                f.write(f"{gid} {gid} 1")
        except OSError:
            return ""
        tier = "userns"
    try:
        _mount("none", "/", None, MS_REC | MS_PRIVATE)  # nothing we mount leaks to the host
        if network:
            loopback_up()
    except OSError:  # a user namespace without mount rights (e.g. AppArmor's userns restriction)
        return ""
    return tier


def _bind(source: str, target_root: str, *, readonly: bool) -> None:
    target = target_root + source
    if os.path.isdir(source):
        os.makedirs(target, exist_ok=True)
    else:
        os.makedirs(os.path.dirname(target), exist_ok=True)
        open(target, "a").close()
    _mount(source, target, None, MS_BIND | MS_REC)
    if readonly:
        _mount("none", target, None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)


def pivot_to_allow_list(own: list[str]) -> None:
    """Root tier: the job's whole file system becomes a fresh root holding only the system folders,
    the interpreter and of the kit what a job runs (KIT_RUNS) read-only, a fresh /proc of its PID
    namespace, /dev, and its own folders (``own``: the private tmpfs folders, the work folder, the
    kept paths). The rest of the checkout, another checkout of the kit, home folders, /srv, /mnt,
    /opt, /var and /run of the host are simply not there."""
    import platform

    # Mounted on a host folder the job will not see (the mount namespace is the job's own).
    new = next((d for d in ("/mnt", "/media", "/srv") if os.path.isdir(d) and not os.path.islink(d)), "/tmp/.ch13-root")
    os.makedirs(new, exist_ok=True)
    _tmpfs(new, 1, mode="0755")
    readonly = [d for d in SYSTEM_DIRS if os.path.exists(d)]
    readonly += sorted({os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, *KIT_RUNS)})
    for path in readonly:
        if not os.path.islink(path):
            _bind(path, new, readonly=True)
        else:  # /bin -> usr/bin on merged-/usr systems: the same link in the new root
            os.symlink(os.readlink(path), new + path)
    _minimal_dev(new)
    for path in ["/tmp", "/var/tmp", "/run/lock"] + own:
        if os.path.exists(path) and not os.path.exists(new + path + "/.ch13-bound"):
            _bind(path, new, readonly=False)
    os.makedirs(new + "/proc", exist_ok=True)
    _mount("proc", new + "/proc", "proc", MS_NOSUID | MS_NODEV | 8)  # MS_NOEXEC = 8
    os.makedirs(new + "/.old", exist_ok=True)
    number = SYS_PIVOT_ROOT.get(platform.machine())
    if number is None or _libc.syscall(number, new.encode(), (new + "/.old").encode()) != 0:
        raise OSError(ctypes.get_errno(), "pivot_root failed")
    os.chdir("/")
    if _libc.umount2(b"/.old", MNT_DETACH) != 0:
        raise OSError(ctypes.get_errno(), "could not detach the host's file system")
    os.rmdir("/.old")


def _minimal_dev(new: str) -> None:
    """The new root's /dev: a tmpfs holding only the nodes a job opens by name (DEV_NODES, a GPU's),
    bound from the host's, and the /dev/fd links. No /dev/pts or /dev/ptmx: a pseudo-terminal one
    process opens, any process of the same uid can open by its number, and a world's ranks (each a
    subject of its own) share the job's uid: a pseudo-terminal would carry all_reduce's tensors
    between ranks, unseen by the broker."""
    os.makedirs(new + "/dev", exist_ok=True)
    _tmpfs(new + "/dev", 1, mode="0755")
    for path in _job_devices():
        if os.path.exists(path):
            _bind(path, new, readonly=False)
    for name, target in (("fd", "/proc/self/fd"), ("stdin", "fd/0"), ("stdout", "fd/1"), ("stderr", "fd/2")):
        os.symlink(target, f"{new}/dev/{name}")


FORWARDED = ("SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2")


def become_pid_one() -> None:
    """After unshare(CLONE_NEWPID): fork; the child is the namespace's first process and goes on
    to run the job; this process stays outside, as the one its caller knows (kit.execute's kernel
    manager interrupts it), forwards signals to the child and exits with the child's status."""
    import signal

    child = os.fork()
    if child == 0:
        return
    for name in FORWARDED:
        signal.signal(getattr(signal, name), lambda signum, _frame: os.kill(child, signum))
    while True:
        try:
            _, status = os.waitpid(child, 0)
            break
        except InterruptedError:
            continue
    os._exit(os.waitstatus_to_exitcode(status) % 256 if os.WIFEXITED(status) else 128 + os.WTERMSIG(status))


def _copy_into(src_fd_path: str, dest: str) -> None:
    """Copy the workdir's files (read through a descriptor opened before it was covered)."""
    for name in os.listdir(src_fd_path):
        s, d = os.path.join(src_fd_path, name), os.path.join(dest, name)
        try:
            if os.path.isdir(s) and not os.path.islink(s):
                shutil.copytree(s, d, symlinks=True, ignore=shutil.ignore_patterns("__pycache__", ".ipynb_checkpoints"))
            elif os.path.isfile(s):
                shutil.copy2(s, d)
        except OSError as e:
            print(f"kit.sandbox: not copied into the workdir: {name}: {e}", file=sys.stderr)


def _under_tmpfs(paths: list[str]) -> list[str]:
    """The outermost of ``paths`` (resolved) that lie inside a folder the sandbox replaces."""
    found = []
    for p in sorted({os.path.realpath(p) for p in paths}):
        if any(p == t or p.startswith(t + "/") for t in TMPFS_MB) and not any(p.startswith(f + "/") for f in found):
            found.append(p)
    return found


def build_filesystem(
    tier: str, workdir: str | None, writeback: list[str], keep: list[str], hide: list[str], uid: int, gid: int
) -> None:
    """Inside the new mount namespace: fresh /tmp, hidden paths covered, a private workdir copy."""
    fds = {}
    for p in [workdir] + writeback + keep:
        if p:
            fds[p] = os.open(p, os.O_PATH)
    # The kit and its Python may live under /tmp (a CI clone, a test's course): carry them over
    # the fresh tmpfs before anything is hidden inside them.
    carried = {p: os.open(p, os.O_PATH) for p in _under_tmpfs([ROOT, sys.prefix, sys.base_prefix])}
    if tier == "userns":
        # The job runs as the TA, who owns the checkout, the interpreter and a home: the whole host
        # read-only (chmod, utime, writes: EROFS), its own mounts made below writable.
        _read_only("/", True, recursive=True)
    for target, mb in TMPFS_MB.items():
        if os.path.isdir(target):
            _tmpfs(target, mb)
    for p, fd in carried.items():
        os.makedirs(p, exist_ok=True)
        _mount(f"/proc/self/fd/{fd}", p, None, MS_BIND | MS_REC)
        os.close(fd)
    for p in hide:
        if not os.path.lexists(p):  # (under /tmp: already gone with the host's /tmp)
            continue
        try:
            if os.path.isdir(p) and not os.path.islink(p):
                _tmpfs(p, 1, mode="0755")
            elif os.path.isfile(p):
                _mount("/dev/null", p, None, MS_BIND)
        except OSError as e:
            print(f"kit.sandbox: could not hide {p}: {e}", file=sys.stderr)
    if workdir:
        os.makedirs(workdir, exist_ok=True)
        _tmpfs(workdir, WORKDIR_MB, mode="0755", uid=uid if tier == "root" else None)
        _copy_into(f"/proc/self/fd/{fds[workdir]}", workdir)
        if tier == "root":
            for folder, dirs, files in os.walk(workdir):
                for n in dirs + files:
                    os.lchown(os.path.join(folder, n), uid, gid)
        for f in writeback:
            target = os.path.join(workdir, os.path.basename(f))
            if not os.path.exists(target):
                open(target, "w").close()
            _mount(f"/proc/self/fd/{fds[f]}", target, None, MS_BIND)
            if tier == "userns":
                _read_only(target, False)
    for p in keep:
        os.makedirs(p, exist_ok=True)
        _mount(f"/proc/self/fd/{fds[p]}", p, None, MS_BIND)
        if tier == "userns":
            _read_only(p, False)
    for fd in fds.values():
        os.close(fd)
    if tier == "root":
        pivot_to_allow_list([p for p in [workdir] + keep if p])
    else:  # the PID namespace's own /proc (the root tier mounts it in its fresh root)
        try:
            _mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | 8)  # MS_NOEXEC = 8
        except OSError as e:  # e.g. a container that masks parts of the host's /proc: refused
            print(f"kit.sandbox: the host's /proc stays visible (other jobs' processes): {e}", file=sys.stderr)


def private_dirs(uid: int, gid: int, home: str | None = None) -> str:
    """The job's HOME and TMPDIR: ``home`` where the caller made one that the job sees (tier 3:
    the caller removes it with the job), else a fresh folder (tiers 1 and 2: in the private /tmp)."""
    if not (home and os.path.isdir(home)):
        home = tempfile.mkdtemp(prefix="ch13-sandbox-")
    os.chown(home, uid, gid)
    for var in (
        "HOME",
        "TMPDIR",
        "IPYTHONDIR",
        "MPLCONFIGDIR",
        "HYPOTHESIS_STORAGE_DIRECTORY",
        "NUMBA_CACHE_DIR",
        "JUPYTER_RUNTIME_DIR",
        "XDG_CACHE_HOME",
        "XDG_RUNTIME_DIR",
        # torch's compile caches: torch sets the first in its own environment when it first needs
        # it (a judge's torch.optim.Adam does), so a job started from there inherited the judge's
        # folder, which the job may not write (an honest cell's own Adam then failed)
        "TORCHINDUCTOR_CACHE_DIR",
        "TRITON_CACHE_DIR",
    ):
        os.environ[var] = home
    os.environ.setdefault("USER", "student")  # getpass.getuser() without a passwd entry
    os.environ["LOGNAME"] = os.environ["USER"]
    return home


def read_connection_file(argv: list[str]) -> tuple[int, bytes] | None:
    if "-f" in argv:
        i = argv.index("-f") + 1
        with open(argv[i], "rb") as f:
            return i, f.read()
    return None


def write_connection_file(argv: list[str], conn: tuple[int, bytes] | None, home: str, uid: int, gid: int) -> list[str]:
    if conn is None:
        return argv
    i, data = conn
    copy = os.path.join(home, os.path.basename(argv[i]))
    with open(copy, "wb") as f:
        f.write(data)
    os.chmod(copy, 0o600)
    os.chown(copy, uid, gid)
    return argv[:i] + [copy] + argv[i + 1 :]


def drop_capabilities() -> None:
    """capset(all zero): in a user namespace we hold every capability until we drop them."""
    header = (ctypes.c_uint32 * 2)(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, this thread
    data = (ctypes.c_uint32 * 6)()
    if _libc.capset(header, data) != 0:
        raise OSError(ctypes.get_errno(), "capset failed")


def drop_privileges(uid: int, gid: int, tier: str) -> None:
    if os.geteuid() == 0:
        os.setgroups([])
        os.setresgid(gid, gid, gid)
        os.setresuid(uid, uid, uid)
    elif tier == "userns":
        drop_capabilities()
    # Not dumpable until the exec below (which resets it): the command seals itself again where it
    # matters (the subject, kit.audit.seal_memory, before the cell loads).
    _libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    _libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)  # setuid binaries (su, mount...) gain nothing


# What a job of tiers 2 and 3 may write in /dev: the character devices programs open by name, the
# shared-memory folder, a GPU's nodes. Not /dev/pts or /dev/tty (the TA's terminal, same uid).
DEV_NODES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/shm")


def _job_devices() -> list[str]:
    """The /dev entries a job may use: DEV_NODES and a GPU's nodes (the root tier binds only these
    into its /dev, Landlock's tiers allow only these)."""
    return list(DEV_NODES) + sorted(glob.glob("/dev/nvidia*"))


def landlock_allow_list(tier: str, own: list[str]) -> str:
    """Tiers 2 and 3: an allow-list drawn by Landlock (kit/landlock.py), as the root tier's fresh
    root draws one: the system folders, the interpreter, /proc, and of the kit only what a job runs
    (kit/ and ch13lib; the names in its checkout and source folder stay listable) to read; the
    job's own folders and a few devices to write. The kit's checkout becomes read-only to the job
    even where the job's uid (the TA's) owns it. Returns what could not be done, for stderr."""

    from kit import landlock

    read = [d for d in SYSTEM_DIRS if os.path.exists(d) and not os.path.islink(d)]
    read += ["/proc", sys.prefix, sys.base_prefix, *KIT_RUNS]
    carried = _under_tmpfs([ROOT, sys.prefix, sys.base_prefix])
    # Tier 2's /tmp, /var/tmp, /dev/shm and /run/lock are the job's own tmpfs, unless the kit was
    # carried over one of them (a checkout under /tmp): then only the job's own folders there.
    private = [d for d in TMPFS_MB if tier and not any(c == d or c.startswith(d + "/") for c in carried)]
    devices = _job_devices()
    try:
        version = landlock.restrict([os.path.realpath(p) for p in read], own + devices + private, [ROOT, SOURCE_DIR])
    except OSError as e:  # fail closed, as for the namespaces' file system
        sys.exit(f"kit.sandbox: could not restrict the job's file system: {e}")
    if version == 0:
        return "no Landlock in this kernel: the host's files stay readable (plain file permissions only)"
    return "" if version >= 6 else f"Landlock ABI {version} (< 6): signals to other jobs of this uid are not scoped"


def parse_args(argv: list[str]) -> tuple[dict, list[str]]:
    """``python -m kit.sandbox [options] -- COMMAND...``: what to isolate, then what to run. The
    sandbox knows nothing of grade_ids or devices: the command carries its own arguments."""
    import argparse

    ap = argparse.ArgumentParser(prog="python -m kit.sandbox", description="Run COMMAND in a grading sandbox.")
    ap.add_argument("--no-network", action="store_true", help="a network namespace with loopback only")
    ap.add_argument("--workdir", help="a folder copied into a private tmpfs, the command's working directory")
    ap.add_argument("--uid", help="the unprivileged uid to run as (root only; default: the sandbox user)")
    ap.add_argument("--home", help="the job's HOME and TMPDIR, made (and removed) by the caller, where the job sees it")
    ap.add_argument("--course", help="a course folder whose gradebook and submissions the job must not see")
    ap.add_argument("--data-mb", type=int, help="RLIMIT_DATA of each process, MiB (default: kit.config.Sandbox)")
    ap.add_argument(
        "--no-namespaces", action="store_true", help="no namespaces: the limits-only tier (default: kit.config.Sandbox)"
    )
    for name, what in [
        ("--writeback", "a file of the workdir written back to the host (repeatable)"),
        ("--keep", "a host folder bind-mounted at the same path (repeatable)"),
        ("--hide", "a host path covered in the job's view (repeatable)"),
    ]:
        ap.add_argument(name, action="append", default=[], type=os.path.abspath, help=what)
    if "--" not in argv:
        ap.error("no command: put it after --")
    split = argv.index("--")
    cmd = argv[split + 1 :]
    if not cmd:
        ap.error("no command after --")
    opts = vars(ap.parse_args(argv[:split]))
    if opts["data_mb"] is None:  # not from the kit's callers, which always pass it (a test, a hand run)
        from kit.config import Sandbox

        defaults = Sandbox()
        opts["data_mb"] = defaults.proc_data_mb
        opts["no_namespaces"] = opts["no_namespaces"] or not defaults.namespaces
    return opts, cmd


def main(argv: list[str], run=None) -> None:
    """Build the sandbox, then exec its command; or hand it to ``run`` (kit/subjects.py: a process
    forked from a warm zygote runs the subject's loop itself, its harness already imported)."""
    opts, cmd = parse_args(argv)
    root = os.geteuid() == 0
    if root:
        uid = int(opts["uid"]) if opts["uid"] else pwd.getpwnam(SANDBOX_USER).pw_uid
        gid = uid if opts["uid"] else pwd.getpwnam(SANDBOX_USER).pw_gid
    else:
        uid, gid = os.getuid(), os.getgid()
    workdir = os.path.abspath(opts["workdir"]) if opts["workdir"] else None
    conn = read_connection_file(cmd)
    tier = enter_namespaces(opts["no_network"], namespaces=not opts["no_namespaces"])
    if tier:
        become_pid_one()
    if tier == "root":
        enter_cpu_group(os.environ.get("CH13_JOB", ""))
    missing = []
    if tier:
        hide = hidden_paths(opts["course"]) + opts["hide"] + [os.path.join(ROOT, "graders")]
        try:
            build_filesystem(tier, workdir, opts["writeback"], opts["keep"], hide, uid, gid)
        except OSError as e:  # fail closed: a half-built sandbox must not run student code
            sys.exit(f"kit.sandbox: could not build the sandbox's file system: {e}")
    else:
        missing.append("no mount namespace: /dev/shm is the host's (Landlock draws the rest of the allow-list)")
        if opts["no_network"]:
            missing.append("no network namespace: network not isolated")
    if not root:
        missing.append("not root: no per-job uid (jobs are found by their CH13_JOB token)")
    if missing:
        print("kit.sandbox: " + "; ".join(missing), file=sys.stderr)
    home = private_dirs(uid, gid, opts["home"])
    os.environ["CH13_SANDBOX_HOME"] = home
    os.environ["CH13_SANDBOX_TIER"] = tier or "limits-only"
    cmd = write_connection_file(cmd, conn, home, uid, gid)
    if workdir:
        if root and not tier:
            os.chown(workdir, uid, gid)
        os.chdir(workdir)
    set_limits(shared_uid=not (root and opts["uid"]), data_mb=opts["data_mb"])
    if tier != "root":  # (the root tier pivoted to its allow-list and has its own PID namespace)
        # Before the uid changes: the rules' folders are opened with the rights we have now (a
        # work folder below a 0700 one is the job's own, though its uid could not walk there).
        _libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)  # Landlock's condition (drop_privileges sets it too)
        own = [p for p in [home, workdir] + opts["keep"] + opts["writeback"] if p]
        problem = landlock_allow_list(tier, own)
        if problem:
            print(f"kit.sandbox: {problem}", file=sys.stderr)
    drop_privileges(uid, gid, tier)
    problem = seccomp.install()  # the page cache's state unread (kit/seccomp.py); after no_new_privs
    if problem:
        print(f"kit.sandbox: {problem}", file=sys.stderr)
    if tier:  # the outside parent dies (killed with the job): so does the namespace
        _libc.prctl(PR_SET_PDEATHSIG, 9, 0, 0, 0)
    os.umask(0o022)
    if run is not None:
        run(cmd)
    os.execvp(cmd[0], cmd)


if __name__ == "__main__":
    main(sys.argv[1:])
