"""What an answer cell may use, per exercise: a published allow-list, checked on the cell's text.

Notebook 01's cells run in one interpreter with the thread scheduler that grades them, so what a
cell could reach there is bounded by what it may name. The judge reads the cell's text before
anything runs and grades only a cell that stays inside its exercise's list; anything the list does
not name is refused (the cell is not graded and a TA reviews it). The notebook's self-check runs
the same check, so a student learns of a refusal before submitting.

A list names:

- **modules**, and of each the names a cell may take from it (``ALL``: every public name). A module
  is used only for its names (``threading.Lock``), never as a value (``f(threading)``);
- **built-ins** (a name the cell does not bind itself). ``getattr``, ``setattr``, ``hasattr``,
  ``delattr``, ``vars`` and ``type`` are called, never passed around; ``vars`` and a computed
  attribute name only on the cell's own object (``self``, ``cls``);
- **double-underscore attributes**: the special methods a class defines and calls on ``super()``;
  no other ``obj.__x__`` (the way into frames, code objects, globals and the classes' internals).

The lists are data: :data:`EXERCISES` maps a grade_id to its list, and :func:`outside` says, line
by line and in the course's language, what a cell uses that its list does not name.
"""

from __future__ import annotations

import ast
import builtins
import dataclasses
import re

from ch13lib.lang import Both, Messages

# What the check says, in the course's language (ch13lib/lang.py).
M = Messages(
    module=(
        "导入了 {name}: 本练习只能使用 {allowed}",
        "imports {name}: this exercise uses only {allowed}",
    ),
    name=(
        "使用了 {module}.{name}: {module} 中本练习可用的是 {allowed}",
        "uses {module}.{name}: of {module}, this exercise uses {allowed}",
    ),
    star=(
        "from {module} import *: 请逐个导入要用的名字",
        "from {module} import *: import the names you use one by one",
    ),
    relative=("相对导入: 答案单元不是一个包", "a relative import: an answer cell is no package"),
    module_value=(
        "把模块 {module} 当作值使用: 只能使用它的名字 ({module}.Lock 这样的写法)",
        "uses the module {module} as a value: use its names only (as in {module}.Lock)",
    ),
    builtin=("使用了内置的 {name}: 没有哪道练习需要它", "uses the built-in {name}, which no exercise needs"),
    rebinds=(
        "把内置的 {name} 这个名字另作他用: 请换一个名字",
        "binds the name of the built-in {name} to something else: choose another name",
    ),
    builtin_value=(
        "把 {name} 当作值传递: 只能直接调用它",
        "passes {name} around as a value: call it directly",
    ),
    not_own=(
        "{name}(...) 只能用于你自己的对象 (self 或 cls)",
        "{name}(...) is for your own object only (self or cls)",
    ),
    computed=(
        "{name}(...) 的属性名是计算出来的: 只能对你自己的对象 (self 或 cls) 这样做",
        "{name}(...) with a computed attribute name: only on your own object (self or cls)",
    ),
    dunder=(
        "访问了属性 {attr}: 双下划线属性只能是类定义的特殊方法 ({allowed})",
        "reaches for the attribute {attr}: of double-underscore attributes only a class's special methods "
        "are used ({allowed})",
    ),
    format_field=(
        "格式字符串的字段 {field} 访问了属性: 请用 f-string",
        "the format string's field {field} reaches for an attribute: use an f-string",
    ),
    format_computed=(
        "对计算出来的字符串调用 .{method}(): 格式字符串要写成字面量",
        "calls .{method}() on a computed string: write the format string as a literal",
    ),
    type_three=(
        "type(...) 的三参数形式在运行时造类: 请用 class 语句",
        "type(...) with three arguments makes a class at run time: use a class statement",
    ),
)

ALL = "*"  # every public name of a module (no leading underscore)


@dataclasses.dataclass(frozen=True)
class Allowed:
    """One exercise's allow-list (see the module's docstring)."""

    modules: dict[str, frozenset[str] | str]
    builtins: frozenset[str]
    dunders: frozenset[str]


# The special methods a class of the cell defines and calls (on super(), on itself).
SPECIAL_METHODS = frozenset(
    "__init__ __new__ __post_init__ __enter__ __exit__ __repr__ __str__ __format__ __eq__ __ne__ __lt__ "
    "__le__ __gt__ __ge__ __hash__ __bool__ __len__ __iter__ __next__ __contains__ __getitem__ __setitem__ "
    "__delitem__ __call__ __name__ __qualname__ __class__ __doc__".split()
)
# Built-ins honest code uses. Left out, among others: eval, exec, compile, __import__, globals,
# locals, open, input, breakpoint, memoryview, help, exit, quit: reaching the interpreter, files
# or the terminal, which no exercise needs.
BUILTINS = frozenset(
    "abs all any ascii bin bool bytearray bytes callable chr classmethod complex delattr dict dir divmod "
    "enumerate filter float format frozenset getattr hasattr hash hex id int isinstance issubclass iter "
    "len list map max min next object oct ord pow print property range repr reversed round set setattr "
    "slice sorted staticmethod str sum super tuple type vars zip NotImplemented Ellipsis __name__".split()
) | frozenset(n for n in dir(builtins) if n.endswith(("Error", "Exception", "Warning")) or n in ("StopIteration",))
# Called directly, never passed around: each reads or writes an attribute or a namespace by name.
REFLECTIVE = frozenset({"getattr", "setattr", "hasattr", "delattr", "vars", "type"})
_BUILTINS = frozenset(vars(builtins))  # the built-in namespace (not the module object's attributes)
OWN = ("self", "cls")

