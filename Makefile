# Two commands for everyone: `make book` builds the site, `make test` runs every check.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
BUILD  := $(VENV)/bin/jupyter-book build . --all -W -n --keep-going

.PHONY: book test lab notebooks clean

# Reinstall only when the pinned requirements or the package metadata change.
$(STAMP): requirements.txt pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements.txt
	$(PY) -m pip install --quiet --disable-pip-version-check --no-deps -e .
	touch $(STAMP)

book: $(STAMP)
	$(BUILD)
	@echo "Open $(CURDIR)/_build/html/index.html"

test: $(STAMP)
	$(BUILD)
	$(PY) -m pytest

lab: $(STAMP)
	$(VENV)/bin/jupyter lab book

notebooks: $(STAMP)
	$(PY) -m specdec_lib.notebooks

clean:
	rm -rf _build
