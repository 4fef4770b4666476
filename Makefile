VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test bench lint clean

$(STAMP): pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q -e '.[test,lint]'
	touch $(STAMP)

demo: $(STAMP)
	$(PY) -m bot.demo

test: $(STAMP)
	$(PY) -m pytest -q

bench: $(STAMP)
	$(PY) -m bench

lint: $(STAMP)
	$(VENV)/bin/ruff check bot handlers tests
	$(VENV)/bin/mypy bot

clean:
	rm -rf $(VENV) var
