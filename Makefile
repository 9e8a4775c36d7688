# benchdash: `make demo` serves the dashboard with the demo data; `make test` runs every test.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: install demo serve test lint format lock migrate clean

install: $(VENV)/.installed

$(VENV)/.installed: requirements.txt
	@echo "installing the pinned dependencies into $(VENV)/"
	@$(PYTHON) -m venv $(VENV)
	@$(BIN)/python -m pip install --quiet --upgrade pip
	@$(BIN)/python -m pip install --quiet -r requirements.txt
	@touch $@

# The demo's SQLite file lives in var/ (or BENCHDASH_VAR_DIR), which a fresh clone does not have.
migrate: install
	@mkdir -p "$${BENCHDASH_VAR_DIR:-var}"
	@echo "migrating the database"
	@$(BIN)/python manage.py migrate --noinput --verbosity 0

# Quiet on purpose: the login load_demo prints last must not scroll away under task logs.
demo: migrate
	@LOG_LEVEL=WARNING $(BIN)/python manage.py load_demo
	@echo "benchdash is serving on http://$(HOST):$(PORT)/ (Ctrl-C stops it)"
	@$(BIN)/python manage.py runserver $(HOST):$(PORT) --noreload

serve: migrate
	$(BIN)/python manage.py runserver $(HOST):$(PORT)

test: install
	$(BIN)/python -m pytest

# Style, types (the application code, settings in pyproject.toml) and the apps' layering contract.
lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports --no-cache

format: install
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

# Re-pin every dependency from requirements.in (run after changing it).
lock:
	rm -rf .lock-venv && $(PYTHON) -m venv .lock-venv
	.lock-venv/bin/python -m pip install --quiet --upgrade pip
	.lock-venv/bin/python -m pip install --quiet -r requirements.in
	{ echo "# Pinned by 'make lock' from requirements.in: every package the project installs, at one version."; \
	  .lock-venv/bin/python -m pip freeze --exclude pip --exclude setuptools --exclude wheel; } > requirements.txt
	rm -rf .lock-venv

clean:
	rm -rf $(VENV) var staticfiles .pytest_cache .ruff_cache .mypy_cache
