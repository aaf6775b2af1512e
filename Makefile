# Two entry points: `make run` (the main job) and `make test`. Both build .venv when missing.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
# The local CPU torch wheel lives in /opt/wheels on our machines; the constraints file keeps
# every resolver from pulling a CUDA build of torch.
PIP_FLAGS := --constraint constraints.txt $(if $(wildcard /opt/wheels),--find-links /opt/wheels,)

.PHONY: run demo test mutation lint bench clean

$(VENV)/.installed: pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip
	$(PIP) install --quiet $(PIP_FLAGS) torch==2.13.0
	$(PIP) install --quiet $(PIP_FLAGS) -e ".[train,dev,bench]"
	touch $@

run: $(VENV)/.installed
	$(PY) -m training.train --config configs/roy.yaml

demo: $(VENV)/.installed
	$(PY) -m card_envs.demo --game roy --games 2000

test: $(VENV)/.installed
	$(PY) -m pytest -n 2 --durations=15

# The tests' own test: every planted bug in benchmarks/mutation/catalog.py must fail a test.
mutation: $(VENV)/.installed
	$(PY) benchmarks/mutation/run.py

lint: $(VENV)/.installed
	$(VENV)/bin/ruff check .
	$(PY) -m mypy

bench: $(VENV)/.installed
	$(PY) benchmarks/throughput.py

clean:
	rm -rf $(VENV) build dist *.egg-info
