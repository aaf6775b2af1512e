# Two entry points: `make run` (the main job) and `make test`. Both build .venv when missing.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
# The local CPU torch wheel lives in /opt/wheels on our machines; the constraints file keeps
# every resolver from pulling a CUDA build of torch.
PIP_FLAGS := --constraint constraints.txt $(if $(wildcard /opt/wheels),--find-links /opt/wheels,)

# The modules mypyc compiles (card_envs/compiled.py lists them): `make build` recompiles them in
# place when one has changed, and every target that runs the package builds first.
COMPILED_SOURCES := $(shell $(PYTHON) card_envs/compiled.py)
MANIFEST := card_envs/_compiled.json

.PHONY: run demo build test test-pure test-install test-marl test-rllib test-rllib-cluster test-browser mutation lint
.PHONY: bench docs docs-serve
.PHONY: release clean

# The environment, with the package linked in plain Python (the build below compiles it).
$(VENV)/.installed: pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip
	$(PIP) install --quiet $(PIP_FLAGS) torch==2.13.0
	rm -f $(MANIFEST)  # this install links the sources: the build below runs again
	CARD_ENVS_PURE_PYTHON=1 $(PIP) install --quiet $(PIP_FLAGS) -e ".[train,dev,bench,docs,render,play,analysis]"
	touch $@

# mypy (and so mypyc) and setuptools are in .venv: no isolated build environment is needed.
$(MANIFEST): $(VENV)/.installed setup.py $(COMPILED_SOURCES)
	$(PIP) install --quiet --no-deps --no-build-isolation -e .
	touch $@

build: $(MANIFEST)

run: build
	$(PY) -m training.train --config configs/roy.yaml

demo: build
	$(PY) -m card_envs.demo --game roy --games 2000

test: build
	$(PY) -m pytest -n 2 --durations=15

# The same tests on the plain-Python modules (what an install without a C compiler runs), but
# those marked same_in_either_build (lint; the trainer's locks, write faults and devices), which
# make test runs: no engine build can change them, and they are a third of the suite's time.
test-pure: $(VENV)/.installed
	CARD_ENVS_PURE_PYTHON=1 $(PY) -m pytest -n 2 \
		-m 'not slow and not install and not browser and not cluster and not same_in_either_build'

# What `pip install "card-envs[train]"` gives a user: the wheel built from the sdist, installed
# with its extra into a fresh virtualenv, then card-envs games, train, --resume and evaluate
# from an empty directory (tests/test_install.py; minutes, so not in `make test`).
test-install: $(VENV)/.installed
	$(PY) -m pytest -m install -n 0 tests/test_install.py

# The play app in a real Chromium (Debian's, from apt) driven by Playwright: a person's game of
# every game by clicks, a watched game, a replay, bad requests (.ci/browser.sh; 2-3 minutes).
test-browser: build
	bash .ci/browser.sh

# The RL libraries our users bring, each for real in its own cached virtualenv: TorchRL,
# Tianshou, AgileRL, SuperSuit + MaskablePPO, and the lowest PettingZoo we support
# (.ci/libraries.sh; `make test-marl STEPS=torchrl` runs one).
test-marl:
	bash .ci/libraries.sh $(STEPS)

# Ray RLlib (the [rllib] extra) in its own cached virtualenv: the MultiAgentEnv adapter on every
# game, the masked module, its export played without Ray, sampling with the EnvRunner.
test-rllib:
	bash .ci/libraries.sh rllib

# A real two-node Ray cluster on this host (one CPU per node), in the rllib virtualenv: env
# runners on different nodes, a self-play run killed and resumed, evaluated without Ray
# (tests/libraries/test_rllib_cluster.py; every process of the cluster is gone afterwards).
test-rllib-cluster:
	bash .ci/libraries.sh rllib-cluster

# The tests' own test: every planted bug in benchmarks/mutation/catalog.py must fail a test.
mutation: $(VENV)/.installed
	$(PY) benchmarks/mutation/run.py

lint: $(VENV)/.installed
	$(VENV)/bin/ruff check .
	$(PY) -m mypy

bench: build
	$(PY) benchmarks/throughput.py

# The documentation site (mkdocs.yml) into site/: offline, and strict, so a broken link, anchor
# or API cross-reference, or a page missing from the nav, fails it. The game pages' tables are
# generated from the engines (docs/_hooks/game_pages.py), which run as plain Python here.
DOCS_ENV := CARD_ENVS_PURE_PYTHON=1 NO_MKDOCS_2_WARNING=1
docs: $(VENV)/.installed
	$(DOCS_ENV) $(VENV)/bin/mkdocs build --strict

docs-serve: $(VENV)/.installed
	$(DOCS_ENV) $(VENV)/bin/mkdocs serve

# The sdist and both wheels (compiled, plain Python) into dist/, twine check, and an install of
# each in a fresh virtualenv that makes and steps every env. No upload (docs/versioning.md).
release: $(VENV)/.installed
	$(PY) tools/release.py

clean:
	rm -rf $(VENV) build dist site *.egg-info $(MANIFEST)
	find card_envs -name '*.so' -delete -o -name '*.pyd' -delete
	rm -f card_envs_native__mypyc.*
