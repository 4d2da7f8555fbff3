# Every target creates its own virtual environment; nothing needs to be installed by hand.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
ENGINES_STAMP := $(VENV)/.engines-installed
JAVA_PACKAGE  := openjdk-17-jre-headless

.PHONY: help install demo test test-engines java lint typecheck pytest bench bench-quick clean

help:
	@echo "make demo         set up and run sigmatool silent on the bundled Big-Math sample"
	@echo "make test         set up and run the tests, ruff and mypy"
	@echo "make test-engines the SQL route on Spark and DuckDB, object stores on an S3 server (needs Java)"
	@echo "make bench-quick  a benchmark that finishes in under a minute"
	@echo "make bench        the full benchmark (10^8-row datasets; needs several GB of disk)"

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test,bench]'
	touch $(STAMP)

install: $(STAMP)

# One install of everything (a fresh clone pays for one resolution, not two); it also satisfies `make install`.
$(ENGINES_STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test,bench,engines]'
	touch $(STAMP) $(ENGINES_STAMP)

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

demo: $(STAMP)
	$(BIN)/sigmatool silent --G 4,8,16,32,64

pytest: $(STAMP)
	$(BIN)/python -m pytest -q -p no:cacheprovider

lint: $(STAMP)
	$(BIN)/ruff check sigmatool tests bench
	$(BIN)/ruff format --check sigmatool tests bench

typecheck: $(STAMP)
	$(BIN)/mypy

test: pytest lint typecheck

test-engines: $(ENGINES_STAMP) java
	$(BIN)/python -m pytest -q -p no:cacheprovider tests/engines

bench: $(STAMP)
	$(BIN)/python bench/run.py --size full

bench-quick: $(STAMP)
	$(BIN)/python bench/run.py --size quick

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .mypy_cache .ruff_cache
