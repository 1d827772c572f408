# The two commands of the README: `make demo` (the TA's pipeline on the demo class) and `make test`.
# Both set up what they need first: a venv with the exact pins of pyproject.toml.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: setup demo test test-fast release bench gpu clean

setup: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PYTHON) -c "import tomllib; print('\n'.join(tomllib.load(open('pyproject.toml','rb'))['project']['dependencies']))" > $(VENV)/requirements.txt
	$(PY) -m pip install -q --disable-pip-version-check -r $(VENV)/requirements.txt
	touch $(STAMP)

demo: setup            ## generate -> autograde -> feedback -> export on the demo class, then a score table
	$(PY) -m kit.demo

test: setup            ## the kit's whole test suite
	$(PY) -m pytest -q

test-fast: setup       ## everything but the slow nbgrader round trips
	$(PY) -m pytest -q -m "not slow"

release: setup         ## regenerate release/ and solutions/ from source/ (commit the result)
	$(PY) -m kit.release

bench: setup           ## grading-time benchmarks (prints figures, asserts nothing)
	for b in bench/bench_*.py; do $(PY) $$b || exit 1; done

gpu: setup             ## every exercise's GPU path; says so and exits 0 without a GPU
	$(PY) -m gpu

clean:
	rm -rf autograded/*/ feedback submitted gradebook.db grades.csv out
