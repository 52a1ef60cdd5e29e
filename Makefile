# The front door. `make help` lists the targets.
.DEFAULT_GOAL := help
SHELL := /bin/bash

VENV ?= .venv
PY := $(VENV)/bin/python
# The measuring side may run under another interpreter that has jax + numpy
# (an accelerator image's own python3): make bench PYTHON=python3
PYTHON ?= $(PY)
R ?= 6
ONLY ?=
SMOKE ?=
STRICT ?=
RESULTS ?= results
export NO_MKDOCS_2_WARNING := 1
# bench calls make again through this name, not $(MAKE) itself: make runs a recipe line that names
# $(MAKE) even under -n, so `make -n bench` would measure; through another name it prints the commands.
SUBMAKE = $(MAKE)
comma := ,

STAMP := $(VENV)/.installed-$(shell cat requirements.txt pyproject.toml bench_scripts/pyproject.toml | sha256sum | cut -c1-12)
# jax 0.11 and newer need Python 3.12+: the venv is made with the first of these that is new
# enough (a pyenv-installed 3.12/3.13 counts even when it is not the selected version).
NEED_PY := import sys; sys.exit(sys.version_info < (3, 12))
BASE_PYTHON ?= $(shell for p in python3.13 python3.12 python3 $$HOME/.pyenv/versions/3.1[2-9]*/bin/python3; do \
  "$$p" -c '$(NEED_PY)' 2>/dev/null && { echo "$$p"; break; }; done)

.PHONY: help venv wheel bench bench-smoke lesson site publish claims compare carryover serve test test-fast lint clean

help: ## List the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-12s %s\n", $$1, $$2}'
	@echo "  variables: R=6 (runs per figure)  ONLY=a,b (just these figure scripts)  STRICT=1 (stale figures fail the site)  SMOKE=1 (make lesson: tiny sizes)"
	@echo "             PYTHON=python3 (measure with another interpreter)  MACHINE=label (results folder)"

$(STAMP): requirements.txt pyproject.toml bench_scripts/pyproject.toml
	@if [ -x $(PY) ] && ! $(PY) -c '$(NEED_PY)'; then echo "make venv: $(VENV) has $$($(PY) -V); remaking it with Python 3.12+"; rm -rf $(VENV); fi
	@if [ ! -x $(PY) ]; then \
	  test -n "$(BASE_PYTHON)" || { echo "make venv: needs Python 3.12 or newer (jax 0.12 requires it); set BASE_PYTHON=/path/to/python3.12" >&2; exit 2; }; \
	  $(BASE_PYTHON) -m venv $(VENV); fi
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt
	$(PY) -m pip install --quiet --no-deps -e ./bench_scripts -e .
	@rm -f $(VENV)/.installed-* && touch $@

venv: $(STAMP) ## Create .venv, install the pinned dependencies and this project (pip install -e .; automatic)

wheel: $(STAMP) ## Build benchkit's wheel into dist/ (pip install dist/jax_benchkit-*.whl wherever jax and numpy are)
	$(PY) -m pip wheel --quiet --no-deps ./bench_scripts -w dist
	@ls dist/jax_benchkit-*.whl

bench: $(if $(filter $(PY),$(PYTHON)),$(STAMP)) ## Run every figure R times on this machine, execute the lesson, build the site
	@mkdir -p .bench; exec 9>.bench/make-bench.lock; \
	if ! command -v flock >/dev/null; then echo "make bench: flock (util-linux) not found; running without the lock that refuses a second make bench here" >&2; \
	elif ! flock -n 9; then echo "make bench: another make bench is running here; refusing to start a second one" >&2; exit 2; fi; \
	status=0; \
	$(PYTHON) bench_scripts/run.py --runs $(R) --results $(RESULTS) $(if $(ONLY),--only $(subst $(comma), ,$(ONLY))) || status=$$?; \
	if [ -n "$(ONLY)" ]; then echo "make bench: lesson not executed (ONLY=$(ONLY))"; \
	elif [ "$(PYTHON)" = "$(PY)" ]; then $(SUBMAKE) --no-print-directory lesson || status=$$?; \
	else echo "make bench: lesson not executed (it runs in $(VENV); PYTHON=$(PYTHON))"; fi; \
	BENCH_CLAIMS=report $(SUBMAKE) --no-print-directory site || status=$$?; \
	$(PY) -m benchsite.pages.claimcheck --results $(RESULTS) --failed || status=$$?; \
	if [ $$status -ne 0 ]; then echo "make bench: some steps failed (see above)"; fi; exit $$status

bench-smoke: $(if $(filter $(PY),$(PYTHON)),$(STAMP)) ## Every figure once at tiny sizes into .bench/smoke-results (results/ untouched, no site)
	$(PYTHON) bench_scripts/run.py --runs 1 --smoke --results .bench/smoke-results

# The lessons run in the venv whatever PYTHON is: executing a notebook needs nbclient and ipykernel.
lesson: $(STAMP) ## Execute the lesson notebooks into results/<machine>/lessons/ (docs/ untouched; SMOKE=1: copies in .bench/)
	$(PY) docs/lessons/execute.py $(if $(SMOKE),--smoke --out-dir .bench/smoke-lessons,--results $(RESULTS))

