"""The judge-subject wire: length-prefixed JSON frames that carry plain data only.

The judge (the grader process) never holds an object the student's code made. Everything that
crosses from the subject (the process that runs the student's cell) is bytes, parsed here by
``json`` into exact built-in types, so an ``int`` subclass with a lying ``__eq__``, a custom
``__str__`` or a pickled payload cannot exist on the judge's side. The encoder (subject side) sends
only exact types: None, bool, int, float, str, bytes, list, tuple, dict, set, and arrays (numpy or
torch) as dtype + shape + bytes, which the judge rebuilds.

Tags (a dict with one ``$`` key): ``$bytes``, ``$tuple``, ``$set``, ``$dict`` (non-str keys),
``$nd`` (an array). ``$dc`` (a dataclass of ch13lib) travels only judge -> subject: the judge's
decoder refuses it.
"""

from __future__ import annotations

import base64
import dataclasses
import hmac
import importlib
import json
import math
import os
import struct
from typing import Literal, TypedDict

MAX_FRAME = 64 * 2**20  # a subject that sends more has failed the test ("sent too much")
HEADER = struct.Struct(">Q")
# Frames between a judge and its subject are sealed both ways: the body is followed by
# HMAC-SHA256(key, body), under a key the judge writes as the very first bytes on the request pipe,
# which the subject reads before any student code runs (the cell shares the subject's descriptors:
# it can read and write the pipes, but neither forge an answer nor change a request).
KEY_SIZE = SEAL_SIZE = 32
try:
    from _hashlib import hmac_digest as _hmac_digest  # C (OpenSSL): not a function the cell can rebind
except ImportError:  # a Python built without OpenSSL
    _hmac_digest = hmac.digest
# numpy's and torch's plain dtypes by name: what an array on the wire may hold
DTYPES = frozenset(
    "bool int8 int16 int32 int64 uint8 uint16 uint32 uint64 float16 float32 float64 complex64 complex128".split()
    + ["bfloat16"]
)
MAX_DEPTH = 64


class WireError(Exception):
    """The other side sent something that is not a well-formed frame of plain data."""


# ---------------------------------------------------------------- the messages

Op = Literal["load", "get", "call", "run", "resume", "exit"]


class Request(TypedDict):
    """Judge -> subject. ``op``: ``load`` runs the cell's top level and answers its public names;
    ``get`` answers what the names in ``args`` hold; ``call`` calls the cell's function ``name``;
    ``run`` runs the harness function ``name`` ("module:function", a ``SUBJECT_API`` entry,
    kit/harness.py) on the cell; ``resume`` sends a talking harness the judge's answer (``args[0]``);
    ``exit`` ends the subject. ``id`` and ``nonce`` come back in the answer."""

    id: int
    nonce: str
    op: Op
    name: str | None
    args: list
    kwargs: dict


# Subject -> judge, one of: ``ok`` (the value), ``yield`` (a talking harness's next message),
# ``raised`` (the cell's exception, as plain data: kit.subject.raised); with ``refused`` and
# ``tampered`` after every answer but a ``yield``; or ``{"forged": True}``: the subject received a
# request the judge did not seal.
Answer = TypedDict(
    "Answer",
    {
        "id": int,
        "nonce": str,
        "ok": object,
        "yield": object,
        "raised": dict,
        "refused": list,
        "tampered": list,
        "forged": bool,
    },
    total=False,
)


# ---------------------------------------------------------------- encoding (either side)


def _array(x, torch_tensor: bool) -> dict:
    if torch_tensor:
        import torch

        t = x.detach().cpu().contiguous()
        dtype = str(t.dtype).removeprefix("torch.")
        if dtype == "bfloat16":
            data = t.view(torch.int16).numpy().tobytes()
        else:
            data = t.numpy().tobytes()
        shape = list(t.shape)
    else:
        import numpy as np

        a = np.asarray(x)  # tobytes() is C-ordered; keeps 0-d scalars 0-d
        dtype, shape, data = str(a.dtype), list(a.shape), a.tobytes()
    if dtype not in DTYPES:
        raise WireError(f"an array of dtype {dtype} cannot be sent back")
    return {
        "$nd": {"dtype": dtype, "shape": shape, "torch": torch_tensor, "data": base64.b64encode(data).decode("ascii")}
    }


