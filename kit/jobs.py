"""Find, measure and kill every process of one grading job, daemons included (Ray's raylet, gloo ranks...).

Two ways to know a job's processes, used together:

- As root (CI, a grading container) each job runs under its OWN unprivileged uid (:func:`job_uid`,
  no passwd entry needed). Every process with that real uid belongs to the job, whatever it did to
  its environment, session or process group, and one ``kill(-1, SIGKILL)`` made AS that uid kills
  them all at once (the kernel walks the task list under a lock: a fork bomb cannot outrun it).
  Per-job uids also mean one job's RLIMIT_NPROC is not shared with the others, and a job cannot
  signal, trace or read the files of another.
- Everywhere, each job's processes carry ``CH13_JOB=<token>`` in their environment (inherited by
  every child, even one that starts its own session), so one scan of /proc finds them. This is the
  only way without root; a process that re-execs itself with a cleared environment escapes it
  (docs/sandbox.md, "Fallback"). A student's whole autograde run carries ``CH13_JOB_STUDENT=<token>``
  as well, which its graders and kernel inherit.

:class:`Watchdog` polls a running job's memory (its processes' proportional set sizes added up) and kills
the job when it passes a limit: the per-process limits of kit/sandbox.py cannot bound a job of many
processes, and RLIMIT_AS would break Ray, torch and numba (they reserve far more address space than
they use).
"""

from __future__ import annotations

import hashlib
import os
import signal
import threading
import uuid

from kit import Words

# What the watchdog says to the student (ch13lib/lang.py, made at first use: this module is also
# imported where ch13lib is not on the path, the sandbox's launcher).
W = Words(
    memory=(
        "你的代码 (所有进程合计) 使用了超过 {mib} MiB 的内存, 已被停止",
        "your code used more than {mib} MiB of memory (all its processes together) and was stopped",
    ),
    processes=(
        "你的代码同时启动了超过 {n} 个进程 (fork 炸弹?), 已被停止",
        "your code started more than {n} processes at once (a fork bomb?) and was stopped",
    ),
)

UID_BASE = 200_000  # per-job uids: UID_BASE .. UID_BASE + UID_SPAN - 1 (no passwd entry)
UID_SPAN = 1_000_000


def new_token() -> str:
    return uuid.uuid4().hex


def job_uid(token: str) -> int:
    """The unprivileged uid a job runs as when the kit runs as root (derived from its token)."""
    return UID_BASE + int(token[:12], 16) % UID_SPAN


def sandbox_uid(token: str) -> int | None:
    """The uid kit.sandbox gives the job: its own when we are root, else None (our own uid)."""
    return job_uid(token) if os.geteuid() == 0 else None


def _proc_uid(pid: str) -> int | None:
    try:
        with open(f"/proc/{pid}/status", "rb") as f:
            for line in f:
                if line.startswith(b"Uid:"):
                    return int(line.split()[1])  # the real uid
    except (OSError, ValueError, IndexError):
        return None
    return None


def job_pids(token: str, uid: int | None = None) -> list[int]:
    """Every process of the job: tagged with its token, or (when given) running as its uid."""
    if not token:
        return []
    needles = {f"CH13_JOB={token}".encode(), f"CH13_JOB_STUDENT={token}".encode()}
    me, mine = os.getpid(), os.getuid()
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == me:
            continue
        owner = _proc_uid(entry)
        if uid is not None and owner == uid:
            pids.append(int(entry))
            continue
        # A tag is only believed from a process of our own uid: a job running as another uid (the
        # root tier) could write any job's token into its command line, and be counted (its
        # memory, its CPU) and killed as that job.
        if owner != mine:
            continue
        # The tag is in the environment; a process that is not dumpable (a subject, kit/subject.py)
        # lets only root read that, and carries the tag in its command line, which everyone may read.
        for part in ("environ", "cmdline"):
            try:
                with open(f"/proc/{entry}/{part}", "rb") as f:
                    if needles.intersection(f.read().split(b"\0")):
                        pids.append(int(entry))
                break  # read: the command line is only the fallback
            except OSError:
                continue
    return pids


