# benchdash: `make demo` serves the dashboard with the demo data; `make test` runs the tests (those needing
# PostgreSQL, Redis or MariaDB only when DATABASE_URL / REDIS_URL name them: skipped and counted otherwise).
# bash for PIPESTATUS: the install's progress is filtered from pip's output without losing pip's exit status.
SHELL := /bin/bash
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
HOST ?= 127.0.0.1
PORT ?= 8000
# Test processes (pytest-xdist): two per core, at most 8 (each starts its own servers, workers and browser). The
# tests spend much of their time waiting on what they start (gunicorn, Celery workers, Chromium, sysbench, the
# databases), so a 2-core machine runs the suite in about half the time with 4 processes as with 2; an idle one
# takes tests queued for a busy one. `make test TEST_WORKERS=0` runs them in this process.
TEST_WORKERS ?= $(shell n=$$(nproc 2>/dev/null || echo 2); n=$$((n * 2)); [ "$$n" -gt 8 ] && n=8; echo $$n)

.PHONY: install demo serve test lint format lock migrate clean

install: $(VENV)/.installed

# The Python packages of both locks, hashes checked (requirements.txt: runtime, what the image installs;
# requirements-dev.txt: tests and tools); plotly.js's cartesian bundle and axe-core (the browser tests' accessibility
# check), pinned by package.json and package-lock.json, into $(VENV)/js with npm when the machine has it. Without npm the pages are served the plotly package's full
# plotly.js instead: the same charts, a 4.8 MB script rather than 1.5 MB (`manage.py check` says which).
$(VENV)/.installed: requirements.txt requirements-dev.txt package.json package-lock.json
	@echo "installing the pinned dependencies into $(VENV)/ (the first time takes a few minutes)"
	@$(PYTHON) -m venv $(VENV)
	@$(BIN)/python -m pip install --quiet --upgrade pip
	@$(BIN)/python -m pip install --progress-bar off --require-hashes -r requirements.txt -r requirements-dev.txt \
	  | awk '/^Collecting /{n++; sub(/^Collecting /,""); sub(/ \(from .*/,""); printf "  %3d %s\n", n, $$0; fflush()} \
	         /^Successfully installed/{print "  installed " NF-2 " packages"; fflush()}'; test "$${PIPESTATUS[0]}" = 0
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

# Quiet on purpose: the login load_demo prints last must not scroll away under task logs. Links in write-ups and
# alerts point at this server (BENCHDASH_BASE_URL follows HOST and PORT unless set), and "serving on" is printed
# once the port answers, not before; runserver's own banner is left out (its request lines still show).
DEMO_BASE_URL = $${BENCHDASH_BASE_URL:-http://$(HOST):$(PORT)}
demo: migrate
	@BENCHDASH_BASE_URL=$(DEMO_BASE_URL) LOG_LEVEL=WARNING $(BIN)/python manage.py load_demo
	@BENCHDASH_BASE_URL=$(DEMO_BASE_URL) $(BIN)/python manage.py runserver $(HOST):$(PORT) --noreload --skip-checks >/dev/null & \
	server=$$!; trap 'kill $$server 2>/dev/null; wait $$server; exit 0' INT TERM; \
	until (exec 3<>/dev/tcp/$(HOST)/$(PORT)) 2>/dev/null; do \
	  kill -0 $$server 2>/dev/null || { wait $$server; exit 1; }; sleep 0.2; \
	done; \
	echo "benchdash is serving on http://$(HOST):$(PORT)/ (Ctrl-C stops it)"; wait $$server

serve: migrate
	$(BIN)/python manage.py runserver $(HOST):$(PORT)

# Without DATABASE_URL / REDIS_URL the tests that need PostgreSQL, Redis or MariaDB are skipped; the summary's
# last lines count them (conftest.py). Bytecode is written even where PYTHONDONTWRITEBYTECODE is set: the
# servers, workers and commands the tests start would otherwise each compile the whole project again.
test: install
	env -u PYTHONDONTWRITEBYTECODE $(BIN)/python -m pytest -n $(TEST_WORKERS) --dist worksteal

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

# Re-lock after changing requirements.in or requirements-dev.in: pins and hashes, keeping the pins that still
# fit (`make lock LOCK_ARGS=--upgrade` moves everything to the newest versions).
LOCK = $(BIN)/pip-compile --quiet --generate-hashes --strip-extras --no-header --no-emit-index-url --no-emit-find-links $(LOCK_ARGS)
lock: install
	$(LOCK) --output-file requirements.txt requirements.in
	$(LOCK) --output-file requirements-dev.txt requirements-dev.in
	sed -i '1i # Locked by `make lock` from requirements.in with every file'"'"'s hash; the runtime lock: what production installs (the image, docs/deployment.md).' requirements.txt
	sed -i '1i # Locked by `make lock` from requirements-dev.in with every file'"'"'s hash; the development lock: tests, lint, type checks, `make lock` (with requirements.txt: `make install`).' requirements-dev.txt

clean:
	rm -rf $(VENV) var staticfiles .pytest_cache .ruff_cache .mypy_cache
