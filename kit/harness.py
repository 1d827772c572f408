"""The harness interface, declared once: what a harness module may offer the grading side.

A harness is a module that a grader names (``Grader(harness=...)``, graders/api.py): a public
module of ch13lib, or a grading-only one of kit/harnesses/, which imports ch13lib and is never
released.
The subject (kit/subject.py) imports it before any student code runs, watches it for tampering
and checks it with :func:`check`; a malformed harness stops the subject before the cell loads. A
harness may define (one that defines none is only imported and watched):

``SUBJECT_API``
    names of functions the judge may run in the subject on the answer cell, each called as
    ``fn(cell, *args, **kwargs)`` (``Answer.run`` and ``Answer.converse`` in graders/api.py);
``RANK_API``
    functions a rank of a launched world may run, ``fn(payload)``: the subject hands the entries of
    its harness modules to ``subject_setup`` (``kit.subject.Trusted.ranks``), and a guarded rank
    (ch13lib.collective_launch ``_worker``, which imports nothing of kit) runs only one of those;
``CHILD_API``
    functions a fresh, guarded interpreter may run, ``fn(cell, *args)`` (:func:`kit.subject.child`,
    which imports the module a harness names, of ch13lib or kit/harnesses/ only: a light one, as
    kit.harnesses.mapreduce, starts fast);
``subject_setup(trusted)``
    called once in the subject before any student code, with :class:`kit.subject.Trusted`: the
    guards for the processes the harness starts.

Each list is a tuple of names of plain functions of the harness's own package (a module may list
what a private module of ch13lib defines): never a library's function, a class or a callable
object.
"""

from __future__ import annotations

import inspect
import types
from collections.abc import Callable

ENTRY_LISTS = ("SUBJECT_API", "RANK_API", "CHILD_API")


class HarnessError(TypeError):
    """A module that does not keep the interface above."""


def check(module: types.ModuleType) -> None:
    """Raise :class:`HarnessError` unless ``module`` keeps the harness interface."""
    name = module.__name__
    for lst in ENTRY_LISTS:
        names = getattr(module, lst, ())
        if type(names) is not tuple or not all(type(n) is str for n in names):
            raise HarnessError(f"{name}.{lst} is not a tuple of names: {names!r}")
        for entry in names:
            fn = getattr(module, entry, None)
            package = name.split(".")[0]
            if not inspect.isfunction(fn) or str(fn.__module__).split(".")[0] != package:
                raise HarnessError(f"{name}.{lst} names {entry!r}, which is not a function of {package}")
    setup = getattr(module, "subject_setup", None)
    if setup is not None:
        if not inspect.isfunction(setup):
            raise HarnessError(f"{name}.subject_setup is not a function")
        params = list(inspect.signature(setup).parameters.values())
        if len(params) != 1 or params[0].kind not in (params[0].POSITIONAL_ONLY, params[0].POSITIONAL_OR_KEYWORD):
            raise HarnessError(f"{name}.subject_setup must take one argument, the subject's Trusted")


def entry_points(module: types.ModuleType, lst: str) -> dict[str, Callable]:
    """``{"module:function": function}`` for the functions ``module`` lists in ``lst``."""
    if lst not in ENTRY_LISTS:
        raise ValueError(f"not an entry list: {lst!r}")
    return {f"{module.__name__}:{entry}": getattr(module, entry) for entry in getattr(module, lst, ())}


def setup(module: types.ModuleType) -> Callable | None:
    """The module's ``subject_setup``, or None."""
    return getattr(module, "subject_setup", None)
