"""What the scheduler sees of the code under test (a part of :mod:`ch13lib.sched`).

Which bytecodes of your code are scheduling points and what they touch (the tables the tracer
looks up at every opcode), which callees are no points (our own code, trusted stdlib), and the
static reads (no property, no ``__getattr__`` run) that name the values for the lockset rule and
the story. Nothing here runs or schedules anything.
"""

from __future__ import annotations

import ast
import builtins
import collections
import concurrent.futures._base as _cf_base
import concurrent.futures.thread as _cf_thread
import linecache
import os
import queue as _queue_mod
import threading
import types

# --------------------------------------------------------------------------------------------
# The scheduler's own code
# --------------------------------------------------------------------------------------------

# The scheduler is sched.py and its _sched_*.py parts, all in this folder. A frame or a code object
# from one of these files is the scheduler's, never your code: the checks that walk frames or judge
# a callee by its file (Run._user_call, _Sync._log, _TRUSTED_CODE) all use this one set, so that a
# function moved from one part to another changes no scheduling point. sched.py checks at import
# that it names exactly the modules loaded.
_PARTS = ("sched", "_sched_code", "_sched_models", "_sched_run")
_SCHED_MODULES = frozenset(f"{__package__}.{p}" for p in _PARTS)
_SCHED_FILES = frozenset(os.path.join(os.path.dirname(__file__), p + ".py") for p in _PARTS)

# --------------------------------------------------------------------------------------------
# Which bytecodes of your code are scheduling points, and what they touch (for the story)
# --------------------------------------------------------------------------------------------

_ATTR_OPS = {"LOAD_ATTR", "STORE_ATTR", "DELETE_ATTR"}
_SUBSCR_OPS = {"BINARY_SUBSCR", "STORE_SUBSCR", "DELETE_SUBSCR"}
_NAME_OPS = {"LOAD_GLOBAL", "STORE_GLOBAL", "DELETE_GLOBAL", "LOAD_DEREF", "STORE_DEREF", "LOAD_CLASSDEREF"}
# A call may read or write shared data out of our sight (``setattr(self, "n", v)``,
# ``object.__setattr__``, ``operator.setitem``, a C method of a container): unless the callee is
# your own traced code, one of our models or a builtin that touches no shared data, the call is an
# access to an unknown location, named by the callee's text, for the lockset rule.
_CALL_OPS = {"CALL", "CALL_FUNCTION_EX"}
# An operator changes a mutable operand in place (``items += [x]``, ``ticks *= 0`` on a list) with
# no STORE in sight, and on an object of your class it runs whatever its dunder holds (a C method
# such as ``list.append`` runs no Python frame): both are writes of that operand.
_OPERATOR_OPS = {"BINARY_OP", "COMPARE_OP", "CONTAINS_OP"}
# Opcodes that run C code of an operand's choosing with no call in sight: iterating
# (``for _ in w``, ``yield from w``), unpacking (``(_,) = w``) and splicing (``[*w]``, ``{**d}``)
# an iterator built of C functions can write shared data. Each is a "drain": an
# access to an unknown location, as a C call is, unless every operand is a plain value or an
# iterator of one (then no code of anybody's runs).
_DRAIN_OPS = {
    "GET_ITER",
    "GET_YIELD_FROM_ITER",
    "FOR_ITER",
    "SEND",
    "UNPACK_SEQUENCE",
    "UNPACK_EX",
    "LIST_EXTEND",
    "SET_UPDATE",
    "DICT_UPDATE",
    "DICT_MERGE",
}
_VISIBLE = _ATTR_OPS | _SUBSCR_OPS | _NAME_OPS | _CALL_OPS | _OPERATOR_OPS | _DRAIN_OPS
# Builtins that touch no shared data and run no code of their own choosing — when every argument
# is a value of a builtin type (an object of your class could hold a C method in ``__len__``,
# ``__index__``, ``__repr__``...). Kept as few as honest threads need: any other call is a
# scheduling point where it is racy.
_HARMLESS_CALLS = frozenset(map(id, (len, range, isinstance, abs, id, repr, super)))
_PLAIN_TYPES = frozenset(
    (
        int,
        float,
        complex,
        str,
        bytes,
        bool,
        type(None),
        tuple,
        frozenset,
        range,
        list,
        dict,
        set,
        collections.deque,
        bytearray,
        type,
    )
)
# Code whose calls are no points: our models, the scenario, and the stdlib's thread-safe queues and
# executors, whose own locking is trusted as at every synchronisation call they make (_user_call).
_STDLIB_TRUSTED = (_queue_mod, _cf_thread, _cf_base)
_TRUSTED_MODULES = _SCHED_MODULES | {m.__name__ for m in _STDLIB_TRUSTED}
_TRUSTED_CODE = _SCHED_FILES | {m.__file__ for m in _STDLIB_TRUSTED} | {"<scenario>"}
_STDLIB_TRUSTED_FILES = frozenset(m.__file__ for m in _STDLIB_TRUSTED)
_NO_SELF = object()
_TRUSTED_CALLERS = _TRUSTED_CODE | {threading.__file__}


