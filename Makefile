# Tessera: two commands on a fresh Debian machine with the Swift toolchain.
#   make demo   set up (build packages + photographs), build in release mode, run the main job
#   make test   set up (build packages), run the test suite
SWIFT ?= swift
DEMO_ARGS ?=

.PHONY: setup setup-build build release demo test bench clean

# Everything: build dependencies and the demo's photographs.
setup:
	@scripts/setup

# Build dependencies only (what the tests need).
setup-build:
	@TESSERA_SETUP_DEMO=0 scripts/setup

build: setup-build
	$(SWIFT) build

release: setup-build
	$(SWIFT) build -c release --product tessera

demo: setup release
	scripts/demo $(DEMO_ARGS)

test: setup-build
	$(SWIFT) test

bench: setup release
	scripts/bench

clean:
	rm -rf .build
