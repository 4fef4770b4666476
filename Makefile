VENV := .venv
PY := $(VENV)/bin/python
INSTALL := $(PY) -m pip install -q
# One stamp per install, so each target installs only what it runs: the demo needs the runtime alone,
# the tests and the benchmark the test extras (the benchmark drives the fake GitHub), lint the linters.
RUNTIME := $(VENV)/.runtime-installed
TEST_EXTRAS := $(VENV)/.test-installed
LINT_EXTRAS := $(VENV)/.lint-installed

.PHONY: demo test soak bench bench-real bench-probe lint clean

$(RUNTIME): pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(INSTALL) -e .
	touch $@

$(TEST_EXTRAS): $(RUNTIME)
	$(INSTALL) -e '.[test]'
	touch $@

$(LINT_EXTRAS): $(RUNTIME)
	$(INSTALL) -e '.[lint]'
	touch $@

demo: $(RUNTIME)
	$(PY) -m tests.demo

test: $(TEST_EXTRAS)
	$(PY) -m pytest -q

soak: $(TEST_EXTRAS)
	$(PY) -m tests.soak

bench: $(TEST_EXTRAS)
	$(PY) -m bench

bench-real: $(TEST_EXTRAS)
	$(PY) -m bench.real_bump

bench-probe: $(TEST_EXTRAS)
	$(PY) -m bench.probe

lint: $(LINT_EXTRAS)
	$(VENV)/bin/ruff format --check bot handlers tests bench
	$(VENV)/bin/ruff check bot handlers tests bench
	$(VENV)/bin/radon cc -a -s -n D bot handlers
	$(VENV)/bin/mypy bot

clean:
	rm -rf $(VENV) var demo-out