def to_plain(x, depth: int = 0):
    """``x`` as JSON-ready plain data; anything but exact plain types raises WireError."""
    if depth > MAX_DEPTH:
        raise WireError("the value is nested too deeply to send back")
    t = type(x)
    if x is None or t is bool or t is str:
        return x
    if t is int:
        return x if -(2**63) <= x < 2**64 else {"$int": str(x)}
    if t is float:
        return x if math.isfinite(x) else {"$float": repr(x)}
    if t is bytes:
        return {"$bytes": base64.b64encode(x).decode("ascii")}
    if t is list:
        return [to_plain(v, depth + 1) for v in x]
    if t is tuple:
        return {"$tuple": [to_plain(v, depth + 1) for v in x]}
    if t in (set, frozenset):
        return {"$set": [to_plain(v, depth + 1) for v in x]}
    if t is dict:
        if all(type(k) is str for k in x):
            return {("$$" + k if k.startswith("$") else k): to_plain(v, depth + 1) for k, v in x.items()}
        return {"$dict": [[to_plain(k, depth + 1), to_plain(v, depth + 1)] for k, v in x.items()]}
    module = getattr(t, "__module__", "") if isinstance(t, type) else ""
    if module == "torch" and t.__name__ in ("Tensor", "Parameter") or module == "torch.nn.parameter":
        return _array(x, True)
    if module == "numpy" and t.__name__ == "ndarray":
        return _array(x, False)
    if module == "numpy" and hasattr(x, "dtype") and hasattr(x, "shape") and x.shape == ():
        out = _array(x, False)  # a numpy scalar: a 0-d array, rebuilt as a scalar
        out["$nd"]["scalar"] = True
        return out
    if dataclasses.is_dataclass(x) and not isinstance(x, type) and module.startswith("ch13lib"):
        return {
            "$dc": f"{module}:{t.__qualname__}",
            "fields": {f.name: to_plain(getattr(x, f.name), depth + 1) for f in dataclasses.fields(x)},
        }
    raise WireError(
        f"a value of type {t.__name__} cannot be sent to the grader: only plain data "
        "(None, bool, int, float, str, bytes, lists, tuples, dicts, sets, arrays)"
    )


def encode(obj) -> bytes:
    body = json.dumps(to_plain(obj), separators=(",", ":"), allow_nan=False).encode()
    return HEADER.pack(len(body)) + body


# ---------------------------------------------------------------- decoding


def _nd(spec: dict):
    import numpy as np

    dtype, shape, data = spec.get("dtype"), spec.get("shape"), spec.get("data")
    if (
        dtype not in DTYPES
        or type(shape) is not list
        or type(data) is not str
        or not all(type(n) is int and 0 <= n for n in shape)
        or len(shape) > 32
    ):
        raise WireError("a malformed array")
    raw = base64.b64decode(data, validate=True)
    itemsize = 2 if dtype == "bfloat16" else np.dtype(dtype).itemsize
    if math.prod(shape) * itemsize != len(raw):
        raise WireError("an array whose bytes do not match its shape")
    if spec.get("torch") is True:
        import torch

        if dtype == "bfloat16":
            return (
                torch.from_numpy(np.frombuffer(raw, dtype=np.int16).copy()).view(torch.bfloat16).reshape(tuple(shape))
            )
        return torch.from_numpy(np.frombuffer(raw, dtype=dtype).copy().reshape(tuple(shape)))
    a = np.frombuffer(raw, dtype=dtype).copy().reshape(tuple(shape))
    return a[()] if shape == [] and spec.get("scalar") else a


