# pingce — two commands from a fresh clone: `make demo` and `make test`.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
BIN    := $(VENV)/bin
PIP    := $(BIN)/python -m pip
# The development and test environment, every package at the version the tests were written
# against (pip-compile of the test extra). Installs use it as constraints, so pyproject.toml's
# dependencies stay ranges for users while `make test` on a new machine gets exactly these.
LOCK   := requirements/dev.txt
LOCK_VENV := .venv-lock

.PHONY: demo test checks lint typecheck browser-deps docs bench lock clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip

$(VENV)/.installed-run: pyproject.toml $(LOCK) | $(BIN)/python
	$(PIP) install --quiet --constraint $(LOCK) -e .
	@touch $@

$(VENV)/.installed-test: pyproject.toml $(LOCK) | $(BIN)/python
	$(PIP) install --quiet --constraint $(LOCK) -e '.[test]'
	@touch $@ $(VENV)/.installed-run

# Refresh the lock: the newest releases pyproject.toml's ranges admit, resolved by pip-tools in a
# venv of its own. torch stays at the CPU build's public version (2.13.0, not 2.13.0+cpu), which
# PyPI and the wheel on this machine both satisfy. Run `make test` after, and commit both.
lock:
	@test -x $(LOCK_VENV)/bin/pip-compile || \
		($(PYTHON) -m venv $(LOCK_VENV) && $(LOCK_VENV)/bin/python -m pip install --quiet pip-tools)
	$(LOCK_VENV)/bin/pip-compile --quiet --upgrade --extra test --strip-extras --no-header \
		--no-emit-index-url --no-emit-find-links --output-file $(LOCK).new pyproject.toml
	@{ echo "# The development and test environment of pingce: \`make test\` installs with"; \
	   echo "# --constraint this file. Made by \`make lock\` (pip-compile --extra test); edit"; \
	   echo "# pyproject.toml, not this file."; \
	   sed -E 's/^torch==([^+ ]+)\+cpu/torch==\1/' $(LOCK).new; } > $(LOCK)
	@rm -f $(LOCK).new
	@echo "lock: $(LOCK) written ($$(grep -c '==' $(LOCK)) packages)"

demo: $(VENV)/.installed-run
	$(BIN)/pingce demo --out demo-out

lint: $(VENV)/.installed-test
	$(BIN)/ruff check src tests benchmarks docs/hooks
	$(BIN)/ruff format --check src tests benchmarks docs/hooks

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

# The documentation site (mkdocs.yml) built into site/; --strict: a broken link, a missing page
# or a reference that does not resolve is an error. `make test` runs it too.
docs: $(VENV)/.installed-test
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet

# The tests run on every core the process may use (pytest-xdist's `-n auto`: 2 in CI;
# `make test TEST_WORKERS=0` for one process). --dist loadfile: a test file runs on one worker, in
# order (a module's fixtures built once; the docs pages' shared /tmp paths), and
# tests/conftest.py's SHARED joins the tests on Ray into one unit (one cluster at a time). The
# checks before them run side by side, each one's output printed whole when it ends.
TEST_WORKERS ?= auto

checks: lint typecheck docs

test: $(VENV)/.installed-test browser-deps
	@$(MAKE) --no-print-directory -j3 --output-sync=target checks
	$(BIN)/pytest -n $(TEST_WORKERS) --dist loadfile; status=$$?; \
		if [ $$status -eq 5 ]; then echo "pytest collected no tests"; exit 0; fi; exit $$status

bench: $(VENV)/.installed-test
	$(BIN)/python benchmarks/run_all.py

clean:
	rm -rf $(VENV) $(LOCK_VENV) demo-out pingce-out site .pytest_cache .mypy_cache .ruff_cache
