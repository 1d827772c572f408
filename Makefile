# The two commands of the README: `make demo` (the TA's pipeline on the demo class) and `make test`.
# Both set up what they need first: a venv with the exact pins of pyproject.toml and the kit installed
# in it in editable mode (kit, graders, gpu import from any folder; the stamp is redone when pyproject.toml changes).
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

E2E_APT := chromium fonts-wqy-zenhei

.PHONY: setup demo test test-deep test-fast lint release bench gpu clean e2e-deps e2e

setup: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PYTHON) -c "import tomllib; print('\n'.join(tomllib.load(open('pyproject.toml','rb'))['project']['dependencies']))" > $(VENV)/requirements.txt
	$(PY) -m pip install -q --disable-pip-version-check -r $(VENV)/requirements.txt
	$(PY) -m pip install -q --disable-pip-version-check --no-deps -e .   # the kit itself, editable: import kit, graders, gpu
	touch $(STAMP)

demo: setup            ## generate -> autograde -> feedback -> export on the demo class, then a score table
	$(PY) -m kit.demo

# Two pytest workers, a test file each at a time (module fixtures stay in one process): the serial
# `nbgrader autograde` runs of one file overlap the grading pools of another (2 cores: 67 % -> 97 % busy).
TEST_WORKERS ?= 2

test: setup e2e-deps lint   ## the kit's test suite, the catalogue and the red-team corpus sampled (browser tests required when chromium is here)
	CH13_E2E=$$([ -x /usr/bin/chromium ] && echo require || echo optional) $(PY) -m pytest -q -n $(TEST_WORKERS) --dist loadfile --durations=15 -m "not deep"

test-deep: setup       ## the gradings make test leaves out: every other catalogue answer through the judge and the self-checks, every other red-team case through nbgrader, and the tests marked deep (.ci/run runs it after make test)
	$(PY) -m pytest -q -n $(TEST_WORKERS) --dist loadfile --durations=10 -m "deep or harm" tests/

e2e-deps:              ## Debian's chromium and a CJK font for the browser tests (root; otherwise they skip)
	@if [ -x /usr/bin/chromium ] && [ -e /usr/share/fonts/truetype/wqy/wqy-zenhei.ttc ]; then :; \
	elif [ "$$(id -u)" = 0 ]; then apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $(E2E_APT); \
	else echo "e2e: not root and no chromium: the browser tests will skip (apt-get install $(E2E_APT))"; fi

e2e: setup e2e-deps    ## only the browser tests, screenshots under out/e2e/
	CH13_E2E=require $(PY) -m pytest -q tests/e2e

lint: setup            ## ruff: the formatter and a small rule set (pyproject.toml), on the kit's own code
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/ruff check .

test-fast: setup       ## everything but the slow tests (full gradings, nbgrader, real worlds, Ray)
	$(PY) -m pytest -q -n $(TEST_WORKERS) --dist loadfile -m "not slow and not deep"

release: setup         ## regenerate release/ and solutions/ from source/ (commit the result)
	$(PY) -m kit.release

bench: setup           ## grading-time benchmarks (prints figures, asserts nothing)
	for b in bench/bench_*.py; do $(PY) $$b || exit 1; done

gpu: setup             ## every exercise's GPU path; says so and exits 0 without a GPU
	$(PY) -m gpu

clean:
	rm -rf autograded/*/ feedback submitted gradebook.db grades.csv out