def _trusted_frame(frame) -> bool:
    """A call into trusted code that is trusted: our models and the scenario always; the stdlib's
    queues and executors only on their own objects: trusted code run on an object of yours would run
    your object's code unseen, so on an object of another class the stdlib's code is library code."""
    filename = frame.f_code.co_filename
    if filename not in _TRUSTED_CODE:
        return False
    if filename not in _STDLIB_TRUSTED_FILES:
        return True
    me = frame.f_locals.get("self", _NO_SELF)
    if me is _NO_SELF:
        # a module-level function (``_worker``, ``wait``): trusted when trusted code or threading
        # called it, never when the cell did: called by a cell, it would run the cell's work unseen
        caller = frame.f_back
        return caller is not None and caller.f_code.co_filename in _TRUSTED_CALLERS
    return type(me) in _STDLIB_CLASSES and _intact(me)


# The stdlib's own classes, by identity: a class of yours that names a stdlib module as its
# ``__module__`` is not one, and its code is traced.
_STDLIB_CLASSES = frozenset(
    v for m in _STDLIB_TRUSTED for v in vars(m).values() if isinstance(v, type) and v.__module__ == m.__name__
)
_QUEUE_CONDITIONS = ("not_empty", "not_full", "all_tasks_done")
_real_mro = type.__dict__["__mro__"].__get__  # not a metaclass's __mro__ property


def _intact(me) -> bool:
    """Whether a stdlib object's synchronization is still what its ``__init__`` built: every
    lock-like attribute one of the scheduler's models, and a queue's three conditions on its own
    mutex. A stdlib object whose synchronization was replaced would run unlocked updates inside
    trusted, untraced code; such an object's stdlib code is library code, traced like any."""
    from ch13lib import _sched_models as models

    state = object.__getattribute__(me, "__dict__")  # (an exact stdlib class: no __getattr__ of yours)
    if any(name in vars(k) for name in state for k in _real_mro(type(me))):
        return False  # a method shadowed on the object would run its own code inside the stdlib's
    for value in state.values():
        kind = type(value)
        if kind in models.MODEL_TYPES:  # exactly ours, not a subclass of yours
            continue
        if any("__enter__" in vars(k) or "acquire" in vars(k) for k in _real_mro(kind)):
            return False
    if isinstance(me, _queue_mod.Queue):
        mutex = state.get("mutex")
        conditions = [state.get(name) for name in _QUEUE_CONDITIONS]
        return type(mutex) is models.Lock and all(type(c) is models.Condition and c._lock is mutex for c in conditions)
    return True