def _hook(allow_dataclasses: bool):
    def hook(pairs):
        if len(pairs) == 1 or (len(pairs) == 2 and pairs[0][0] == "$dc"):
            tag, value = pairs[0]
            if tag == "$bytes" and type(value) is str:
                return base64.b64decode(value, validate=True)
            if tag == "$tuple" and type(value) is list:
                return tuple(value)
            if tag == "$set" and type(value) is list:
                return _hashable_set(value)
            if tag == "$dict" and type(value) is list:
                return {_key(p): p[1] for p in value if _pair(p)} if all(_pair(p) for p in value) else _bad()
            if tag == "$nd" and type(value) is dict:
                return _nd(value)
            if tag == "$int" and type(value) is str and len(value) < 5000:
                return int(value)
            if tag == "$float" and value in ("nan", "inf", "-inf"):
                return float(value)
            if tag == "$dc":
                if not allow_dataclasses:
                    raise WireError("the subject may not send objects")
                return _dataclass(value, dict(pairs).get("fields"))
        out = {}
        for k, v in pairs:
            if k.startswith("$") and not k.startswith("$$"):
                raise WireError(f"an unknown tag {k[:20]!r}")
            out[k[2:] if k.startswith("$$") else k] = v
        return out

    return hook


def _bad():
    raise WireError("a malformed dict")


def _pair(p) -> bool:
    return type(p) is list and len(p) == 2


def _key(p):
    k = p[0]
    if type(k) is list:
        raise WireError("a list cannot be a dict key")
    return k


def _hashable_set(values: list):
    try:
        return set(values)
    except TypeError:
        raise WireError("a set of unhashable values") from None


def _dataclass(name, fields):
    module, _, qual = str(name).partition(":")
    if not module.startswith("ch13lib.") or type(fields) is not dict:
        raise WireError(f"not a ch13lib dataclass: {name!r}")
    cls = getattr(importlib.import_module(module), qual)
    if not dataclasses.is_dataclass(cls):
        raise WireError(f"not a dataclass: {name!r}")
    return cls(**fields)


def decode(body: bytes, *, from_subject: bool = True):
    try:
        return json.loads(body, object_pairs_hook=_hook(allow_dataclasses=not from_subject))
    except WireError:
        raise
    except (ValueError, TypeError, RecursionError, LookupError) as e:
        raise WireError(f"not a frame of plain data ({type(e).__name__})") from None


# ---------------------------------------------------------------- frames over a file descriptor


def write_frame(fd: int, obj, key: bytes | None = None) -> None:
    data = encode(obj) if key is None else seal(key, encode(obj))
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def read_exact(fd: int, n: int) -> bytes:
    chunks, got = [], 0
    while got < n:
        chunk = os.read(fd, min(n - got, 1 << 20))
        if not chunk:
            raise EOFError("the other side closed the channel")
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def read_frame(fd: int, *, from_subject: bool = True, limit: int = MAX_FRAME, key: bytes | None = None):
    """One frame's value; with ``key``, a sealed frame (:func:`seal`), else :class:`Unsealed`."""
    (n,) = HEADER.unpack(read_exact(fd, HEADER.size))
    if n > limit:
        raise WireError(f"a frame of {n} bytes, over the limit of {limit}")
    body = read_exact(fd, n)
    if key is not None:
        body = unseal(key, body)
        if body is None:
            raise Unsealed("a frame without the seal of the channel's key")
    return decode(body, from_subject=from_subject)


# ---------------------------------------------------------------- sealed frames


class Unsealed(WireError):
    """A frame whose seal is not the channel's key: written by someone else than the other end."""


def seal(
    key: bytes, frame: bytes, *, _digest=_hmac_digest, _pack=HEADER.pack, _header=HEADER.size, _size=SEAL_SIZE
) -> bytes:
    """``frame`` (from :func:`encode`) sealed: the header counts the seal, HMAC-SHA256(key, body),
    which follows the body. What it computes with is bound when this module is imported, before
    any student code runs in the subject (C functions and a C method: nothing the cell can rebind)."""
    body = frame[_header:]
    return _pack(len(body) + _size) + body + _digest(key, body, "sha256")


def unseal(
    key: bytes, payload: bytes, *, _digest=_hmac_digest, _compare=hmac.compare_digest, _size=SEAL_SIZE
) -> bytes | None:
    """The body of a sealed frame (``payload``: what followed the header), or None when the seal is
    not the key's."""
    body, mac = payload[:-_size], payload[-_size:]
    if len(payload) < _size or not _compare(mac, _digest(key, body, "sha256")):
        return None
    return body
