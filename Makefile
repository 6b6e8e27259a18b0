# The two set-up commands of the README: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PORT ?= 8501
# Debian's Chromium renders the PNG figures (through kaleido) and drives the browser tests.
CHROMIUM := /usr/bin/chromium
# 1: fail when Chromium is missing and cannot be installed (CI); otherwise say how to install it and go on.
REQUIRE_CHROMIUM ?= 0
# The installer and the user it runs as; the set-up tests replace them to exercise every branch.
APT_GET ?= apt-get
USER_ID ?= $(shell id -u)
# Hypothesis profile of the tests (tests/conftest.py): dev tries each property on at most 25 examples,
# ci (.ci/run) on as many as each test asks for (up to 300).
HYPOTHESIS_PROFILE ?= dev

.PHONY: run test install chromium samples clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# Reinstall whenever pyproject.toml changes.
$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

install: $(STAMP)

# Installed from Debian when missing and this runs as root; without root (or apt-get) one line says the
# command to run, and the dashboard and tests go on without PNG figures and browser tests.
chromium:
	@if [ -x $(CHROMIUM) ]; then exit 0; fi; \
	if [ "$(USER_ID)" = 0 ] && command -v $(APT_GET) >/dev/null 2>&1; then \
	    echo "Installing Debian's chromium (PNG figures and browser tests need it)…"; \
	    export DEBIAN_FRONTEND=noninteractive; \
	    $(APT_GET) update -qq && $(APT_GET) install -y -qq chromium >/dev/null; \
	fi; \
	if [ ! -x $(CHROMIUM) ]; then \
	    echo "Chromium is missing: run 'sudo apt-get install -y chromium' for PNG figures and the browser tests (going on without them)."; \
	    [ "$(REQUIRE_CHROMIUM)" != 1 ] || exit 1; \
	fi

samples: install
	$(BIN)/evalboard samples

run: samples chromium
	$(BIN)/streamlit run app.py --server.address 127.0.0.1 --server.port $(PORT)

# Lint and import order first (pyproject.toml [tool.ruff]): a second, and it names file and line.
test: install chromium
	$(BIN)/ruff check .
	HYPOTHESIS_PROFILE=$(HYPOTHESIS_PROFILE) $(BIN)/python -m pytest

clean:
	rm -rf $(VENV) data/evalboard.db data/evalboard.db-wal data/evalboard.db-shm