THREADS = Allowed(
    modules={
        "threading": frozenset(
            "Thread Lock RLock Condition Semaphore BoundedSemaphore Event Barrier BrokenBarrierError Timer "
            "current_thread get_ident main_thread active_count local TIMEOUT_MAX".split()
        ),
        "time": frozenset("sleep monotonic monotonic_ns perf_counter perf_counter_ns time time_ns".split()),
        "queue": frozenset("Queue LifoQueue PriorityQueue SimpleQueue Empty Full".split()),
        "concurrent.futures": frozenset(
            "ThreadPoolExecutor Future wait as_completed FIRST_COMPLETED FIRST_EXCEPTION ALL_COMPLETED "
            "TimeoutError CancelledError".split()
        ),
        "collections": frozenset("deque defaultdict Counter OrderedDict namedtuple ChainMap".split()),
        "collections.abc": ALL,
        "contextlib": frozenset("contextmanager suppress ExitStack nullcontext closing".split()),
        "functools": frozenset("partial wraps total_ordering reduce cached_property lru_cache cache".split()),
        "random": frozenset("random uniform randint randrange choice shuffle sample Random".split()),
        "dataclasses": frozenset("dataclass field".split()),
        "typing": ALL,
        "itertools": ALL,
        "operator": ALL,
        "math": ALL,
        "enum": ALL,
        "abc": ALL,
        "heapq": ALL,
        "bisect": ALL,
        "__future__": frozenset({"annotations"}),
    },
    builtins=BUILTINS,
    dunders=SPECIAL_METHODS,
)

EXERCISES: dict[str, Allowed] = {
    "counter": THREADS,
    "bank_transfer": THREADS,
    "bounded_buffer": THREADS,
    "semaphore_pool": THREADS,
}


def outside(grade_id: str, source: str) -> list[str]:
    """What ``source`` uses that ``grade_id``'s allow-list does not name, one line per finding
    ("line N: why: the line"); [] when it stays inside, or when the exercise has no list or the
    cell does not parse (the grading reports a syntax error itself)."""
    allowed = EXERCISES.get(grade_id)
    if allowed is None:
        return []
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    found = _Check(allowed, tree).found
    lines = source.splitlines()
    return [
        f"line {n}: {why}: {lines[n - 1].strip() if 0 < n <= len(lines) else ''}"
        for n, whys in sorted(found.items())
        for why in whys
    ]


def _listed(names: frozenset[str] | str) -> Both | str:
    return Both("每个公开的名字", "every public name") if names == ALL else ", ".join(sorted(names))


_FIELD = re.compile(r"(?<!\{)\{([^{}!:]*)")  # a replacement field's name, up to ! or :


