# socialpub — `make run` serves the API on the embedded default; `make test` runs the suite.
PYTHON ?= python3.11
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: run test test-both test-sqlite test-postgres faults lint fuzz sdk sdk-check bench install clean

$(STAMP): pyproject.toml requirements.lock
	@command -v $(PYTHON) >/dev/null 2>&1 || { echo "Python 3.11 is required ($(PYTHON) not found)"; exit 1; }
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.lock
	$(PY) -m pip install --quiet --no-deps -e .
	@touch $(STAMP)

install: $(STAMP)

# `make run PORT=9000` or `HOST=0.0.0.0 make run` serves elsewhere.
HOST ?= 127.0.0.1
PORT ?= 8000

run: $(STAMP)
	$(VENV)/bin/socialpub db upgrade
	$(VENV)/bin/socialpub demo --base-url http://$(HOST):$(PORT)
	$(VENV)/bin/socialpub serve --host $(HOST) --port $(PORT)

# The suite runs on SQLite with in-process jobs, and on PostgreSQL with Redis and RQ
# when TEST_DATABASE_URL is set or under CI. The two passes run side by side (the
# SQLite pass touches neither PostgreSQL nor Redis); each one's output is printed
# whole when both are done, the PostgreSQL pass last. Each pass target first generates
# the client (`sdk`) that the journeys of tests/sdk drive, and the npm tools are
# installed first: the dashboard's browser test runs axe-core from node_modules.
test: $(STAMP) node_modules/.installed
	@if [ -n "$$TEST_DATABASE_URL" ] || [ "$$CI" = "true" ]; then $(MAKE) --no-print-directory test-both; \
	else $(MAKE) --no-print-directory test-sqlite; echo "TEST_DATABASE_URL not set: PostgreSQL + Redis run skipped"; fi

test-both: $(STAMP) sdk
	@mkdir -p build; \
	SOCIALPUB_TEST_BACKEND=sqlite $(PY) -m pytest $(PYTEST_ARGS) > build/test-sqlite.log 2>&1 & sqlite_pass=$$!; \
	SOCIALPUB_TEST_BACKEND=postgres $(PY) -m pytest $(PYTEST_ARGS) > build/test-postgres.log 2>&1; postgres_status=$$?; \
	wait $$sqlite_pass; sqlite_status=$$?; \
	echo "== SQLite + in-process jobs (exit $$sqlite_status)"; cat build/test-sqlite.log; \
	echo "== PostgreSQL + Redis/RQ (exit $$postgres_status)"; cat build/test-postgres.log; \
	test $$sqlite_status -eq 0 && test $$postgres_status -eq 0

test-sqlite: $(STAMP) sdk
	SOCIALPUB_TEST_BACKEND=sqlite $(PY) -m pytest $(PYTEST_ARGS)

test-postgres: $(STAMP) sdk
	SOCIALPUB_TEST_BACKEND=postgres $(PY) -m pytest $(PYTEST_ARGS)

# The fault suite alone, on PostgreSQL + Redis: slow clients, a Redis and a PostgreSQL
# of the tests' own frozen, stopped and restarted under load, workers killed with
# SIGKILL mid-job, and a crash injected into each kind of job. (These tests also run
# in `make test`.)
TEST_DATABASE_URL ?= postgresql+psycopg://postgres@127.0.0.1:5432/test
TEST_REDIS_URL ?= redis://127.0.0.1:6379/0
FAULT_TESTS := tests/faults tests/publishing/test_crash_safety.py tests/bulk/test_crash_safety.py \
  tests/publishing/test_interrupted_claims.py tests/bulk/test_failing_chunks.py tests/webhooks/test_interrupted_attempts.py \
  tests/workers/test_scheduler.py tests/rss/test_crash_safety.py

faults: $(STAMP)
	SOCIALPUB_TEST_BACKEND=postgres TEST_DATABASE_URL='$(TEST_DATABASE_URL)' TEST_REDIS_URL='$(TEST_REDIS_URL)' \
	  $(PY) -m pytest $(PYTEST_ARGS) $(FAULT_TESTS)

node_modules/.installed: package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	@touch node_modules/.installed

# The source files, then the bundle that is served (socialpub/contract_bundle.py):
# Spectral on both, Redocly's recommended rules (redocly.yaml) on the bundle.
lint: $(STAMP) node_modules/.installed
	npx --no-install spectral lint openapi/openapi.yaml --ruleset .spectral.yaml --fail-severity=warn
	$(PY) scripts/dump_contract.py build/contract/openapi.json
	npx --no-install spectral lint build/contract/openapi.json --ruleset .spectral.yaml --fail-severity=warn
	REDOCLY_TELEMETRY=off npx --no-install redocly lint build/contract/openapi.json --config redocly.yaml

fuzz: $(STAMP)
	$(PY) scripts/fuzz.py

# The Python client of the served contract (the bundle /api/v1/openapi.json answers,
# dumped by the server's code), in build/sdk/. Any generator warning fails the target:
# a warning means part of the contract did not make it into the client.
SDK_DIR := build/sdk
sdk: $(STAMP)
	$(PY) scripts/dump_contract.py build/contract/openapi.json
	@rm -rf $(SDK_DIR); \
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(VENV)/bin/openapi-python-client generate --path build/contract/openapi.json \
	  --output-path $(SDK_DIR) --meta setup --config scripts/sdk-config.yaml > build/sdk.log 2>&1; status=$$?; \
	cat build/sdk.log; \
	if [ $$status -ne 0 ]; then exit $$status; fi; \
	if grep -qiE "warning|error" build/sdk.log; then echo "make sdk: the generator reported problems (above)"; exit 1; fi; \
	echo "SDK in $(SDK_DIR): $$(ls $(SDK_DIR)/socialpub_client/models | grep -vc '^__init__') model files"

# The generated client passes `mypy --strict` itself, as SDK users type-check against
# it, and the journeys of tests/sdk type-check against it (mypy settings in
# pyproject.toml, its cache in build/mypy-cache). tests/sdk/test_types.py runs the same.
sdk-check: sdk
	MYPYPATH=$(SDK_DIR) $(VENV)/bin/mypy --strict tests/sdk $(SDK_DIR)/socialpub_client

# Each area's scenario is bench/<area>.py; `make bench ONLY=bulk` runs one.
BENCH_SCENARIOS := $(basename $(notdir $(filter-out bench/procs.py bench/area_bench.py bench/minimal_app.py bench/stages_app.py,$(wildcard bench/*.py))))

bench: $(STAMP)
	@set -e; for scenario in $(or $(ONLY),$(BENCH_SCENARIOS)); do \
	  test -f bench/$$scenario.py || { echo "no bench scenario '$$scenario' (have: $(BENCH_SCENARIOS))"; exit 2; }; \
	  echo "== bench: $$scenario"; $(PY) bench/$$scenario.py; \
	done

clean:
	rm -rf $(VENV) var node_modules
