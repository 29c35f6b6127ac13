# pingce — two commands from a fresh clone: `make demo` and `make test`.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
BIN    := $(VENV)/bin
PIP    := $(BIN)/python -m pip

.PHONY: demo test lint typecheck browser-deps bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip

$(VENV)/.installed-run: pyproject.toml | $(BIN)/python
	$(PIP) install --quiet -e .
	@touch $@

$(VENV)/.installed-test: pyproject.toml | $(BIN)/python
	$(PIP) install --quiet -e '.[test]'
	@touch $@ $(VENV)/.installed-run

demo: $(VENV)/.installed-run
	$(BIN)/pingce demo --out demo-out

lint: $(VENV)/.installed-test
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks

typecheck: $(VENV)/.installed-test
	$(BIN)/mypy src

# The browser tests of report.html (tests/test_report_html.py) drive Debian's chromium with
# Playwright and need a CJK font; installed with apt-get (sudo when not root) when missing.
browser-deps:
	@if command -v chromium >/dev/null 2>&1 && fc-list 2>/dev/null | grep -qi "WenQuanYi Micro Hei"; then \
		echo "browser-deps: chromium and fonts-wqy-microhei are installed"; \
	elif ! command -v apt-get >/dev/null 2>&1; then \
		echo "browser-deps: apt-get is not available; install chromium and fonts-wqy-microhei" \
			"yourself, or the browser tests in tests/test_report_html.py are skipped"; \
	else \
		if [ "$$(id -u)" -eq 0 ]; then SUDO=; else SUDO=sudo; fi; \
		echo "browser-deps: installing chromium and fonts-wqy-microhei with apt-get"; \
		$$SUDO apt-get update -qq && \
		$$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium fonts-wqy-microhei; \
	fi

test: lint typecheck browser-deps
	$(BIN)/pytest; status=$$?; if [ $$status -eq 5 ]; then echo "pytest collected no tests"; exit 0; fi; exit $$status

bench: $(VENV)/.installed-test
	$(BIN)/python benchmarks/run_all.py

clean:
	rm -rf $(VENV) demo-out pingce-out .pytest_cache .mypy_cache .ruff_cache
