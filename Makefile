# Every target creates its own virtual environment; nothing needs to be installed by hand.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: help install demo test lint typecheck pytest bench bench-quick clean figures test-browser

help:
	@echo "make demo         set up and run sigmatool silent on the bundled Big-Math sample"
	@echo "make test         set up and run the tests, ruff and mypy"
	@echo "make bench-quick  a benchmark that finishes in under a minute"
	@echo "make bench        the full benchmark (10^8-row datasets; needs several GB of disk)"
	@echo "make figures      regenerate docs/figures/*.png (one per command) and docs/example-report.html with the CLI"
	@echo "make test-browser open the HTML report in headless Chromium (installs it with apt-get as root)"

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test,bench]'
	touch $(STAMP)

install: $(STAMP)

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

bench: $(STAMP)
	$(BIN)/python bench/run.py --size full

bench-quick: $(STAMP)
	$(BIN)/python bench/run.py --size quick

figures: $(STAMP)
	$(BIN)/python -m tests.make_figures docs

# Debian's chromium and chromium-driver, installed when missing and run as root; otherwise the test skips.
BROWSER_PACKAGES := chromium chromium-driver
test-browser: $(STAMP)
	@if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -q $(BROWSER_PACKAGES) \
	    || { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q $(BROWSER_PACKAGES); } \
	    || echo "could not install $(BROWSER_PACKAGES); the browser test will skip"; \
	  else echo "not root: run 'apt-get install -y $(BROWSER_PACKAGES)' as root; the browser test will skip"; fi; \
	fi
	$(BIN)/python -m pytest -q -p no:cacheprovider -m browser tests/test_report_browser.py

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .mypy_cache .ruff_cache