class _Check:
    """One walk over the cell's tree; ``found`` maps a line to its findings, in order."""

    def __init__(self, allowed: Allowed, tree: ast.Module) -> None:
        self.allowed, self.found = allowed, {}
        self.bound = set()
        for node, name in _bindings(tree):
            self.bound.add(name)
            # One scope's name is another's built-in (``def f(getattr): ...`` beside a call of the
            # built-in elsewhere): a built-in the list refuses or keeps to direct calls is never bound
            if name in _BUILTINS and (name not in allowed.builtins or name in REFLECTIVE):
                self.add(node, "rebinds", name=name)
        self.modules: dict[str, str] = {}  # a name an import binds to a module -> the module
        self.parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
        nodes = list(ast.walk(tree))
        for node in nodes:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                self._import(node)
        for node in nodes:
            if isinstance(node, ast.Name):
                self._name(node)
            elif isinstance(node, ast.Attribute):
                self._attribute(node)
            elif isinstance(node, ast.Call):
                self._call(node)

    def add(self, node: ast.AST, key: str, **fields) -> None:
        whys = self.found.setdefault(getattr(node, "lineno", 0), [])
        why = M(key, **fields)
        if why not in whys:
            whys.append(why)

    def _import(self, node: ast.Import | ast.ImportFrom) -> None:
        mods = self.allowed.modules
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name not in mods:
                    self.add(node, "module", name=alias.name, allowed=", ".join(mods))
                elif alias.asname:
                    self.modules[alias.asname] = alias.name
                else:  # import concurrent.futures binds concurrent
                    top = alias.name.split(".")[0]
                    self.modules.setdefault(top, top)
            return
        if node.level:
            self.add(node, "relative")
            return
        module = node.module or ""
        for alias in node.names:
            sub = f"{module}.{alias.name}"
            if alias.name == "*":
                self.add(node, "star", module=module)
            elif sub in mods:  # from concurrent import futures
                self.modules[alias.asname or alias.name] = sub
            elif module not in mods:
                self.add(node, "module", name=module, allowed=", ".join(mods))
            elif not _takes(mods[module], alias.name):
                self.add(node, "name", module=module, name=alias.name, allowed=_listed(mods[module]))

    def _name(self, node: ast.Name) -> None:
        if not isinstance(node.ctx, ast.Load):
            return
        parent = self.parents.get(node)
        if node.id in self.modules:
            if not (isinstance(parent, ast.Attribute) and parent.value is node):
                self.add(node, "module_value", module=node.id)
            return
        if node.id in self.bound:
            return
        if node.id not in _BUILTINS and not _dunder(node.id):
            return  # (a name nothing binds: a NameError, which the grading reports)
        if node.id not in self.allowed.builtins:
            self.add(node, "builtin", name=node.id)
        elif node.id in REFLECTIVE and not (isinstance(parent, ast.Call) and parent.func is node):
            self.add(node, "builtin_value", name=node.id)

    def _attribute(self, node: ast.Attribute) -> None:
        if _dunder(node.attr) and node.attr not in self.allowed.dunders:
            self.add(node, "dunder", attr=node.attr, allowed=", ".join(sorted(self.allowed.dunders)))
        module = self._module_of(node.value)
        if module is None:
            return
        mods = self.allowed.modules
        if f"{module}.{node.attr}" in mods:
            return  # concurrent.futures: its names are checked one level up
        if module not in mods:
            self.add(node, "module", name=f"{module}.{node.attr}", allowed=", ".join(mods))
        elif not _takes(mods[module], node.attr):
            self.add(node, "name", module=module, name=node.attr, allowed=_listed(mods[module]))

    def _module_of(self, node: ast.AST) -> str | None:
        """The module an expression names (``threading``, ``concurrent.futures``), or None."""
        if isinstance(node, ast.Name) and node.id in self.modules:
            return self.modules[node.id]
        if isinstance(node, ast.Attribute):
            outer = self._module_of(node.value)
            if outer is not None and f"{outer}.{node.attr}" in self.allowed.modules:
                return f"{outer}.{node.attr}"
        return None

    def _call(self, node: ast.Call) -> None:
        f = node.func
        if isinstance(f, ast.Name) and f.id in REFLECTIVE and f.id not in self.bound:
            self._reflective(node, f.id)
        elif isinstance(f, ast.Attribute) and f.attr in ("format", "format_map"):
            template = f.value
            if not (isinstance(template, ast.Constant) and isinstance(template.value, str)):
                if not self._module_of(template):
                    self.add(node, "format_computed", method=f.attr)
                return
            for field in _FIELD.findall(template.value):
                if "." in field or "[" in field:
                    self.add(node, "format_field", field="{" + field + "}")

    def _reflective(self, node: ast.Call, name: str) -> None:
        args = node.args
        own = bool(args) and isinstance(args[0], ast.Name) and args[0].id in OWN
        if name == "type":
            if len(args) > 1:
                self.add(node, "type_three")
            return
        if name == "vars":
            if args and not own:
                self.add(node, "not_own", name=name)
            return
        attr = args[1] if len(args) > 1 else None
        if isinstance(attr, ast.Constant) and isinstance(attr.value, str):
            if _dunder(attr.value) and attr.value not in self.allowed.dunders:
                self.add(node, "dunder", attr=attr.value, allowed=", ".join(sorted(self.allowed.dunders)))
            module = self._module_of(args[0]) if args else None
            if module is not None:
                self.add(node, "module_value", module=module)
        elif not own:
            self.add(node, "computed", name=name)


def _takes(names: frozenset[str] | str, name: str) -> bool:
    return not name.startswith("_") if names == ALL else name in names


def _dunder(name: str) -> bool:
    return name.startswith("__") and name.endswith("__") and len(name) > 4


def _bindings(tree: ast.Module):
    """(node, name) for every name the cell binds anywhere (assigned, defined, an argument,
    imported, caught, matched, declared global or nonlocal): such a name is the cell's own."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            yield node, node.id
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            yield node, node.name
        elif isinstance(node, ast.arg):
            yield node, node.arg
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for a in node.names:
                yield node, (a.asname or a.name).split(".")[0]
        elif isinstance(node, ast.ExceptHandler) and node.name:
            yield node, node.name
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            for name in node.names:
                yield node, name
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            yield node, node.name
        elif isinstance(node, ast.MatchMapping) and node.rest:
            yield node, node.rest
