# Two commands for everyone: `make book` builds the site, `make test` runs every check.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
VENDOR := book/_static/vendor/.complete
BUILD  := $(VENV)/bin/jupyter-book build . --all -W -n --keep-going
SCAN   := $(PY) -m specdec_course.coursework scan  # fails on any assignment solution or hidden test in a site
FRESH  := rm -rf _build/html _build/jupyter_execute  # no stale pages from renamed chapters

.PHONY: book test lab notebooks clean vendor book-student models

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

test: $(STAMP) $(VENDOR)
	$(FRESH)
	$(BUILD)
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
	$(PY) -m specdec_lib.train
