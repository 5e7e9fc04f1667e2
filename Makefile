# Two commands for everyone: `make book` builds the site, `make test` runs every check (what CI runs).
# `make check` is a contributor's quick loop after each edit (under a minute): lint, types, the
# library's tests and doctests, and every test outside the build, browser, grading and slow tiers.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
VENDOR := book/_static/vendor/.complete
BUILD  := $(VENV)/bin/jupyter-book build . --all -W -n --keep-going
SCAN   := $(PY) -m specdec_course.coursework scan  # fails on any assignment solution or hidden test in a site
FRESH  := rm -rf _build/html _build/jupyter_execute  # no stale pages from renamed chapters
# The test build reads the chapters' committed outputs instead of executing them (see `test`).
COMMITTED := _build/committed/_config.yml

.PHONY: book test check lint lab notebooks clean vendor book-student models

# Reinstall only when the pinned requirements or the package metadata change.
$(STAMP): requirements.txt pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements.txt
	$(PY) -m pip install --quiet --disable-pip-version-check --no-deps -e .
	touch $(STAMP)

# MathJax, require.js and the widget embedder, pinned in package-lock.json, served by the site itself.
$(VENDOR): package.json package-lock.json tools/vendor_assets.sh
	sh tools/vendor_assets.sh

vendor: $(VENDOR)

book: $(STAMP) $(VENDOR)
	$(FRESH)
	$(BUILD)
	$(SCAN) _build/html
	@echo "Open $(CURDIR)/_build/html/index.html"

# ruff (lint and format, notebooks included) and mypy (specdec_lib; configured in pyproject.toml).
lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy

check: lint
	$(PY) -m pytest -m "not (build or browser or grading or slow)" tests specdec_lib specdec_course

# Each notebook is executed once per `make test`: nbval (in pytest) runs every chapter and assignment
# and compares each output with the committed one, so the site is built from those committed outputs
# with execution off rather than executing everything a second time; what the build-tier tests read
# is what nbval checked (a stale output fails nbval, hence `make test`). `make book` still executes
# every chapter (execute_notebooks: force), so a reader's site is always recomputed.
test: lint $(VENDOR)
	$(FRESH)
	mkdir -p $(dir $(COMMITTED))
	sed 's/^\(  execute_notebooks:\) force$$/\1 "off"/' _config.yml > $(COMMITTED)
	grep -q '^  execute_notebooks: "off"$$' $(COMMITTED)  # fails if _config.yml no longer says force
	$(BUILD) --config $(COMMITTED)
	$(PY) -m pytest

# JupyterLab on the course, reachable from this machine only. Another port: make lab PORT=8890.
# Root (containers, cloud notebook VMs) gets --allow-root; everyone else runs without it.
PORT      ?= 8888
LAB_FLAGS := --ip=127.0.0.1 --port=$(PORT) --port-retries=0 $(if $(filter 0,$(shell id -u)),--allow-root)
lab: $(STAMP)
	@echo "JupyterLab: open the http://127.0.0.1:$(PORT)/lab?token=... link printed below, then book/mechanism.ipynb."
	$(VENV)/bin/jupyter lab $(LAB_FLAGS)

notebooks: $(STAMP)
	$(PY) -m specdec_course.notebooks

# The student edition of the site: the same book with every exercise solution left out.
book-student: $(STAMP) $(VENDOR)
	mkdir -p _build/student
	$(PY) -m specdec_course.coursework site-config > _build/student/_config.yml
	$(BUILD) --config _build/student/_config.yml --path-output _build/student
	$(SCAN) _build/student/_build/html
	@echo "Open $(CURDIR)/_build/student/_build/html/index.html"

clean:
	rm -rf _build

# Retrain the shipped target and drafts (deterministic; JAX on CPU, tens of minutes). Never needed by book or test.
models: $(STAMP)
	$(PY) -m pip install --quiet --disable-pip-version-check -e ".[train]"
	$(PY) -m specdec_course.train_models
