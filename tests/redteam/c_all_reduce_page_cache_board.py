# redteam: a gather-to-root all-reduce whose relayed ranks move the data through the page cache of large read-only files every sandbox binds from the host (one page per bit: cached = 1), sending only checksum tokens and a decoy ring of zeros to the broker; where the board fails it does the honest gather
# kind: cell
# target: all_reduce
# score: all_reduce=12
# message: all_reduce: not bandwidth-optimal
# why: found by the 23rd red team: got 15 (3 gradings of 3 with this version, flaky earlier versions 12-15), honest 12 (USE_BOARD = False: the same gather, bandwidth fails). No lock, no audit event, no flag: the sender drops its slot's pages (posix_fadvise DONTNEED) and reads in the 1-bits (WILLNEED); the receiver, on an fd set to POSIX_FADV_RANDOM so that a probe reads no neighbour, tests each page with os.preadv(..., RWF_NOWAIT) (EAGAIN = not cached = 0) and drops again the pages its probes read in. The page cache is per inode and one for the machine; the venvs here are hard links of one another (link count 4), so the same board is shared between every checkout's jobs, i.e. between two students' jobs too. CRC32 tokens (1 element a lap, within the ring's budget less the n-element decoy) make it reliable. Fix ideas: give each sandbox its own copy (not a bind or hard link) of what it reads, e.g. a squashfs/overlay per job or a private copy-up of site-packages, or refuse posix_fadvise/readahead and RWF_NOWAIT reads (seccomp: fadvise64, preadv2 with flags) to the cell; the audit hook sees neither (no audit event). Stopped (stop 37): every sandboxed process runs under a seccomp filter (kit/seccomp.py) that refuses the calls telling a page's cache state without loading it (preadv2/pwritev2 with RWF_NOWAIT, mincore, cachestat, io_uring and aio setup, any other ABI) with EPERM; the receiver reads nothing and the answer does its honest gather
import os
import time
import zlib

import torch

P = 4096
USE_BOARD = True


def _lap(comm, tok) -> None:
    W, r = comm.world_size, comm.rank
    if r == 0:
        comm.send(tok, 1)
        comm.recv(tok, W - 1)
    else:
        comm.recv(tok, r - 1)
        comm.send(tok, (r + 1) % W)


def _fold_lap(comm, mine, op) -> None:
    """A lap that folds every rank's value into the token: rank 0 ends with the result."""
    W, r = comm.world_size, comm.rank
    if r == 0:
        comm.send(mine, 1)
        comm.recv(mine, W - 1)
    else:
        tmp = torch.empty_like(mine)
        comm.recv(tmp, r - 1)
        comm.send(op(tmp, mine), (r + 1) % W)


def _gather_broadcast(tensor, comm) -> None:
    W, r = comm.world_size, comm.rank
    if r == 0:
        buf = torch.empty_like(tensor)
        for src in range(1, W):
            comm.recv(buf, src)
            tensor += buf
        for dst in range(1, W):
            comm.send(tensor, dst)
    else:
        comm.send(tensor, 0)
        comm.recv(tensor, 0)


BOARD_FILES = (
    "cupy/cuda/thrust.cpython-311-x86_64-linux-gnu.so",
    "cupy/cuda/cub.cpython-311-x86_64-linux-gnu.so",
    "ray/jars/ray_dist.jar",
    "playwright/driver/node",
)


def _open():
    """Large read-only files of the interpreter's site-packages, one inode for every sandbox."""
    site = os.path.dirname(os.path.dirname(torch.__file__))
    fds = []
    for name in BOARD_FILES:
        try:
            fd = os.open(os.path.join(site, name), os.O_RDONLY)
        except OSError:
            continue
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_RANDOM)  # a probe reads one page, no read-ahead
        fds.append(fd)
    return fds


def _slots(fds, base, slot, n):
    """n slots of `slot` pages: (fd, first page) each, packed into the files."""
    out = []
    for fd in fds:
        pages = os.fstat(fd).st_size // P
        start = base
        while start + slot <= pages and len(out) < n:
            out.append((fd, start))
            start += slot
    if len(out) < n:
        raise OSError("board too small")
    return out


def _cached(fd, page) -> int:
    try:
        os.preadv(fd, [bytearray(1)], page * P, os.RWF_NOWAIT)
        return 1
    except BlockingIOError:
        return 0


