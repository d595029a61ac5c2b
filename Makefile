# Tessera: two commands on a fresh Debian machine with the Swift toolchain.
#   make demo   set up, build in release mode, run the main job
#   make test   set up, run the test suite
SWIFT ?= swift
DEMO_ARGS ?=

.PHONY: setup build release demo test bench sanitize fuzz crash-test clean

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

# Thread and address sanitizers over the whole test suite, in their own build directories.
sanitize: setup
	TESSERA_SETUP_DEMO=0 $(SWIFT) test --sanitize=thread --scratch-path .build-tsan
	LSAN_OPTIONS=suppressions=$(CURDIR)/scripts/lsan.supp TESSERA_SETUP_DEMO=0 $(SWIFT) test --sanitize=address --scratch-path .build-asan

# libFuzzer over every decoder and the table file reader, FUZZ_SECONDS each (scripts/fuzz).
FUZZ_SECONDS ?= 60
fuzz: setup
	scripts/fuzz all $(FUZZ_SECONDS)

# SIGKILL the table writer CRASH_ROUNDS times, verifying after each (scripts/crash-test).
CRASH_ROUNDS ?= 200
crash-test: setup
	scripts/crash-test $(CRASH_ROUNDS)

clean:
	rm -rf .build .build-tsan .build-asan .build-fuzz
