# Tessera: two commands on a fresh Debian machine with the Swift toolchain.
#   make demo   set up, build in release mode, run the main job
#   make test   set up, run the test suite
SWIFT ?= swift
DEMO_ARGS ?=

.PHONY: setup build release demo test bench sanitize clean

setup:
	@scripts/setup

build: setup
	$(SWIFT) build

release: setup
	$(SWIFT) build -c release --product tessera

demo: release
	scripts/demo $(DEMO_ARGS)

test: setup
	TESSERA_SETUP_DEMO=0 $(SWIFT) test

bench: release
	scripts/bench

clean:
	rm -rf .build