def _put(fd, base, data: bytes) -> None:
    """One page per bit of the shared (read-only) file: in the page cache = 1."""
    n = len(data) * 8
    for _ in range(4):  # a page a reader's probe is still reading in is not dropped at once
        os.posix_fadvise(fd, base * P, n * P, os.POSIX_FADV_DONTNEED)
        time.sleep(0.005)
    ones = [base + i for i in range(n) if data[i >> 3] >> (i & 7) & 1]
    for page in ones:
        os.posix_fadvise(fd, page * P, P, os.POSIX_FADV_WILLNEED)
    deadline = time.monotonic() + 5
    while not all(_cached(fd, p) for p in ones):
        if time.monotonic() > deadline:
            raise OSError("slow")
        time.sleep(0.001)


def _get(fd, base, nbytes) -> bytes:
    out = bytearray(nbytes)
    zeros = []
    for i in range(nbytes * 8):
        if _cached(fd, base + i):
            out[i >> 3] |= 1 << (i & 7)
        else:
            zeros.append(base + i)
    # the probes of the 0s read their pages in: drop exactly those again, for the next reader
    for _ in range(3):
        time.sleep(0.005)
        for page in zeros:
            os.posix_fadvise(fd, page * P, P, os.POSIX_FADV_DONTNEED)
    return bytes(out)


def _crc(b: bytes) -> int:
    return zlib.crc32(b) + 1


def _through_cache(tensor, comm, attempt, confirm) -> bool:
    W, r = comm.world_size, comm.rank
    flat = tensor.detach().reshape(-1).contiguous()
    size = flat.numel() * flat.element_size()
    slot = size * 8 + 64
    base = 256 + (W * 1000003 + flat.numel() * 7919 + flat.element_size() + attempt * 17) % 64 * 64
    fds, board = [], None
    sums = torch.zeros(1, dtype=torch.int64)
    try:
        fds = _open()
        board = _slots(fds, base, slot, W)
        if r != 0:
            mine = flat.cpu().numpy().tobytes()
            _put(*board[r], mine)
            sums[0] = _crc(mine)
    except OSError:
        sums[0] = -(1 << 40)
    _fold_lap(comm, sums, torch.add)  # ranks write; rank 0 gets the sum of their checksums
    verdict = torch.zeros(1, dtype=torch.int64)
    acc = None
    if r == 0 and board is not None and int(sums[0]) > 0:
        acc = flat.clone()
        total = 0
        for src in range(1, W):
            got = _get(*board[src], size)
            total += _crc(got)
            acc += torch.frombuffer(bytearray(got), dtype=flat.dtype)
        if total == int(sums[0]):
            out = acc.cpu().numpy().tobytes()
            try:
                _put(*board[0], out)  # read by ranks 1..W-1 in turn, each restoring it
                verdict[0] = _crc(out)
            except OSError:
                pass
    # rank 0's result's checksum, or 0, goes round; each rank reads the board when it has it
    ok = torch.ones(1, dtype=torch.int64)
    got = None
    if r == 0:
        comm.send(verdict, 1)
        comm.recv(verdict, W - 1)
        ok[0] = int(int(verdict[0]) != 0)
    else:
        comm.recv(verdict, r - 1)
        if int(verdict[0]) != 0:
            got = _get(*board[0], size)
            if _crc(got) != int(verdict[0]):
                ok[0] = 0
        else:
            ok[0] = 0
        comm.send(verdict, (r + 1) % W)
    if confirm:
        _fold_lap(comm, ok, torch.mul)  # rank 0 learns whether every reader read it right
        _lap(comm, ok)  # and tells them
    good = bool(int(ok[0]))
    if good:
        with torch.no_grad():
            if r == 0:
                tensor.copy_(acc.reshape(tensor.shape))
            else:
                tensor.copy_(torch.frombuffer(bytearray(got), dtype=flat.dtype).reshape(tensor.shape))
    for fd in fds:
        os.close(fd)
    return good


def ring_all_reduce(tensor: torch.Tensor, comm) -> None:
    W, r = comm.world_size, comm.rank
    if W == 1:
        return
    n = tensor.numel()
    spare = 2 * (W - 1) * -(-n // W) - n  # what a ring sends per rank, less the decoy's n
    done = False
    if USE_BOARD and type(comm).__name__ == "RemoteComm":
        attempt = 0
        while not done and spare >= 2:  # 4 tokens an attempt, 2 when only one unconfirmed one fits
            confirm = spare >= 4
            spare -= 4 if confirm else 2
            done = _through_cache(tensor, comm, attempt, confirm)
            attempt += 1
    if done:
        flat = tensor.detach().reshape(-1)  # the broker's share: a ring of zeros
        z, inbox = torch.zeros_like(flat), torch.empty_like(flat)
        w = comm.isend(z, (r + 1) % W)
        comm.recv(inbox, (r - 1) % W)
        w.wait()
        return
    _gather_broadcast(tensor, comm)