_code_tables: dict[int, tuple] = {}  # id(code) -> (code, {offset: op info})
_ast_cache: dict[str, dict] = {}  # source text -> {span: ast node}


def _chain(node):
    """``self.a.b`` -> ('self', 'a', 'b'); a constant -> ('=', value); anything else -> None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return (node.id, *reversed(parts))
    if isinstance(node, ast.Constant) and not parts:
        return ("=", node.value)
    return None


def _chain_text(chain) -> str:
    """The source text of a chain: ('self', 'a') -> 'self.a'."""
    if chain is None:
        return "?"
    return repr(chain[1]) if chain[0] == "=" else ".".join(chain)


_SPANNED = (
    ast.Attribute,
    ast.Subscript,
    ast.Call,
    ast.AugAssign,
    ast.BinOp,
    ast.Compare,
    ast.ListComp,
    ast.SetComp,
    ast.DictComp,
    ast.GeneratorExp,
    ast.YieldFrom,
    ast.List,
    ast.Set,
    ast.Tuple,
    ast.Dict,
)


def _spans(filename: str) -> dict:
    """{span: node} for the nodes an opcode's position names; {("for", line, col): For node};
    {("of", span): node} for an unpacking target: the Assign or the loop it belongs to."""
    text = "".join(linecache.getlines(filename))
    spans = _ast_cache.get(text)
    if spans is None:
        spans = {}
        try:
            tree = ast.parse(text)
        except SyntaxError:
            tree = None
        if tree is not None:
            for node in ast.walk(tree):
                if isinstance(node, _SPANNED):
                    spans.setdefault(_span(node), node)
                if isinstance(node, (ast.For, ast.AsyncFor)):
                    spans[("for", node.lineno, node.col_offset)] = node
                    spans[("of", _span(node.target))] = node
                elif isinstance(node, ast.comprehension):
                    spans[("of", _span(node.target))] = node
                elif isinstance(node, ast.Assign):
                    for target in node.targets:
                        spans[("of", _span(target))] = node
        _ast_cache[text] = spans
    return spans


def _span(node) -> tuple:
    return (node.lineno, node.col_offset, node.end_lineno, node.end_col_offset)


def _table(code) -> dict:
    entry = _code_tables.get(id(code))
    if entry is not None and entry[0] is code:
        return entry[1]
    import dis

    spans = _spans(code.co_filename)
    table = {}
    last = None  # the instruction before this one (EXTENDED_ARG aside)
    # in a comprehension's own code, its k-th GET_ITER makes the iterator of its loop k (loop 0's,
    # the local ``.0``, was made by the enclosing code)
    own = None
    if code.co_name in ("<listcomp>", "<setcomp>", "<dictcomp>", "<genexpr>"):
        first = next((p for p in code.co_positions() if p[0] is not None), None)
        own = spans.get(first) if first else None
    comp_iters = 0
    yield_from = None
    for ins in dis.get_instructions(code):
        prev, last = last, (ins if ins.opname != "EXTENDED_ARG" else last)
        if ins.opname == "SEND" and prev is not None and prev.opname == "LOAD_CONST":
            prev = yield_from  # GET_YIELD_FROM_ITER, LOAD_CONST None, SEND
        if ins.opname == "GET_YIELD_FROM_ITER":
            yield_from = ins
        if ins.opname not in _VISIBLE:
            continue
        pos = ins.positions
        node = spans.get((pos.lineno, pos.col_offset, pos.end_lineno, pos.end_col_offset)) if pos else None
        text = ast.unparse(node) if node is not None and not isinstance(node, _DRAIN_NODES) else None
        if ins.opname in _DRAIN_OPS:
            k = 0
            if ins.opname == "GET_ITER" and own is not None and node is own:
                comp_iters += 1
                k = comp_iters
            table[ins.offset] = _drain_entry(ins, prev, node, spans, pos, k, table)
        elif ins.opname in _ATTR_OPS:
            base = _chain(node.value) if isinstance(node, ast.Attribute) and node.attr == ins.argval else None
            table[ins.offset] = (ins.opname, ins.argval, base, None, text or f"?.{ins.argval}", [None, None])
        elif ins.opname in _CALL_OPS:
            if not isinstance(node, ast.Call):
                continue  # a call no expression makes (a with block's __exit__): see _entered_library
            # name: the arguments' chains (None for one that is no chain), for the harmless builtins;
            # key: what ``*args`` and ``**kwargs`` splice (C iterates them, also for a Python callee)
            args = None if node.keywords or any(isinstance(a, ast.Starred) for a in node.args) else node.args
            chains = tuple(_chain(a) for a in args) if args is not None else None
            spliced = tuple(_chain(e) for e in _spliced(node)) if ins.opname == "CALL_FUNCTION_EX" else None
            table[ins.offset] = (ins.opname, chains, _chain(node.func), spliced, ast.unparse(node.func), [None, None])
        elif ins.opname in _OPERATOR_OPS:
            if isinstance(node, ast.AugAssign):  # in place: the target is written
                table[ins.offset] = (
                    ins.opname,
                    "inplace",
                    (_chain(node.target), _chain(node.value)),
                    None,
                    ast.unparse(node.target),
                    [None, None],
                )
            elif isinstance(node, ast.BinOp):
                table[ins.offset] = (
                    ins.opname,
                    None,
                    (_chain(node.left), _chain(node.right)),
                    None,
                    text,
                    [None, None],
                )
            elif isinstance(node, ast.Compare):
                chains = tuple(_chain(n) for n in (node.left, *node.comparators))
                table[ins.offset] = (ins.opname, None, chains, None, text, [None, None])
        elif ins.opname in _SUBSCR_OPS:
            base = key = None
            if isinstance(node, ast.Subscript):
                base, key = _chain(node.value), _chain(node.slice)
            table[ins.offset] = (ins.opname, None, base, key, text or "?[?]", [None, None])
        else:
            table[ins.offset] = (ins.opname, ins.argval, None, None, ins.argval, [None, None])
    _code_tables[id(code)] = (code, table)
    return table


_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_DRAIN_NODES = (*_COMPREHENSIONS, ast.YieldFrom, ast.List, ast.Set, ast.Tuple, ast.Dict)


def _spliced(node) -> list:
    """The expressions C iterates in ``[*a]``, ``{*a}``, ``{**d}`` or ``f(*a, **d)``."""
    if isinstance(node, (ast.List, ast.Set, ast.Tuple)):
        return [e.value for e in node.elts if isinstance(e, ast.Starred)]
    if isinstance(node, ast.Dict):
        return [v for k, v in zip(node.keys, node.values) if k is None]
    if isinstance(node, ast.Call):
        return [a.value for a in node.args if isinstance(a, ast.Starred)] + [
            k.value for k in node.keywords if k.arg is None
        ]
    return []


def _iterable(expr):
    """What a loop iterates, as the drain check reads it: ("value", chain), or ("call", callee
    chain, argument chains) for ``range(n)``, ``enumerate(xs)``, ``d.items()``; None: unknown."""
    if isinstance(expr, ast.Call) and not expr.keywords and not any(isinstance(a, ast.Starred) for a in expr.args):
        return ("call", _chain(expr.func), tuple(_chain(a) for a in expr.args))
    chain = _chain(expr)
    return ("value", chain) if chain is not None else None


def _drain_entry(ins, prev, node, spans, pos, k, table) -> tuple:
    """A drain's table entry: ("DRAIN", kind, operands, link, text, verdict).

    kind "iter" (GET_ITER, GET_YIELD_FROM_ITER): operands = what is iterated, judged once per
    loop and kept for its FOR_ITER/SEND, which link to it (a name the loop body rebinds does not
    change what the loop iterates); "next": link = the offset of that GET_*, or None for a
    comprehension's first loop (its iterator is the local ``.0``); "unpack": operands = the
    assigned value, or link = the loop whose element it unpacks; "splice": the spliced values."""
    op = ins.opname
    at = pos.lineno if pos else 0
    if op in ("GET_ITER", "GET_YIELD_FROM_ITER"):
        expr = None
        loop = spans.get(("for", pos.lineno, pos.col_offset)) if pos else None
        if loop is not None and node is None:
            expr = loop.iter
        elif isinstance(node, _COMPREHENSIONS):  # k: 0 in the enclosing code, its first loop
            expr = node.generators[k].iter if k < len(node.generators) else None
        elif isinstance(node, ast.YieldFrom):
            expr = node.value
        text = ast.unparse(expr) if expr is not None else f"the iterable at line {at}"
        return ("DRAIN", "iter", _iterable(expr) if expr is not None else None, None, text, [None, None])
    if op in ("FOR_ITER", "SEND"):
        link = prev.offset if prev is not None and prev.opname in ("GET_ITER", "GET_YIELD_FROM_ITER") else None
        if link is None:  # a comprehension's first loop; a SEND of an await: unknown
            link = "dot0" if op == "FOR_ITER" else -1
        return ("DRAIN", "next", None, link, f"the iterator at line {at}", [None, None])
    if op in ("UNPACK_SEQUENCE", "UNPACK_EX"):
        owner = spans.get(("of", (pos.lineno, pos.col_offset, pos.end_lineno, pos.end_col_offset))) if pos else None
        text = f"unpacking at line {at}"
        if isinstance(owner, ast.Assign):
            value = owner.value
            literal = isinstance(value, (ast.Tuple, ast.List)) and not _spliced(value)
            return ("DRAIN", "unpack", "literal" if literal else _chain(value), None, text, [None, None])
        loop = table.get(prev.offset) if prev is not None and prev.opname == "FOR_ITER" else None
        return ("DRAIN", "unpack", None, loop[3] if loop else -1, text, [None, None])
    # LIST_EXTEND, SET_UPDATE, DICT_UPDATE, DICT_MERGE
    exprs = _spliced(node) if node is not None else None
    chains = tuple(_chain(e) for e in exprs) if exprs else None
    return ("DRAIN", "splice", chains, None, f"splicing at line {at}", [None, None])


def _hidden_dunders(namespace) -> list:
    """The dunder methods in a class's namespace that are no Python code: a ``functools.partial``,
    a builtin, a bound C method... The interpreter calls them from C (``box[k] = v`` runs
    ``__setitem__``, ``if x:`` runs ``__bool__``, ``{x}`` runs ``__hash__``, ``with x:`` runs
    ``__enter__``), so what they do happens out of the scheduler's sight.
    Python functions, classmethods and staticmethods of them, properties of them and values that
    are no callables (``__slots__``, ``__hash__ = None``) are fine."""

    def python(f):
        return f is None or type(f) is types.FunctionType

    bad = []
    for name, v in list(namespace.items()):
        if not (name.startswith("__") and name.endswith("__")) or python(v) or name in ("__dict__", "__weakref__"):
            continue  # (those two are the attribute descriptors type() itself makes)
        if type(v) in (types.WrapperDescriptorType, types.MethodDescriptorType) and (
            getattr(getattr(v, "__objclass__", None), "__module__", None) == "builtins"
        ):
            continue  # a builtin type's own (``__hash__ = int.__hash__`` beside an __eq__): on the object itself
        if type(v) in (classmethod, staticmethod) and python(v.__func__):
            continue
        if type(v) is property and python(v.fget) and python(v.fset) and python(v.fdel):
            continue
        if callable(v) or type(v) in (classmethod, staticmethod, property) or hasattr(type(v), "__get__"):
            bad.append(name)
    return bad


_MISSING = object()
# Iterating these runs no code of anybody's: builtin containers and their views and iterators,
# and generators (Python code, traced inside like any function of yours).
_HARMLESS_ITERABLES = frozenset(
    (
        *(t for t in _PLAIN_TYPES if t is not type),
        type({}.keys()),
        type({}.values()),
        type({}.items()),
        types.GeneratorType,
    )
)
_HARMLESS_ITERATORS = frozenset(
    type(iter(x))
    for x in (
        [],
        (),
        range(0),
        range(2**64),
        "",
        "\u20ac",
        b"",
        bytearray(),
        {},
        {}.values(),
        {}.items(),
        set(),
        collections.deque(),
        reversed([]),
        reversed(range(0)),
        reversed({}),
        reversed({}.values()),
        reversed({}.items()),
    )
)


def _iterator_verdict(v) -> tuple[bool, bool]:
    """(iterating ``v`` runs no code, its elements are tuples it makes: dict items)."""
    t = type(v)
    if t in _HARMLESS_ITERABLES or t in _HARMLESS_ITERATORS:
        return True, t is type({}.items()) or t is type(iter({}.items())) or t is type(reversed({}.items()))
    return False, False


_IMMUTABLE = (int, float, complex, str, bytes, bool, type(None), tuple, frozenset, range)
_CONTAINERS = (list, dict, set, collections.deque, bytearray)
_rebound_cache: dict[str, set] = {}


def _rebound(filename: str) -> set:
    """Names that some code of ``filename`` assigns with STORE_GLOBAL/STORE_DEREF (or deletes).

    A global or closure variable never rebound and holding an immutable value cannot race, so
    its reads are not scheduling points."""
    text = "".join(linecache.getlines(filename))
    names = _rebound_cache.get(text)
    if names is None:
        import dis

        names = set()
        try:
            todo = [compile(text, filename, "exec")]
        except SyntaxError:
            todo = []
        while todo:
            code = todo.pop()
            for ins in dis.get_instructions(code):
                if ins.opname in ("STORE_GLOBAL", "STORE_DEREF", "DELETE_GLOBAL", "DELETE_DEREF"):
                    names.add(ins.argval)
            todo += [c for c in code.co_consts if isinstance(c, types.CodeType)]
        _rebound_cache[text] = names
    return names


def _static_get(obj, name):
    """getattr without running properties or __getattr__ (None-safe): _MISSING when unsure."""
    try:
        d = object.__getattribute__(obj, "__dict__")
    except (AttributeError, TypeError):
        d = None
    for klass in type(obj).__mro__:
        v = klass.__dict__.get(name, _MISSING)
        if v is not _MISSING:
            if hasattr(type(v), "__set__") or hasattr(type(v), "__delete__"):
                return _MISSING if not isinstance(v, types.MemberDescriptorType) else _member(v, obj)
            if d is not None and name in d:
                return d[name]
            return v
    if isinstance(obj, type):
        for klass in obj.__mro__:
            if name in klass.__dict__:
                return klass.__dict__[name]
    if isinstance(obj, types.ModuleType) and d is not None:
        return d.get(name, _MISSING)
    if d is not None and name in d:
        return d[name]
    return _MISSING


def _member(desc, obj):
    try:
        return desc.__get__(obj, type(obj))
    except AttributeError:
        return _MISSING


def _eval_chain(chain, frame):
    if chain is None:
        return _MISSING
    if chain[0] == "=":
        return chain[1]
    loc = frame.f_locals
    if chain[0] in loc:
        v = loc[chain[0]]
    elif chain[0] in frame.f_globals:
        v = frame.f_globals[chain[0]]
    else:
        v = getattr(builtins, chain[0], _MISSING)
    for part in chain[1:]:
        if v is _MISSING:
            return v
        v = _static_get(v, part)
    return v


def _line_text(filename, lineno) -> str:
    return f"line {lineno}: {linecache.getline(filename, lineno).strip()}"
