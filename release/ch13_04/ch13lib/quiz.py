"""Self-check for the quiz: right or wrong per question, without the answers in the release.

Each answer is put in a canonical form and compared by salted SHA-256 with the stored digest of
the right one. Short answers (a letter per term) can still be found by trying every option: the
self-check tells you no more than a teacher who says "not yet" would. The hidden grader decides.
"""

from __future__ import annotations

import hashlib

SALT = "ch13-04 quiz v1"
DIGESTS = {
    "q1": "69b4a26631f52d04125fecec3558110a8913cffd91a77de388172e3f8e90d774",
    "q2": "3daba8199845aeecc42c682bf11cf802f4b4c4d57560978f657157473f981f21",
    "q3": "76af9de8b89ace1dc7e2ccf39d78a824a454868054d77eaf52c89c4649fe8aa1",
    "q4": "4716b70a29c1939de7c3f93ec4536983ae481f57bd3b46695682d8c476c368df",
    "q5": "7abd14b4b7362daa3d68963f5cf29557369c497323e3d30b8be9bd402387108c",
}
HINTS = {
    "q1": "S(n) = 1 / ((1 - p) + p / n); a float, two decimals are enough",
    "q2": 'a dict {"deadlock": letter, "livelock": letter, "starvation": letter}, letters "A", "B", "C"',
    "q3": 'a dict {"order": [4 names, smallest first], "warp_size": int, "shared_memory_scope": name}',
    "q4": 'a dict {"allreduce": "all" or "root", "reduce": "all" or "root"}',
    "q5": "GB of FP16 parameters per GPU, a float",
}


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
            print(f"… {name}: not answered yet / 尚未作答 — expected {HINTS[name]}")
            continue
        try:
            right = digest(name, answers[name]) == DIGESTS[name]
        except (KeyError, TypeError, ValueError, AttributeError):
            verdicts[name] = False
            print(f"✘ {name}: wrong form / 格式不对 — expected {HINTS[name]}")
            continue
        verdicts[name] = right
        print(f"✔ {name}: right / 正确" if right else f"✘ {name}: not right yet / 还不对 — think again")
    return verdicts


def check_amdahl(amdahl_speedup) -> bool:
    """A few fixed properties of amdahl_speedup(p, n); the hidden tests check many more inputs."""
    cases = [((0.9, 10), 1 / (0.1 + 0.09)), ((0.95, 100), 1 / (0.05 + 0.0095)), ((0.0, 8), 1.0), ((1.0, 8), 8.0)]
    ok = True
    for (p, n), want in cases:
        try:
            got = amdahl_speedup(p, n)
        except NotImplementedError:
            print("… amdahl_speedup: not implemented yet / 尚未实现")
            return False
        except Exception as e:
            print(f"✘ amdahl_speedup({p}, {n}) raised {type(e).__name__}: {e}")
            ok = False
            continue
        if not isinstance(got, (int, float)) or abs(got - want) > 1e-9 * want:
            print(f"✘ amdahl_speedup({p}, {n}) = {got!r}, expected {want:.6g}")
            ok = False
        else:
            print(f"✔ amdahl_speedup({p}, {n}) = {got:.4g}")
    for p, n in [(1.5, 4), (0.5, 0)]:
        try:
            amdahl_speedup(p, n)
            print(f"✘ amdahl_speedup({p}, {n}) should raise ValueError")
            ok = False
        except ValueError:
            print(f"✔ amdahl_speedup({p}, {n}) raises ValueError")
        except Exception as e:
            print(f"✘ amdahl_speedup({p}, {n}) raised {type(e).__name__}, expected ValueError")
            ok = False
    return ok