def kill_as(uid: int) -> None:
    """kill(-1, SIGKILL) as ``uid``: every process of that uid dies in one sweep of the kernel.
    Only as an unprivileged uid: as root (or with -1, which setresuid reads as "unchanged") the same
    call would kill every process of the machine."""
    if type(uid) is not int or uid <= 0:
        raise ValueError(f"kill_as sweeps as an unprivileged uid only, not {uid!r}")
    pid = os.fork()
    if pid == 0:  # the child: become the job's uid (it can then signal only the job) and sweep
        try:
            os.setgroups([])
            os.setresgid(uid, uid, uid)
            os.setresuid(uid, uid, uid)
            if os.getresuid() != (uid, uid, uid):  # fail closed: never sweep as anyone else
                os._exit(1)
            for _ in range(5):
                try:
                    os.kill(-1, signal.SIGKILL)  # never kills the caller itself
                except ProcessLookupError:
                    break
        finally:
            os._exit(0)
    os.waitpid(pid, 0)


CPU_CGROUPS = ("/sys/fs/cgroup/cpu", "/sys/fs/cgroup")  # cgroup v1's cpu controller, or v2's unified tree
CPU_SHARE = {"cpu.shares": "1024", "cpu.weight": "100"}  # the same share for every job


def _cpu_group(token: str) -> tuple[str, str] | None:
    """(folder of the job's CPU cgroup, its share file), where this machine has a cpu controller."""
    for base in CPU_CGROUPS:
        for share in CPU_SHARE:
            if os.path.exists(os.path.join(base, share)) or os.path.exists(os.path.join(base, "ch13", share)):
                # named by a hash: the folder names are readable from inside every sandbox, and a
                # token is what a job's processes are found by (a job could claim another's)
                name = hashlib.sha256(token.encode()).hexdigest()[:32]
                return os.path.join(base, "ch13", name), share
    return None


def enter_cpu_group(token: str) -> bool:
    """Put this process (and so everything it starts) in the job's own CPU cgroup (as root).

    Every job gets the same share of the CPU, however many processes or sessions it starts: a
    student whose code keeps every core busy takes one job's share, not the machine (the kernel
    otherwise shares CPU between sessions, sched_autogroup). False where there is no writable
    cpu controller (not root, or a container without one): then only the hang guards, which count
    the job's own CPU time, keep one job from costing another its grade."""
    found = _cpu_group(token)
    if found is None or os.geteuid() != 0:
        return False
    folder, share = found
    try:
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, share), "w") as f:
            f.write(CPU_SHARE[share])
        with open(os.path.join(folder, "cgroup.procs"), "w") as f:
            f.write(str(os.getpid()))
        return True
    except OSError:
        return False


def remove_cpu_group(token: str) -> None:
    found = _cpu_group(token)
    if found and os.path.isdir(found[0]):
        try:
            os.rmdir(found[0])  # only once empty: the job's processes are gone
        except OSError:
            pass


def kill_job(token: str, uid: int | None = None) -> int:
    """SIGKILL every process of the job; returns how many were found still running."""
    if not token:
        return 0
    if uid is None:
        uid = sandbox_uid(token)
    found = 0
    for _ in range(5):  # a dying parent may have forked once more: sweep until none is left
        pids = job_pids(token, uid)
        if not pids:
            break
        found += len(pids)
        if uid is not None and os.geteuid() == 0:
            kill_as(uid)
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
    remove_cpu_group(token)
    return found


