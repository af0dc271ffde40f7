# PhotoWall: `make run` serves the wall, `make test` runs every test, `make bench` prints benchmarks.
# Each target installs the Debian and PyPI packages it needs first.

SHELL      := /bin/bash
SWIFT      ?= swift
VENV       := .build/venv
PY         := $(VENV)/bin/python
PIP_PINS   := six==1.16.0 qs-parse-rest==0.2.20240920 pytest==8.3.3 pillow==13.0.0 selenium==4.51.0
DEBUG_BIN   = $(shell $(SWIFT) build --show-bin-path)/photowall
RELEASE_BIN = $(shell $(SWIFT) build -c release --show-bin-path)/photowall

# Suites that kill servers or cut connections mid-transfer: run on their own, after the rest, so that
# load from other tests can't change what they provoke.
TIMING_SUITES := TusClientTests|CrashTests

.PHONY: all deps deps-test deps-bench venv build release run test test-swift test-python test-browser test-asan test-postgres bench clean

all: build

deps:
	@scripts/install-deps.sh build

deps-test:
	@scripts/install-deps.sh test

deps-bench:
	@scripts/install-deps.sh bench

$(VENV)/.pins: Makefile
	@test -x $(PY) || python3 -m venv $(VENV)
	@$(PY) -m pip install -q $(PIP_PINS)
	@echo "$(PIP_PINS)" > $@

venv: deps-test $(VENV)/.pins

build: deps
	$(SWIFT) build

release: deps
	$(SWIFT) build -c release

## Serve the wall with the embedded defaults (SQLite + Storage/) on http://127.0.0.1:1337/parse, with the
## mock Facebook provider on :1338 and, on the first run, a demo wall loaded from Samples/.
run: release
	scripts/run-demo.sh $(RELEASE_BIN) $(ARGS)

## Every test: Swift (unit + live server), the Python Parse client, and the imaging corpus under ASan.
test: venv
	$(SWIFT) build --build-tests
	PHOTOWALL_BIN=$(DEBUG_BIN) $(SWIFT) test --skip-build --skip '$(TIMING_SUITES)' 2>&1 | tee .build/swift-test.log; test $${PIPESTATUS[0]} -eq 0
	PHOTOWALL_BIN=$(DEBUG_BIN) $(SWIFT) test --skip-build --filter '$(TIMING_SUITES)' 2>&1 | tee .build/swift-test-timing.log; test $${PIPESTATUS[0]} -eq 0
	$(MAKE) test-postgres
	PHOTOWALL_BIN=$(DEBUG_BIN) $(PY) -m pytest -q Tests/python
	$(MAKE) test-browser
	$(MAKE) test-asan

## The browser wall in headless Chromium (Selenium): real `photowall serve` and `photowall mock-facebook` on random
## ports, phone and desktop window sizes. Screenshots of every step go to .build/artifacts/browser/.
test-browser: venv
	$(SWIFT) build
	PHOTOWALL_BIN=$(DEBUG_BIN) $(PY) -m pytest -q Tests/browser

## The live API tests and the PostgreSQL adapter tests again, on a throw-away PostgreSQL 15 on 127.0.0.1
## (scripts/pg.sh: temporary data, random port; stopped even when the tests fail). Needs a prior `swift build --build-tests`.
test-postgres:
	@if ! scripts/pg.sh start > .build/pg.env 2> .build/pg-start.log; then \
	  cat .build/pg-start.log; scripts/pg.sh stop; \
	  echo "SKIPPED: PostgreSQL could not be started; the PostgreSQL conformance run (PhotoWallAPITests, PhotoWallPostgresTests) did not run."; \
	  exit 0; \
	fi; \
	trap 'scripts/pg.sh stop' EXIT; \
	. .build/pg.env; echo "PostgreSQL conformance run on $$PHOTOWALL_TEST_DATABASE"; \
	PHOTOWALL_BIN=$(DEBUG_BIN) $(SWIFT) test --skip-build --filter 'PhotoWallAPITests|PhotoWallPostgresTests' 2>&1 | tee .build/swift-test-postgres.log; \
	exit $${PIPESTATUS[0]}

test-asan:
	@if [ -d Tests/PhotoWallImagingTests ] && grep -rqs "@Test" Tests/PhotoWallImagingTests; then \
	  $(SWIFT) test --sanitize=address --disable-xctest --scratch-path .build/asan --filter PhotoWallImagingTests; \
	else echo "test-asan: no imaging tests yet"; fi

bench: deps-bench venv release
	scripts/bench.sh $(RELEASE_BIN)

clean:
	rm -rf .build
