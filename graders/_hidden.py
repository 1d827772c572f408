"""Values no subject can predict: keys drawn from a secret that only judges read.

A relayed world (graders/_collectives.run_relayed) keeps ranks apart, but a rank that can rebuild
the other ranks' inputs needs nothing from them: ch13lib's cases draw their values from public
seeds, which a rank can search for from the values it was given (the tensor-parallel MLP's, for
one). So the cases a pass rests on draw their values under a key, an HMAC of the
case under this installation's secret, and each rank receives only its own inputs from the judge.

The secret is ``graders/.secret`` (32 random bytes, made on first use, ignored by git): beside the
hidden graders, so every sandboxed job has it covered like them (kit/sandbox.py). The values are
keyed to the submission too (:func:`keyed_to`, entered by graders.api.run_test around every test:
the SHA-256 of the answer cell's text): the same cell gets the same values, and so the same score,
on every run of one installation, while another text draws others. Keyed to the installation
alone, they would be the same for every student, so a rank's exception text could carry them out in
one grading's feedback and a later cell answer from a table of them, unflagged, for any student
handed the table. Delete the file to draw new hidden values
(say, for a new term).

A private module (its name starts with "_"): not a grade_id of its own.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import functools
import hashlib
import hmac
import os
import secrets
from pathlib import Path

SECRET = Path(__file__).with_name(".secret")
SIZE = 32
# the submission the values are drawn for: the SHA-256 of its answer cell (empty outside a test)
_SUBMISSION: contextvars.ContextVar[bytes] = contextvars.ContextVar("submission", default=b"")


@contextlib.contextmanager
def keyed_to(source: str):
    """Hidden values drawn inside are the answer cell ``source``'s own."""
    token = _SUBMISSION.set(hashlib.sha256(source.encode("utf-8", "surrogatepass")).digest())
    try:
        yield
    finally:
        _SUBMISSION.reset(token)


@functools.cache
def _secret() -> bytes:
    try:
        data = SECRET.read_bytes()
    except FileNotFoundError:
        tmp = SECRET.with_name(f".secret.{os.getpid()}.{secrets.token_hex(4)}")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(secrets.token_bytes(SIZE))
        try:
            os.link(tmp, SECRET)  # atomic: the first judge's secret wins, whole; the others read it
        except FileExistsError:
            pass
        finally:
            tmp.unlink()
        data = SECRET.read_bytes()
    if len(data) != SIZE:
        raise RuntimeError(f"{SECRET} is not {SIZE} bytes: delete it, and the next grading makes a new one")
    return data


def hidden(case):
    """``case`` with its values drawn under a key of its own (ch13lib.parallel_cases._gen): the same
    sizes, dtype and schedule. Idempotent."""
    if case.key:
        return case
    return dataclasses.replace(case, key=hidden_seed(repr(case)))


def hidden_seed(label: str) -> int:
    """A seed in [1, 2**62] no subject can predict or search for: an HMAC of ``label`` and the
    submission (:func:`keyed_to`)."""
    digest = hmac.digest(_secret(), _SUBMISSION.get() + label.encode(), hashlib.sha256)
    return 1 + int.from_bytes(digest[:8], "big") % (2**62)
