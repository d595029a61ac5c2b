# Tessera: two commands on a fresh Debian machine with the Swift toolchain.
#   make demo   set up (build packages + photographs), build in release mode, run the main job
#   make test   set up (build packages, photographs, nginx), run the tests and the release end-to-end suites
SWIFT ?= swift
DEMO_ARGS ?=
# The library is the package at the top; the command, the stress tools and the tests are the package in Tools/.
TOOLS = --package-path Tools
# The release build's own flags, the same for `make release`, `make demo` and `make test` (a change of flags
# rebuilds): whole-module optimisation splits each module's LLVM optimisation and code generation over the
# cores (-num-threads, as Xcode passes it for whole-module builds), where SwiftPM alone leaves one core
# idle while it optimises one large module at a time.
RELEASE_FLAGS = -Xswiftc -num-threads -Xswiftc $(shell nproc 2>/dev/null || echo 2)
# `make test`'s one build: the release build with -enable-testing, so that the tests' `@testable import`
# compiles against it and the unit tests, the documentation and the end-to-end suites share one build.
# `make release` leaves -enable-testing out: it keeps every internal symbol visible, which cost the hot path
# about 5 % of its CPU per request (docs/DEVELOPMENT.md); the code is the same, the flag is the difference.
TEST_RELEASE_FLAGS = $(RELEASE_FLAGS) -Xswiftc -enable-testing
# The release tessera binary (what `make release` builds), as a shell expression.
TESSERA_RELEASE = "$$($(SWIFT) build $(TOOLS) -c release $(RELEASE_FLAGS) --show-bin-path)/tessera"
# The release tessera binary of `make test`'s build.
TESSERA_TEST_RELEASE = "$$($(SWIFT) build $(TOOLS) -c release $(TEST_RELEASE_FLAGS) --show-bin-path)/tessera"

.PHONY: setup setup-build build release deb package-test demo test bench bench-serve soak-serve sanitize fuzz fuzz-smoke crash-test docs check-docs clean

# Build dependencies, the photographs and nginx (the tests and the demo use both).
setup:
	@scripts/setup

setup-build: setup

build: setup-build
	$(SWIFT) build
	$(SWIFT) build $(TOOLS)

release: setup-build
	$(SWIFT) build $(TOOLS) -c release --product tessera $(RELEASE_FLAGS)

# The Debian package (docs/DEPLOYING.md): `make release`'s binary with the Swift runtime linked in
# (scripts/link-static: SwiftPM's own link command again, with -static-stdlib), then dist/tessera_VERSION_ARCH.deb
# (scripts/package-deb: the unit, the config, Depends from dpkg-shlibdeps).
deb: release
	scripts/link-static Tools/.build/deb/tessera
	scripts/package-deb --binary Tools/.build/deb/tessera --out dist

# The package installed where no Swift is: a minimal Debian bookworm root (debootstrap, cached under
# ~/.cache/tessera), `apt-get install ./tessera_….deb`, the unit's ExecStart run there on loopback, a preset
# thumbnail and /healthz fetched, an upgrade and a purge (scripts/package-test). From `make test`'s build, which
# `make test` runs it from too (scripts/test-builds), so the package of the code under test is what is installed.
package-test: setup-build
	$(SWIFT) build $(TOOLS) -c release $(TEST_RELEASE_FLAGS) --product tessera
	scripts/link-static Tools/.build/package/tessera
	scripts/package-test --binary Tools/.build/package/tessera --work Tools/.build/package-test

demo: setup release
	scripts/demo $(DEMO_ARGS)

