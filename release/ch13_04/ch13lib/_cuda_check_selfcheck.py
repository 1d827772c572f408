"""The notebooks' self-check runner (a part of :mod:`ch13lib.cuda_check`): the stub test, the
✔/✘ line of each check run here on the checking simulator, the picture of the first fault, and one
line instead while nbgrader grades. The cases each notebook runs are ``cuda_check.self_check_*``.
"""

from __future__ import annotations

from ch13lib._cuda_check_observe import CheckFailed, local
from ch13lib.cuda_sim import python_function
from ch13lib.lang import FRAME, Messages, Once

# What the runner says around the checks' own messages (ch13lib/lang.py).
M = Messages(
    title=("{grade_id} 自检 (检查模拟器):", "{grade_id} self-check (checking simulator):"),
    stubs=(
        "✘ 尚未实现: {names} 仍在抛出 NotImplementedError (占位代码)。写好它, 运行该单元, 再运行本自检。",
        "✘ not implemented yet: {names} still raise NotImplementedError (the stub). Write them, run the cell, "
        "then run this check again.",
    ),
    stub_case=(
        "尚未实现 (占位代码仍在抛出 NotImplementedError)",
        "not implemented yet (the stub still raises NotImplementedError)",
    ),
    crashed=("你的代码抛出了 {name}: {error}", "your code raised {name}: {error}"),
    picture=(
        "下图显示到第一个 ✘ 的错误为止, 哪个线程访问了哪个元素:",
        "The picture below shows which thread touched which element up to that fault (the first ✘):",
    ),
)


def _grading_line(name) -> bool:
    """While nbgrader autograde runs the notebook, print one line and stand aside."""
    from ch13lib import grading

    if grading():
        print(f"{name}: " + FRAME("skipped"))
        return True
    return False


def _is_stub(node) -> bool:
    """A def whose body is nothing but ``raise NotImplementedError()`` (after a docstring or ``pass``)."""
    import ast

    body = [
        st
        for st in node.body
        if not (isinstance(st, ast.Expr) and isinstance(st.value, ast.Constant)) and not isinstance(st, ast.Pass)
    ]
    exc = body[0].exc if len(body) == 1 and isinstance(body[0], ast.Raise) else None
    exc = exc.func if isinstance(exc, ast.Call) else exc
    return isinstance(exc, ast.Name) and exc.id == "NotImplementedError"


def _stubs(functions) -> list[str]:
    """Which of ``functions`` (kernels or plain functions) still have the stub's body: what is left to
    write, read from the cell that defined them (none when their source cannot be found)."""
    import ast
    import inspect
    import linecache

    out = []
    for fn in functions:
        try:
            py = python_function(fn)
            code = py.__code__
            lines = linecache.getlines(code.co_filename) or inspect.findsource(py)[0]
            tree = ast.parse("".join(lines))
        except Exception:  # noqa: BLE001 - no source to read: the checks themselves will tell
            continue
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == py.__name__:
                first = node.decorator_list[0].lineno if node.decorator_list else node.lineno
                if first == code.co_firstlineno:
                    if _is_stub(node):
                        out.append(py.__name__)
                    break
    return out


def _run_checks(title, checks, functions=()) -> bool:
    import contextlib
    import io

    print(title)
    stubs = _stubs(functions)
    if stubs:
        names = " and ".join(f"`{n}`" for n in stubs)
        print("  " + M("stubs", names=names))
        return False
    once = Once()  # cases that fail for one reason explain it once
    ok, lines, picture = True, [], None  # printed at the end: no ✔ for a cell that turns out to be a stub
    for label, fn in checks:
        label = " / ".join(label.splitlines())  # a case's name on its ✔ or ✘ line, both languages on one
        out = io.StringIO()
        try:
            with contextlib.redirect_stdout(out):
                fn()
        except NotImplementedError:
            lines = [line for line in lines if not line.startswith("  ✔")]
            lines.append(f"  ✘ {label}: " + M("stub_case"))
            print("\n".join(lines))
            return False
        except CheckFailed as e:
            lines.append(f"  ✘ {label}: " + once(str(e)).replace("\n", "\n    "))
            ok = False
            if e.accesses and picture is None:
                picture = e  # the first fault is drawn below the text
        except Exception as e:  # noqa: BLE001 - the student's code crashed
            lines.append(f"  ✘ {label}: " + M("crashed", name=type(e).__name__, error=e))
            ok = False
        else:
            lines.append(f"  ✔ {label}")
        if out.getvalue():
            lines.append(out.getvalue().rstrip("\n"))
    print("\n".join(lines))
    print(FRAME("passed") if ok else FRAME("fix"))
    if picture is not None:
        _show_picture(picture)
    return ok


def _show_picture(failed: CheckFailed) -> None:
    """The first fault as a picture: who read and wrote which element, the fault marked."""
    try:
        from ch13lib.pictures import show

        print(M("picture"))
        show(failed.picture)
    except Exception as e:  # noqa: BLE001 - no matplotlib here: the text says it all
        print(FRAME("no_picture", why=type(e).__name__))


def _self_check(grade_id: str, functions: dict, checks) -> bool:
    """A notebook's self-check of ``grade_id``: ``checks(ask)`` (label, check) pairs run on the cell's
    ``functions`` in the checking simulator, after the stub test; steps aside while grading."""
    if _grading_line(grade_id):
        return True
    ask = local(**functions)
    return _run_checks(M("title", grade_id=grade_id), checks(ask), tuple(functions.values()))
