"""The student's setup in the release (fast, no browser): requirements pinned as the kit pins them,
the guide and requirements shipped beside the notebooks, and ``python -m ch13lib.env`` telling a
good environment from a bad one."""

from __future__ import annotations

import ast
import importlib.metadata as md
import os
import re
import subprocess
import sys
import tomllib

import nbformat
import pytest

from kit import ASSIGNMENT, ROOT, source_ch13lib

SOURCE = source_ch13lib()  # ch13lib: the copy beside the notebooks
from ch13lib.env import read_pins  # noqa: E402

STDLIB = set(sys.stdlib_module_names)


def kit_pins() -> dict[str, str]:
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        deps = tomllib.load(f)["project"]["dependencies"]
    out = {}
    for dep in deps:
        name, _, version = dep.partition("==")
        out[name.strip().lower()] = version.strip()
    return out


def test_student_requirements_match_the_kit_pins():
    student, kit = read_pins(os.path.join(SOURCE, "requirements.txt")), kit_pins()
    assert student, "requirements.txt pins nothing"
    for name, version in student.items():
        assert name in kit, f"requirements.txt pins {name}, which pyproject.toml does not"
        assert kit[name] == version, f"{name}: requirements.txt pins {version}, pyproject.toml {kit[name]}"
    for needed in ("jupyterlab", "numpy", "numba", "torch", "ray"):
        assert needed in student, f"students need {needed}"


def imported_modules() -> set[str]:
    """Top-level modules imported by ch13lib and by the code cells of the notebooks students run."""
    sources = []
    for folder, _, files in os.walk(os.path.join(SOURCE, "ch13lib")):
        sources += [open(os.path.join(folder, f), encoding="utf-8").read() for f in files if f.endswith(".py")]
    for name in os.listdir(SOURCE):
        if name.endswith(".ipynb"):
            nb = nbformat.read(os.path.join(SOURCE, name), as_version=4)
            sources += [
                "\n".join(line for line in c.source.splitlines() if not line.lstrip().startswith(("%", "!")))
                for c in nb.cells
                if c.cell_type == "code"
            ]
    mods = set()
    for src in sources:
        for node in ast.walk(ast.parse(src)):
            if isinstance(node, ast.Import):
                mods |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                mods.add(node.module.split(".")[0])
    return mods - STDLIB - {"ch13lib", "__future__"}


def test_every_third_party_import_is_in_the_student_requirements():
    pins = read_pins(os.path.join(SOURCE, "requirements.txt"))
    dists = md.packages_distributions()
    covered, todo = set(), list(pins)  # the pins and everything they install, transitively
    while todo:
        name = todo.pop().replace("_", "-")
        if name in covered:
            continue
        covered.add(name)
        try:
            reqs = md.requires(name) or []
        except md.PackageNotFoundError:
            continue
        todo += [re.split(r"[ ;<>=!~\[(]", r, maxsplit=1)[0].lower() for r in reqs if "extra ==" not in r]
    # cupy: GPU only (the requirements file says how to add it); kit: imported by ch13lib only on
    # the grading path, inside the kit's subject process (collective_launch's audited workers)
    optional = {"cupy", "kit"}
    missing = []
    for mod in sorted(imported_modules() - optional):
        names = {d.lower().replace("_", "-") for d in dists.get(mod, [mod])}
        if not names & covered:
            missing.append(f"{mod} (from {sorted(names)})")
    assert not missing, f"imported by the notebooks or ch13lib but not in requirements.txt: {missing}"


def test_release_ships_the_setup_files(course):
    release = course.path("release", ASSIGNMENT)
    for name in (
        "requirements.txt",
        "README_STUDENTS.md",
        os.path.join("ch13lib", "env.py"),
        os.path.join("ch13lib", "cuda_env.py"),
    ):
        assert os.path.isfile(os.path.join(release, name)), f"{name} is not in the release"
    guide = open(os.path.join(release, "README_STUDENTS.md"), encoding="utf-8").read()
    assert re.search(r"[\u4e00-\u9fff]", guide) and "requirements.txt" in guide and "ch13lib.env" in guide


def _student_python(folder: str, *args: str, **env_set: str) -> subprocess.CompletedProcess:
    """`python *args` in ``folder`` as a student runs it: none of the kit's, nbgrader's or numba's
    variables in the environment but ``env_set``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NUMBA_", "CH13_", "NBGRADER_"))}
    return subprocess.run(
        [sys.executable, *args], cwd=folder, env={**env, **env_set}, capture_output=True, text=True, timeout=120
    )


def test_env_check_passes_in_this_environment(course):
    release = course.path("release", ASSIGNMENT)
    done = _student_python(release, "-m", "ch13lib.env")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "✘" not in done.stdout and "setup OK" in done.stdout
    assert "numba" not in done.stderr
    # the CUDA backend is reported without importing numba, and without a GPU it is the simulator
    from ch13lib.cuda_env import gpu_present

    if not gpu_present():
        assert "simulator" in done.stdout


def test_env_check_flags_a_wrong_pin_and_a_missing_package(tmp_path):
    req = tmp_path / "requirements.txt"
    req.write_text("numpy==0.0.1\nno-such-package-ch13==1.0\n# torch==9.9 commented out\n", encoding="utf-8")
    done = _student_python(SOURCE, "-m", "ch13lib.env", str(req))
    assert done.returncode == 1, done.stdout + done.stderr
    assert re.search(r"✘ numpy \S+: the course pins 0\.0\.1", done.stdout), done.stdout
    assert "✘ no-such-package-ch13: not installed" in done.stdout, done.stdout
    assert "torch==9.9" not in done.stdout


@pytest.mark.parametrize("env_value, expect", [("1", "simulator"), ("0", "real GPU")])
def test_env_check_respects_an_explicit_backend(tmp_path, env_value, expect):
    check = "from ch13lib.env import check_setup; check_setup()"
    done = _student_python(SOURCE, "-c", check, NUMBA_ENABLE_CUDASIM=env_value)
    assert expect in done.stdout, done.stdout