def process_memory(pid: int, proportional: bool = True) -> int:
    """Bytes of memory one process holds: its proportional set size, where a page it shares with N
    processes counts 1/N (a subject forked from a zygote shares the harnesses' pages with every
    sibling and the zygote; counted in full in each, their resident sets added up to 1.7-3.3x what
    the job really held). Its resident set with ``proportional=False``, or where smaps_rollup is not
    readable (another uid's non-dumpable process when not root): an upper bound, and ~250 times
    cheaper to read (statm, 8 us, against smaps_rollup, 2 ms for a process that imported torch)."""
    if proportional:
        try:
            with open(f"/proc/{pid}/smaps_rollup", "rb") as f:
                for line in f:
                    if line.startswith(b"Pss:"):
                        return int(line.split()[1]) * 1024
        except (OSError, ValueError, IndexError):
            pass
    try:
        with open(f"/proc/{pid}/statm", "rb") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def job_memory(token: str, uid: int | None = None, pids: list[int] | None = None, settled_at: int = 0) -> int:
    """Bytes of memory the job's processes hold together (:func:`process_memory` of each). When
    their resident sets add up to at most ``settled_at``, that sum instead: an upper bound, which
    already settles the caller's question (is the job past a limit? past the peak seen so far?)."""
    pids = job_pids(token, uid) if pids is None else pids
    resident = sum(process_memory(pid, proportional=False) for pid in pids)
    if resident <= settled_at:
        return resident
    return sum(process_memory(pid) for pid in pids)


class Watchdog(threading.Thread):
    """Kills a job whose processes together hold more than ``limit_mb`` MiB (:func:`job_memory`), or that
    runs more than ``max_processes`` processes at once (a fork bomb; RLIMIT_NPROC stops it too).
    Not given: kit.config.Sandbox's ``job_memory_mb`` and ``job_processes`` (defaults and the
    environment, read when the job starts, not at import: nbgrader processes fork from a server
    that imported this module earlier, under another environment, kit/launch.py).

    ``problem`` says why once it has fired (else ""), in the language in force; ``why`` is the same
    sentence in both languages (a :class:`ch13lib.lang.Both`, None until it fires), for a caller that
    puts it in a sentence of its own; ``peak_mb`` is the largest total seen (an
    upper bound while it is below the limit: :func:`job_memory`'s ``settled_at``).
    """

    def __init__(
        self,
        token: str,
        uid: int | None = None,
        limit_mb: int | None = None,
        max_processes: int | None = None,
        interval_s: float = 0.2,
    ) -> None:
        super().__init__(daemon=True, name=f"ch13-watchdog-{token[:8]}")
        self.token, self.uid = token, uid if uid is not None else sandbox_uid(token)
        if not (limit_mb and max_processes):
            from kit.config import Sandbox

            limits = Sandbox()
            limit_mb, max_processes = limit_mb or limits.job_memory_mb, max_processes or limits.job_processes
        self.limit = limit_mb * 2**20
        self.max_processes = max_processes
        self.interval_s = interval_s
        self.problem = ""
        self.why = None
        self.peak_mb = 0.0
        self._stop_event = threading.Event()

    def run(self) -> None:
        while not self._stop_event.wait(self.interval_s):
            pids = job_pids(self.token, self.uid)
            if self._too_many(pids):
                kill_job(self.token, self.uid)
                return
            held = job_memory(self.token, self.uid, pids, settled_at=self.limit)
            self.peak_mb = max(self.peak_mb, held / 2**20)
            if held > self.limit:
                self._fired(W.both("memory", mib=self.limit // 2**20))
                kill_job(self.token, self.uid)
                return

    def _too_many(self, pids) -> bool:
        if len(pids) > self.max_processes:
            self._fired(W.both("processes", n=self.max_processes))
        return bool(self.problem)

    def _fired(self, why) -> None:
        self.why, self.problem = why, str(why)

    def stop(self) -> str:
        self._stop_event.set()
        if self.is_alive() and self is not threading.current_thread():
            self.join()
        return self.problem

    def last_look(self) -> str:
        """Stop, then count the job's processes once more, for a job about to be killed anyway: a fork
        bomb that a busy machine let outrun the samples is named all the same (memory is left to
        the samples: a last reading of it would depend on when the kill came)."""
        self.stop()
        if not self.problem:
            self._too_many(job_pids(self.token, self.uid))
        return self.problem
