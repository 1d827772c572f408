"""Self-check for the quiz: right or wrong per question, without the answers in the release.

Each answer is put in a canonical form and compared by salted SHA-256 with the stored digest of
the right one. Short answers (a letter per term) can still be found by trying every option: the
self-check tells you no more than a teacher who says "not yet" would. The hidden grader decides.
"""

from __future__ import annotations

import hashlib

from ch13lib.lang import Messages

SALT = "ch13-04 quiz v1"
DIGESTS = {
    "q1": "69b4a26631f52d04125fecec3558110a8913cffd91a77de388172e3f8e90d774",
    "q2": "3daba8199845aeecc42c682bf11cf802f4b4c4d57560978f657157473f981f21",
    "q3": "76af9de8b89ace1dc7e2ccf39d78a824a454868054d77eaf52c89c4649fe8aa1",
    "q4": "4716b70a29c1939de7c3f93ec4536983ae481f57bd3b46695682d8c476c368df",
    "q5": "7abd14b4b7362daa3d68963f5cf29557369c497323e3d30b8be9bd402387108c",
}
# What the self-check says, in the course's language (ch13lib/lang.py); HINT: the form each answer takes.
HINT = Messages(
    q1=(
        "S(n) = 1 / ((1 - p) + p / n); 一个浮点数, 保留两位小数即可",
        "S(n) = 1 / ((1 - p) + p / n); a float, two decimals are enough",
    ),
    q2=(
        '一个字典 {{"deadlock": 字母, "livelock": 字母, "starvation": 字母}}, 字母为 "A", "B", "C"',
        'a dict {{"deadlock": letter, "livelock": letter, "starvation": letter}}, letters "A", "B", "C"',
    ),
    q3=(
        '一个字典 {{"order": [4 个名字, 从小到大], "warp_size": int, "shared_memory_scope": 名字}}',
        'a dict {{"order": [4 names, smallest first], "warp_size": int, "shared_memory_scope": name}}',
    ),
    q4=(
        '一个字典 {{"allreduce": "all" 或 "root", "reduce": "all" 或 "root"}}',
        'a dict {{"allreduce": "all" or "root", "reduce": "all" or "root"}}',
    ),
    q5=("每块 GPU 上 FP16 参数的 GB 数, 一个浮点数", "GB of FP16 parameters per GPU, a float"),
)
M = Messages(
    unanswered=("… {name}: 尚未作答 — 应为 {hint}", "… {name}: not answered yet — expected {hint}"),
    wrong_form=("✘ {name}: 格式不对 — 应为 {hint}", "✘ {name}: wrong form — expected {hint}"),
    right=("✔ {name}: 正确", "✔ {name}: right"),
    not_right=("✘ {name}: 还不对 — 再想想", "✘ {name}: not right yet — think again"),
    amdahl_stub=("… amdahl_speedup: 尚未实现", "… amdahl_speedup: not implemented yet"),
    amdahl_raised=(
        "✘ amdahl_speedup({p}, {n}) 抛出了 {error}: {text}",
        "✘ amdahl_speedup({p}, {n}) raised {error}: {text}",
    ),
    amdahl_wrong=(
        "✘ amdahl_speedup({p}, {n}) = {got}, 应为 {want}",
        "✘ amdahl_speedup({p}, {n}) = {got}, expected {want}",
    ),
    amdahl_right=("✔ amdahl_speedup({p}, {n}) = {got} (正确)", "✔ amdahl_speedup({p}, {n}) = {got}"),
    amdahl_no_raise=(
        "✘ amdahl_speedup({p}, {n}) 应当抛出 ValueError",
        "✘ amdahl_speedup({p}, {n}) should raise ValueError",
    ),
    amdahl_raises=("✔ amdahl_speedup({p}, {n}) 抛出 ValueError", "✔ amdahl_speedup({p}, {n}) raises ValueError"),
    amdahl_other=(
        "✘ amdahl_speedup({p}, {n}) 抛出了 {error}, 应为 ValueError",
        "✘ amdahl_speedup({p}, {n}) raised {error}, expected ValueError",
    ),
)


def canonical(name: str, value) -> str:
    """The form that is hashed: rounding for floats, normalised strings for the rest."""
    if name == "q1":
        return f"{round(float(value), 2):.2f}"
    if name == "q5":
        return f"{round(float(value), 1):.1f}"
    if name == "q2":
        return ",".join(f"{k}={str(value[k]).strip().upper()}" for k in ("deadlock", "livelock", "starvation"))
    if name == "q3":
        order = "<".join(str(x).strip().lower() for x in value["order"])
        return f"{order}|{int(value['warp_size'])}|{str(value['shared_memory_scope']).strip().lower()}"
    if name == "q4":
        return ",".join(f"{k}={str(value[k]).strip().lower()}" for k in ("allreduce", "reduce"))
    raise KeyError(name)


def digest(name: str, value) -> str:
    return hashlib.sha256(f"{SALT}|{name}|{canonical(name, value)}".encode()).hexdigest()


def check(**answers) -> dict[str, bool | None]:
    """check(q1=q1, ..., q5=q5): prints ✔ / ✘ per question and returns {name: right?}."""
    verdicts: dict[str, bool | None] = {}
    for name in sorted(DIGESTS):
        if name not in answers or answers[name] is None or answers[name] is ...:
            verdicts[name] = None
            print(M("unanswered", name=name, hint=HINT.both(name)))
            continue
        try:
            right = digest(name, answers[name]) == DIGESTS[name]
        except (KeyError, TypeError, ValueError, AttributeError):
            verdicts[name] = False
            print(M("wrong_form", name=name, hint=HINT.both(name)))
            continue
        verdicts[name] = right
        print(M("right" if right else "not_right", name=name))
    return verdicts


def check_amdahl(amdahl_speedup) -> bool:
    """A few fixed properties of amdahl_speedup(p, n); the hidden tests check many more inputs."""
    cases = [((0.9, 10), 1 / (0.1 + 0.09)), ((0.95, 100), 1 / (0.05 + 0.0095)), ((0.0, 8), 1.0), ((1.0, 8), 8.0)]
    ok = True
    for (p, n), want in cases:
        try:
            got = amdahl_speedup(p, n)
        except NotImplementedError:
            print(M("amdahl_stub"))
            return False
        except Exception as e:
            print(M("amdahl_raised", p=p, n=n, error=type(e).__name__, text=e))
            ok = False
            continue
        if not isinstance(got, (int, float)) or abs(got - want) > 1e-9 * want:
            print(M("amdahl_wrong", p=p, n=n, got=repr(got), want=f"{want:.6g}"))
            ok = False
        else:
            print(M("amdahl_right", p=p, n=n, got=f"{got:.4g}"))
    for p, n in [(1.5, 4), (0.5, 0)]:
        try:
            amdahl_speedup(p, n)
            print(M("amdahl_no_raise", p=p, n=n))
            ok = False
        except ValueError:
            print(M("amdahl_raises", p=p, n=n))
        except Exception as e:
            print(M("amdahl_other", p=p, n=n, error=type(e).__name__))
            ok = False
    return ok
