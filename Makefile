# PeerNote: build, test and demo. Every target installs what it needs.
SWIFT ?= swift
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
BIN := .build/release

.PHONY: all deps build release test demo bench fuzz clean fixtures

all: build

# libcbor and zlib headers (Debian/Ubuntu). Skipped when already installed.
deps:
	@if ! pkg-config --exists libcbor 2>/dev/null || ! pkg-config --exists zlib 2>/dev/null; then \
	  echo "Installing libcbor-dev and zlib1g-dev"; \
	  $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq libcbor-dev zlib1g-dev pkg-config >/dev/null; \
	fi

build: deps
	$(SWIFT) build

release: deps
	$(SWIFT) build -c release

test: deps
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build

demo: release
	@sh scripts/demo.sh $(BIN)

# Rewrites Fixtures/ (sample and damaged documents) from Tests/PeerNoteTests/FixtureGeneration.swift.
# Without PEERNOTE_WRITE_FIXTURES, `swift test` checks the committed files are byte-identical.
fixtures: deps
	PEERNOTE_WRITE_FIXTURES=1 $(SWIFT) test --filter FixtureGeneration

# Benchmarks on the public editing traces in ../shared/traces (see Benchmarks/README.md).
bench: deps
	$(SWIFT) run -c release --package-path Benchmarks pnbench run automerge-paper
	$(SWIFT) run -c release --package-path Benchmarks pnbench run friendsforever

clean:
	rm -rf .build
