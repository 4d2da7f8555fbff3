# Every target creates its own virtual environment; nothing needs to be installed by hand.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
RUNTIME := $(VENV)/.runtime
TESTING := $(VENV)/.testing
ENGINES := $(VENV)/.engines
JAVA_PACKAGE := openjdk-17-jre-headless

.PHONY: help install demo test test-engines java lint typecheck pytest docs bench bench-quick clean

help:
	@echo "make demo         set up (runtime dependencies only) and run sigmatool silent on the bundled Big-Math sample"
	@echo "make test         set up (with test dependencies) and run the tests with coverage, ruff and mypy"
	@echo "make test-engines the SQL route on Spark and DuckDB, object stores on an S3 server (needs Java)"
	@echo "make docs         rewrite the output shown under every example in README.md and docs/ from real runs"
	@echo "make bench-quick  a benchmark that finishes in under a minute"
	@echo "make bench        the full benchmark (10^8-row datasets; needs several GB of disk)"

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

pytest: $(TESTING)
	$(BIN)/coverage erase
	$(BIN)/coverage run -m pytest -q -p no:cacheprovider -n 2
	$(BIN)/coverage combine -q
	$(BIN)/coverage report

lint: $(TESTING)
	$(BIN)/ruff check sigmatool tests bench
	$(BIN)/ruff format --check sigmatool tests bench

typecheck: $(TESTING)
	$(BIN)/mypy

test: pytest lint typecheck

test-engines: $(ENGINES) java
	$(BIN)/python -m pytest -q -p no:cacheprovider tests/engines

docs: $(TESTING)
	$(BIN)/python -m tests.refresh_docs

bench: $(TESTING)
	$(BIN)/python bench/run.py --size full

bench-quick: $(TESTING)
	$(BIN)/python bench/run.py --size quick

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .mypy_cache .ruff_cache .coverage .coverage.*