# Not --quiet: a strict -q build fails on the same warnings (sitesetup.count_hidden_warnings) but
# names them only at the end; here each shows where it is logged. The INFO lines are filtered out
# instead; pipefail keeps the status.
site: $(STAMP) ## Build the site from the committed results (no benchmark runs)
	@set -o pipefail; start=$$($(PY) -c 'import time; print(time.time_ns())'); \
	BENCH_RESULTS=$(RESULTS) BENCH_STRICT=$(STRICT) $(VENV)/bin/mkdocs build --strict 2>&1 \
	  | { grep -v '^INFO ' || true; } && \
	echo "site built in $$(( ($$($(PY) -c 'import time; print(time.time_ns())') - start) / 1000000 )) ms -> site/index.html"

# The site's links are relative, so the built site/ works under any path. publish lays it out as a
# folder to upload as is: at the host's root by default, so the /bench section (every figure on every
# machine) is at <address>/bench/ and a permalink holds no doubled segment; PUBLISH_PATH=sub puts it
# under /sub/ with a redirect at the top. SITE_URL (mkdocs.yml) is read by `make site` and must be
# the address the folder is served at.
PUBLISH_DIR ?= .bench/public
PUBLISH_PATH ?=
publish: ## After make site: site/ laid out for a static host in .bench/public/ (PUBLISH_PATH=sub: under /sub/)
	@test -f site/index.html || { echo "make publish: no site/ yet; run make site (STRICT=1) first"; exit 2; }
	@grep -qs "<loc>https\?://" site/sitemap.xml && ! grep -qs "OWNER" site/sitemap.xml || { echo "make publish: site/ was built with no public address (site_url unset or the placeholder OWNER); build with SITE_URL=... REPO_URL=... (mkdocs.yml)" >&2; exit 2; }
	rm -rf $(PUBLISH_DIR) && mkdir -p $(PUBLISH_DIR)/$(PUBLISH_PATH)
	cp -R site/. $(PUBLISH_DIR)/$(PUBLISH_PATH)/
	@# A host serves its root 404.html for any missing path; the site's own links its assets by site_url.
	@if [ -n "$(PUBLISH_PATH)" ]; then \
	  if [ -f site/404.html ]; then cp site/404.html $(PUBLISH_DIR)/404.html; fi; \
	  printf '<!doctype html><meta charset="utf-8"><title>Redirect</title><meta http-equiv="refresh" content="0; url=%s/"><a href="%s/">%s/</a>\n' \
	    "$(PUBLISH_PATH)" "$(PUBLISH_PATH)" "$(PUBLISH_PATH)" > $(PUBLISH_DIR)/index.html; fi
	@echo "upload $(PUBLISH_DIR)/ to the host's root: the site is at /$(PUBLISH_PATH)$(if $(PUBLISH_PATH),/), its figures at /$(if $(PUBLISH_PATH),$(PUBLISH_PATH)/)bench/"

# A claim that does not hold on a reader's own machine is shown on its page and listed here; on the
# declared reference machine (mkdocs.yml extra.bench.machine) it fails the strict build instead.
claims: $(STAMP) ## Check every claim against a results folder: make claims [RESULTS=folder] [MACHINE=label]
	$(PY) -m benchsite.pages.claimcheck --results $(RESULTS) $(if $(MACHINE),--machine $(MACHINE))

compare: $(STAMP) ## Compare two results folders figure by figure: make compare A=<folder> B=<folder> [MACHINES=1]
	@test -n "$(A)" -a -n "$(B)" || { echo "usage: make compare A=<machine> B=<machine> (folders in $(RESULTS)/)"; exit 2; }
	$(PY) -m benchsite.views.compare $(A) $(B) --results $(RESULTS) $(if $(MACHINES),--machines)

# Each sample grouped by the cell measured just before it (benchsite/views/carryover.py; docs/diagnosing/harness.md).
carryover: $(STAMP) ## Carry-over between a figure's cells: make carryover MACHINE=label [RESULTS=folder] [FIG=fig-id]
	@test -n "$(MACHINE)" || { echo "usage: make carryover MACHINE=<machine> [FIG=fig-id] (folders in $(RESULTS)/)"; exit 2; }
	$(PY) -m benchsite.views.carryover $(RESULTS)/$(MACHINE) $(if $(FIG),--figure $(FIG))

serve: $(STAMP) ## Preview the site at http://127.0.0.1:8000
	$(VENV)/bin/mkdocs serve --dev-addr 127.0.0.1:8000

# Two tiers (CONTRIBUTING.md): test-fast leaves out the tests marked slow (site builds, Chromium,
# figure scripts and other programs, the wheel); test runs both. In TEST_JOBS processes
# (pytest-xdist), each taking a whole test module at a time, so a module's fixtures are made once
# (the longest modules first: tests/conftest.py, LONG_FIRST, and --no-loadscope-reorder);
# what several modules share is made once a run (tests/conftest.py, once). TEST_JOBS=0: one process.
# Byte code is cached even where the environment says not to (PYTHONDONTWRITEBYTECODE, set on this
# machine): otherwise every worker rewrites every test module's asserts again, and every build and
# script the tests start compiles benchsite and benchkit from source (__pycache__ is ignored by git,
# the code version and the copies the tests make).
TEST_JOBS ?= 2
PYTEST = PYTHONDONTWRITEBYTECODE= $(PY) -m pytest -q -n $(TEST_JOBS) --dist loadfile --no-loadscope-reorder

test: $(STAMP) ## Run every test, both tiers, in two processes (about 5 minutes on 2 cores)
	$(PYTEST)

test-fast: $(STAMP) ## The fast tier: model and views, no builds or programs (about 50 s; run it on every change)
	$(PYTEST) -m "not slow"

lint: $(STAMP) ## ruff
	$(VENV)/bin/ruff check .

clean: ## Remove the built site and caches (keeps .venv and results/)
	rm -rf site .bench .cache/bench .pytest_cache .ruff_cache
