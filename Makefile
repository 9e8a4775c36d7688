# benchdash: `make demo` serves the dashboard with the demo data; `make test` runs every test.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
HOST ?= 127.0.0.1
PORT ?= 8000
# Test processes (pytest-xdist): one per core, at most 4 (each starts its own servers, workers and browser), an idle
# one taking tests queued for a busy one; `make test TEST_WORKERS=0` runs them in this process.
TEST_WORKERS ?= $(shell n=$$(nproc 2>/dev/null || echo 2); [ "$$n" -gt 4 ] && n=4; echo $$n)

.PHONY: install demo serve test lint format lock migrate clean

install: $(VENV)/.installed

# The Python packages from requirements.txt; plotly.js's cartesian bundle (package.json, package-lock.json) into
# $(VENV)/js with npm when the machine has it. Without npm the pages are served the plotly package's full
# plotly.js instead: the same charts, a 4.8 MB script rather than 1.5 MB (`manage.py check` says which).
$(VENV)/.installed: requirements.txt package.json package-lock.json
	@echo "installing the pinned dependencies into $(VENV)/"
	@$(PYTHON) -m venv $(VENV)
	@$(BIN)/python -m pip install --quiet --upgrade pip
	@$(BIN)/python -m pip install --quiet -r requirements.txt
	@if command -v npm >/dev/null 2>&1; then \
	  mkdir -p $(VENV)/js && cp package.json package-lock.json $(VENV)/js/ && \
	  npm ci --prefix $(VENV)/js --no-audit --no-fund --loglevel=error >/dev/null \
	  || echo "npm ci failed: the pages will use the plotly package's full plotly.js"; \
	else echo "npm not found: the pages will use the plotly package's full plotly.js (4.8 MB, not the 1.5 MB cartesian bundle)"; fi
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
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist worksteal

# Style, types (the application code, settings in pyproject.toml), the apps' layering contract and the
# complexity budget (no new function over 15, the baseline's may only shrink: .ci/complexity.py).
lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports --no-cache
	$(BIN)/python .ci/complexity.py

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
