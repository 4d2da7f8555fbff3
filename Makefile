# Every target creates its own virtual environment; nothing needs to be installed by hand.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
RUNTIME := $(VENV)/.runtime
TESTING := $(VENV)/.testing
ENGINES := $(VENV)/.engines
JAVA_PACKAGE := openjdk-17-jre-headless

.PHONY: help install demo test test-slow test-engines java lint typecheck pytest docs test-floors bench bench-quick bench-latency clean figures \
	test-browser

help:
	@echo "make demo         set up (runtime dependencies only) and run sigmatool silent on the bundled Big-Math sample"
	@echo "make test         set up (with test dependencies) and run the tests with coverage, ruff and mypy"
	@echo "make test-slow    the slow suites: loop simulations, fuzzing, signals and pipes, SQL round trips, sharing sweeps"
	@echo "make test-engines the SQL route on Spark and DuckDB, object stores on an S3 server (needs Java)"
	@echo "make docs         rewrite the output shown under every example in README.md and docs/ from real runs"
	@echo "make test-floors  run a smoke subset of the tests on the oldest declared dependencies"
	@echo "make bench-quick  a benchmark that finishes in under a minute"
	@echo "make bench        the full benchmark (10^8-row datasets; needs several GB of disk), then the latency cases"
	@echo "make bench-latency the interactive cases (--ci, --bounds, report, continuous rates) against their references"
	@echo "make figures      regenerate docs/figures/*.png (one per command) and docs/example-report.html with the CLI"
	@echo "make test-browser open the HTML report in headless Chromium (installs it with apt-get as root)"

$(RUNTIME): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e .
	touch $@

$(TESTING): $(RUNTIME)
	$(BIN)/python -m pip install --quiet -e '.[test,bench]'
	touch $@

# The test dependencies come in the same resolution (a fresh clone pays for one, not two).
$(ENGINES): $(RUNTIME)
	$(BIN)/python -m pip install --quiet -e '.[test,bench,engines]'
	touch $(TESTING) $@

install: $(RUNTIME)

# Spark needs Java 17: installed here when missing and we are root; otherwise the Spark tests skip and say so.
java:
	@command -v java >/dev/null 2>&1 || { \
		if [ "$$(id -u)" = 0 ]; then \
			DEBIAN_FRONTEND=noninteractive apt-get install -y $(JAVA_PACKAGE) \
			|| { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y $(JAVA_PACKAGE); }; \
		else \
			echo "no java: the Spark tests will skip (as root: apt-get install -y $(JAVA_PACKAGE))"; \
		fi; \
	}

demo: $(RUNTIME)
	$(BIN)/sigmatool silent sample_data/bigmath_solve_rates.parquet --G 4,8,16,32,64

# The tests run the commands in-process: give them the one OpenBLAS thread the console script gives itself
# (sigmatool/entry.py). With a thread per core in each of two workers, the prior's small matrix products
# waited on each other: two engine tests took 33-39 s in the suite against 3-4 s alone.
BLAS := OPENBLAS_NUM_THREADS=1

pytest: $(TESTING)
	$(BIN)/coverage erase
	$(BLAS) $(BIN)/coverage run -m pytest -q -p no:cacheprovider -n 2 --dist loadscope --durations=10 -m "not browser and not slow"
	$(BIN)/coverage combine -q
	$(BIN)/coverage report

lint: $(TESTING)
	$(BIN)/ruff check sigmatool tests bench .ci
	$(BIN)/ruff format --check sigmatool tests bench .ci

typecheck: $(TESTING)
	$(BIN)/mypy

test: pytest lint typecheck

test-slow: $(TESTING)
	$(BLAS) $(BIN)/python -m pytest -q -p no:cacheprovider -n 2 --dist loadscope -m slow

test-engines: $(ENGINES) java
	$(BIN)/python -m pytest -q -p no:cacheprovider tests/engines

docs: $(TESTING)
	$(BIN)/python -m tests.refresh_docs

# The dependency floors: a venv of its own with every runtime dependency pinned to its `>=` bound in
# pyproject.toml (.ci/floors.py writes the pins), and the tests that reach every command and kernel.
# Wheels only: an old release without a wheel for this Python would otherwise be compiled.
FLOORS       ?= .venv-floors
FLOORS_STAMP := $(FLOORS)/.installed
FLOORS_TESTS := tests/test_kernels.py tests/test_silent.py tests/test_budget.py tests/test_groupsize.py \
                tests/test_simulate.py tests/test_load.py tests/test_render.py tests/test_package.py \
                tests/test_sql_cli.py tests/test_figures.py tests/test_prior_bounds.py .ci/test_floor_docs.py sigmatool

$(FLOORS_STAMP): pyproject.toml .ci/floors.py
	rm -rf $(FLOORS)
	$(PYTHON) -m venv $(FLOORS)
	$(PYTHON) .ci/floors.py > $(FLOORS)/floors.txt
	$(FLOORS)/bin/python -m pip install --quiet --only-binary=:all: -c $(FLOORS)/floors.txt -e . pytest hypothesis
	touch $(FLOORS_STAMP)

test-floors: $(FLOORS_STAMP)
	$(FLOORS)/bin/python -m pip list 2>/dev/null | grep -iE '^(typer|click|polars|rich|numpy|scipy|highspy|sqlglot|matplotlib) '
	$(FLOORS)/bin/python -m pytest -q -p no:cacheprovider $(FLOORS_TESTS)

bench: $(TESTING)
	$(BIN)/python bench/run.py --size full
	$(BIN)/python bench/latency.py
	$(BIN)/python bench/many_columns.py

bench-latency: $(TESTING)
	$(BIN)/python bench/latency.py
	$(BIN)/python bench/many_columns.py

bench-quick: $(TESTING)
	$(BIN)/python bench/run.py --size quick

figures: $(RUNTIME)
	$(BIN)/python -m tests.make_figures docs

# Debian's chromium and chromium-driver, installed when missing and run as root; otherwise the test skips.
BROWSER_PACKAGES := chromium chromium-driver
test-browser: $(TESTING)
	@if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -q $(BROWSER_PACKAGES) \
	    || { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q $(BROWSER_PACKAGES); } \
	    || echo "could not install $(BROWSER_PACKAGES); the browser test will skip"; \
	  else echo "not root: run 'apt-get install -y $(BROWSER_PACKAGES)' as root; the browser test will skip"; fi; \
	fi
	$(BIN)/python -m pytest -q -p no:cacheprovider -m browser tests/test_report_browser.py

clean:
	rm -rf $(VENV) $(FLOORS) build dist *.egg-info .pytest_cache .mypy_cache .ruff_cache .coverage .coverage.*
