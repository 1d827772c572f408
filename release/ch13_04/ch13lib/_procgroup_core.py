"""What the simulated world and a relayed rank share (a part of :mod:`ch13lib.procgroup`).

The signal that unwinds a rank once its world has failed (raised by the world, caught by the
relay) and the student's line a call is charged to (``_user_line``: in a relaying thread, the
remote rank's own line, ``_RELAYED``). Its own module so that ``procgroup`` and
``_procgroup_relay`` both import it and neither imports the other at import time.
"""

from __future__ import annotations

import linecache
import os
import sys
import threading

_THIS_DIR = os.path.dirname(os.path.abspath(__file__))  # ch13lib's folder: procgroup and its parts are in it
_THREADING = os.path.dirname(threading.__file__)


class _Abort(BaseException):
    """Unwinds the other ranks once the world has failed (not an Exception: rarely caught)."""


_RELAYED = threading.local()  # in a relaying thread (SimWorld.run_remote): the remote rank's own line


def _user_line() -> str:
    """The innermost caller outside this package and threading: the student's line."""
    where = getattr(_RELAYED, "where", None)
    if where is not None:
        return where
    f = sys._getframe(1)  # not traceback.extract_stack: one source line read, not one per frame
    while f is not None:
        name = f.f_code.co_filename
        d = os.path.dirname(os.path.abspath(name)) if os.path.isabs(name) else ""
        if d != _THIS_DIR and d != _THREADING:
            line = linecache.getline(name, f.f_lineno).strip()
            return f"line {f.f_lineno}" + (f" `{line}`" if line else "")
        f = f.f_back
    return "?"
