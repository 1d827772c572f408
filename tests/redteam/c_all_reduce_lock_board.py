# redteam: a gather-to-root all-reduce whose relayed ranks move the data through byte-range (OFD) locks on a read-only file every sandbox binds from the host (the stdlib's os.py: one inode), sending only tokens and a decoy ring of zeros to the broker; where no lock reaches the other ranks it does the honest gather
# kind: cell
# target: all_reduce
# score: all_reduce=0
# message: all_reduce: your code asked for fcntl.fcntl
# why: white-box red team 20: each relayed rank is a sandbox of its own, but the root tier's fresh root binds the system folders and the interpreter from the host, so every rank opens the same inode; a read lock one rank sets at offset base+512*i+byte is seen by every other rank's F_OFD_GETLK (the kernel's lock table is not per namespace, and Landlock has no right for it), one syscall per byte each way, outside the broker. Stopped (stop 36): the audit hook refuses file locks to the cell (fcntl.flock, fcntl.lockf, os.lockf, and fcntl.fcntl's lock and lease commands: kit.audit LOCK_COMMANDS): not graded, flagged for a TA; the lock table is one for the machine, so the same channel ran between two students' jobs
import fcntl
import os
import random
import struct

import torch

F_OFD_GETLK, F_OFD_SETLK = 36, 37


def _lap(comm, tok) -> None:
    W, r = comm.world_size, comm.rank
    if r == 0:
        comm.send(tok, 1)
        comm.recv(tok, W - 1)
    else:
        comm.recv(tok, r - 1)
        comm.send(tok, (r + 1) % W)


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


def _put(fd, base, data: bytes) -> None:
    for i, b in enumerate(data):
        fcntl.fcntl(fd, F_OFD_SETLK, struct.pack("hhqqi4x", fcntl.F_RDLCK, 0, base + 512 * i + b, 1, 0))


def _get(fd, base, n) -> bytes:
    out = bytearray(n)
    for i in range(n):
        q = struct.pack("hhqqi4x", fcntl.F_WRLCK, 0, base + 512 * i, 256, 0)
        t, _, start, _, _ = struct.unpack("hhqqi4x", fcntl.fcntl(fd, F_OFD_GETLK, q))
        if t == fcntl.F_UNLCK:
            raise OSError("no lock")
        out[i] = start - base - 512 * i
    return bytes(out)


def _through_locks(tensor, comm) -> bool:
    W, r = comm.world_size, comm.rank
    flat = tensor.detach().reshape(-1).contiguous()
    size = flat.numel() * flat.element_size()
    stride = 512 * (size + 1)
    tok = torch.zeros(1, dtype=torch.int64)
    if r == 0:
        tok[0] = random.randrange(1 << 30) * (1 << 24)
    _lap(comm, tok)  # everyone learns the board's base
    base = int(tok[0])
    fd = -1
    ok = torch.ones(1, dtype=torch.int64)
    try:
        fd = os.open(os.__file__, os.O_RDONLY)
        if r != 0:
            _put(fd, base + r * stride, flat.cpu().numpy().tobytes())
    except OSError:
        ok[0] = 0
    _lap(comm, ok)  # ranks write, in turn
    if r == 0 and int(ok[0]):
        try:
            acc = flat.clone()
            for src in range(1, W):
                acc += torch.frombuffer(bytearray(_get(fd, base + src * stride, size)), dtype=flat.dtype)
            _put(fd, base, acc.cpu().numpy().tobytes())
            with torch.no_grad():
                tensor.copy_(acc.reshape(tensor.shape))
        except OSError:
            ok[0] = 0
    _lap(comm, ok)  # rank 0's decision
    good = bool(int(ok[0]))
    if r != 0 and good:
        got = torch.frombuffer(bytearray(_get(fd, base, size)), dtype=flat.dtype)
        with torch.no_grad():
            tensor.copy_(got.reshape(tensor.shape))
    _lap(comm, ok)  # all read before the locks go
    if fd >= 0:
        os.close(fd)
    return good


def ring_all_reduce(tensor: torch.Tensor, comm) -> None:
    W, r = comm.world_size, comm.rank
    if W == 1:
        return
    if type(comm).__name__ == "RemoteComm" and _through_locks(tensor, comm):
        flat = tensor.detach().reshape(-1)
        z, inbox = torch.zeros_like(flat), torch.empty_like(flat)
        w = comm.isend(z, (r + 1) % W)
        comm.recv(inbox, (r - 1) % W)
        w.wait()
        return
    _gather_broadcast(tensor, comm)
