# Two commands on a fresh machine (Python 3.10+):
#   make run   - create .venv, install the app's pinned packages, start the app
#   make test  - the same plus dev tools and a Chromium, then the whole test suite
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PORT ?= 8501
PYTEST_ARGS ?=

.PHONY: run test lint browser clean

$(PY):
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else "Python 3.10+ is needed")'
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip

# The stamp files are rebuilt whenever the requirement files change.
$(VENV)/.deps: requirements.txt | $(PY)
	$(PY) -m pip install -q -r requirements.txt
	@touch $@

$(VENV)/.dev-deps: requirements.txt requirements-dev.txt | $(PY)
	$(PY) -m pip install -q -r requirements-dev.txt
	@touch $@ $(VENV)/.deps

run: $(VENV)/.deps
	$(PY) -m streamlit run app.py --server.port $(PORT)

browser: $(VENV)/.dev-deps
	bash scripts/ensure_browser.sh $(PY)

lint: $(VENV)/.dev-deps
	$(PY) -m ruff check .

test: $(VENV)/.dev-deps browser
	$(PY) -m ruff check .
	$(PY) -m pytest -n 2 $(PYTEST_ARGS)

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache artifacts
