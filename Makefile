# The two set-up commands of the README: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PORT ?= 8501

.PHONY: run test install samples clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# Reinstall whenever pyproject.toml changes.
$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

install: $(STAMP)

samples: install
	$(BIN)/evalboard samples

run: samples
	$(BIN)/streamlit run app.py --server.address 127.0.0.1 --server.port $(PORT)

test: install
	$(BIN)/python -m pytest

clean:
	rm -rf $(VENV) data/evalboard.db data/evalboard.db-wal data/evalboard.db-shm