# One build serves every step: the tools package in release configuration with its tests
# (TEST_RELEASE_FLAGS: `make release`'s flags and -enable-testing). scripts/test-builds makes it through
# scripts/check-docs (every public symbol
# documented; a compiler warning in Sources/ fails it) and, beside it, the fuzz smoke (its own unoptimised
# libFuzzer binary built, then every fuzz target FUZZ_SMOKE_SECONDS from its seeds; a build error or a crash
# fails `make test`), then, beside each other, the package test (`make package-test`'s steps on this build:
# docs/DEPLOYING.md), the DocC archive from that build with warnings as errors (scripts/build-docs --no-build:
# every symbol link and article resolves) and the PyPI virtualenvs of thumbor (bench serve's test; without it
# that test leaves thumbor out and says so) and moto (the S3 client tests; skipped without it). Then every
# suite (unit, integration, compiled documentation snippets, end to end) from it with
# `swift test --skip-build`. scripts/test-run bounds the run (TESSERA_TEST_MINUTES, 20 by default) and,
# past the bound, names the tests still running and prints the test process's threads. scripts/timed prints
# each step's seconds ("timed: STEP: N s"); docs/DEVELOPMENT.md, "Where `make test`'s time goes".
TEST_BUILD = TESSERA_TOOLS_CONFIGURATION=release TESSERA_TOOLS_BUILD_FLAGS="$(TEST_RELEASE_FLAGS)"
test: setup-build
	SWIFT=$(SWIFT) FUZZ_SMOKE_SECONDS=$(FUZZ_SMOKE_SECONDS) DOCS_TARGETS="$(DOCS_TARGETS)" $(TEST_BUILD) scripts/timed "build, fuzz smoke, package test, virtualenvs and DocC" scripts/test-builds
	TESSERA_RELEASE_BINARY=$(TESSERA_TEST_RELEASE) SWIFT=$(SWIFT) scripts/timed test-run scripts/test-run $(TOOLS) -c release $(TEST_RELEASE_FLAGS) --skip-build

bench: setup release
	$(TESSERA_RELEASE) bench peers
	scripts/bench

# tessera serve against thumbor (PyPI, in .build/thumbor-venv, made by `tessera bench peers`) and nginx with wrk;
# BENCH_SERVE_ARGS e.g. --json or a DIR.
BENCH_SERVE_ARGS ?=
bench-serve: setup release
	$(TESSERA_RELEASE) bench peers --only thumbor
	$(TESSERA_RELEASE) bench serve $(BENCH_SERVE_ARGS)

# SOAK_SECONDS of mixed and hostile load on tessera serve (scripts/soak-serve; 600 by default, as in docs/RELIABILITY.md).
SOAK_SECONDS ?= 600
soak-serve: setup release
	TESSERA_BINARY=$(TESSERA_RELEASE) scripts/soak-serve $(SOAK_SECONDS)

# Thread and address sanitizers over the whole test suite, in their own build directories.
sanitize: setup-build
	$(SWIFT) test $(TOOLS) --sanitize=thread --scratch-path .build-tsan
	LSAN_OPTIONS=suppressions=$(CURDIR)/scripts/lsan.supp $(SWIFT) test $(TOOLS) --sanitize=address --scratch-path .build-asan

# libFuzzer over every decoder, the table file reader, the disk cache reader, the HTTP freshness parsers and ICC
# profiles, FUZZ_SECONDS each (scripts/fuzz).
FUZZ_SECONDS ?= 60
fuzz: setup-build
	scripts/fuzz all $(FUZZ_SECONDS)

# What `make test` runs: build the fuzzer, every target FUZZ_SMOKE_SECONDS from its seeds, fresh corpus.
FUZZ_SMOKE_SECONDS ?= 5
fuzz-smoke: setup-build
	scripts/fuzz smoke $(FUZZ_SMOKE_SECONDS)

# SIGKILL the table and disk cache writers CRASH_ROUNDS times, verifying after each (scripts/crash-test).
CRASH_ROUNDS ?= 200
crash-test: setup-build
	scripts/crash-test $(CRASH_ROUNDS)

# Fails on a public symbol without a `///` doc comment (FILE:LINE and the symbol's name).
check-docs: setup-build
	scripts/check-docs

# The DocC documentation of every library module, with the articles of Sources/Tessera/Tessera.docc and
# Sources/TesseraServer/TesseraServer.docc, as one combined archive in docs-build/ (static HTML: serve it
# with `python3 -m http.server -d docs-build` and open /documentation/tessera). scripts/build-docs documents
# the modules of the tools package's debug build (made first if needed, as `swift test` makes it) with the
# toolchain's swift-symbolgraph-extract and docc: no documentation plugin, no second build of the library.
# Any DocC warning fails the build.
DOCS_TARGETS = TesseraCore TesseraImaging TesseraTables TesseraRemote Tessera TesseraHTTP TesseraServer TesseraVapor
docs: setup-build
	scripts/build-docs $(DOCS_TARGETS)

clean:
	rm -rf .build .build-tsan .build-asan .build-fuzz Tools/.build docs-build dist
