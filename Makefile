# PeerNote: build, test and demo. Every target installs what it needs.
SWIFT ?= swift
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
BIN := .build/release

.PHONY: all deps build release test spec-check demo bench stress fuzz fuzz-build fuzz-ci clean fixtures

all: build

# libcbor and libdeflate headers (Debian/Ubuntu); mandoc, which the tests run to lint the man
# pages; zsh and fish, in which the tests run the completion scripts. Skipped when already installed.
deps:
	@if ! pkg-config --exists libcbor 2>/dev/null || ! pkg-config --exists libdeflate 2>/dev/null || ! command -v mandoc >/dev/null \
	  || ! command -v zsh >/dev/null || ! command -v fish >/dev/null; then \
	  echo "Installing libcbor-dev, libdeflate-dev, mandoc, zsh and fish"; \
	  $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq libcbor-dev libdeflate-dev pkg-config mandoc zsh fish >/dev/null; \
	fi

build: deps
	$(SWIFT) build

# On Linux the release tools carry Swift's runtime (--static-swift-stdlib): they run where
# Swift is not installed (they still need libcbor, libdeflate and libgcc_s, and libstdc++ where
# the C++ runtime could not be linked in: README, Install), start in about 4 ms instead of 6, and a merge takes about 5 ms less
# (Benchmarks/HISTORY.md, 2026-11-23, c604d28). Apple platforms have no static Swift runtime: there the flag is left out.
STATIC_STDLIB := $(if $(filter Linux,$(shell uname -s)),--static-swift-stdlib)

# On Linux the release tools are linked by lld (shipped with Swift there) with the code the
# everyday commands run laid out together, a function at a time (scripts/link-order.txt, each
# function compiled into a section of its own) and packed relative relocations: a 2,000-note
# merge then maps about 4 MB less of the binary's code (Benchmarks/HISTORY.md, 3576cf7), a
# 20,000-note validate 1.5 MB less again; and with the C++ runtime linked in statically (its used parts
# only: about 1 MB less resident memory a process, Benchmarks/HISTORY.md, 2026-11-29).
# Their code also asks for type metadata through accessor calls rather than mangled names, which
# the runtime resolves by scanning every protocol conformance record (start-up and argument
# parsing asked for hundreds): about 5% fewer instructions for a 2,000-note merge.
# scripts/release-link-flags.sh tries each by a trial link and leaves out what fails. Binaries with packed relocations need glibc 2.36 or later where they
# run: `make release PACK_RELOCS=no` builds tools for an older system.
SWIFTC ?= $(SWIFT)c
PACK_RELOCS ?= yes
RELEASE_LINK = $(if $(filter Linux,$(shell uname -s)),$(shell sh scripts/release-link-flags.sh $(SWIFTC) $(CURDIR)/scripts/link-order.txt $(PACK_RELOCS) $(CURDIR)/.build/static-libstdc++))

# SwiftPM recompiles a module when its sources change, not when the flags do, and relinks
# without reading the order file again: the flags of the last release build are kept in
# .build/release-flags, a change of them builds the release again from scratch, and an order
# file newer than the tools links them again.
release: deps
	@flags='$(STATIC_STDLIB) $(RELEASE_LINK)'; stamp=.build/release-flags; \
	bin=$$($(SWIFT) build -c release --show-bin-path); \
	if [ -d "$$bin" ] && [ "$$(cat "$$stamp" 2>/dev/null)" != "$$flags" ]; then \
	  echo "The release flags changed since the last release build: building it again from scratch"; rm -rf "$$bin"; \
	elif [ -f "$$bin/pnmerge" ] && [ scripts/link-order.txt -nt "$$bin/pnmerge" ]; then \
	  rm -f "$$bin/pnmerge" "$$bin/peernote"; \
	fi; \
	echo "$(SWIFT) build -c release $$flags"; \
	$(SWIFT) build -c release $$flags && mkdir -p .build && printf '%s\n' "$$flags" > "$$stamp"

# The Swift tests, then the spec check: pnread.py, a reader written from peernote(5) alone,
# must read the fixtures, crafted files and random CLI sessions as the tools do
# (Tests/SpecReader/README.md).
test: deps
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build
	@sh Tests/SpecReader/check.sh .build/debug

spec-check: build
	@sh Tests/SpecReader/check.sh .build/debug

demo: release
	@sh scripts/demo.sh $(BIN)

# Rewrites Fixtures/ (sample and damaged documents) from Tests/PeerNoteTests/FixtureGeneration.swift.
# Without PEERNOTE_WRITE_FIXTURES, `swift test` checks the committed files are byte-identical.
fixtures: deps
	PEERNOTE_WRITE_FIXTURES=1 $(SWIFT) test --filter 'FixtureGeneration|fuzzFixturesAreUpToDate'

# Benchmarks on the public editing traces in ../shared/traces (see Benchmarks/README.md).
bench: deps
	$(SWIFT) run -c release --package-path Benchmarks pnbench run automerge-paper
	$(SWIFT) run -c release --package-path Benchmarks pnbench run friendsforever

# The adversarial corpus (Tests/PeerNoteTests/AdversarialCorpus.swift) at four doubling sizes
# per family, timed through the release tools: growth tables for docs/ROBUSTNESS.md.
stress: release
	$(SWIFT) build --build-tests
	@bash scripts/stress.sh $(BIN) .build/stress-corpus

# libFuzzer targets (Fuzz/, a separate package): each runs FUZZ_SECONDS (default 60) on a seed
# corpus built from Fixtures/ into fuzz-corpus/ (kept between runs; both folders are gitignored).
# Crashes, hangs (-timeout) and huge allocations (-rss_limit_mb, -malloc_limit_mb) land in
# fuzz-artifacts/TARGET/; make fails if any target found one. See docs/ROBUSTNESS.md.
FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?= FuzzLoad FuzzMerge FuzzDecodeCBOR FuzzColumns FuzzSalvage FuzzMergeHistories
FUZZ_FLAGS ?= -max_len=65536 -rss_limit_mb=2048 -malloc_limit_mb=2048 -timeout=10 -print_final_stats=1
FUZZ_BIN := Fuzz/.build/release

# The explicit -sanitize-coverage matters: SwiftPM passes -sanitize=fuzzer and -sanitize=address to
# swiftc in no fixed order, and with -sanitize=fuzzer first swiftc emits no coverage at all (the
# fuzzers then run blind: "cov: 0"). See docs/ROBUSTNESS.md.
FUZZ_COVERAGE := -Xswiftc -sanitize-coverage=edge,trace-cmp,inline-8bit-counters,pc-table

fuzz-build: deps
	$(SWIFT) build -c release --package-path Fuzz --sanitize=fuzzer --sanitize=address $(FUZZ_COVERAGE)

fuzz: fuzz-build
	@python3 Fuzz/fuzz-seeds.py Fixtures fuzz-corpus
	@status=0; for t in $(FUZZ_TARGETS); do \
	  mkdir -p fuzz-artifacts/$$t fuzz-corpus/$$t; \
	  echo "== $$t for $(FUZZ_SECONDS) s"; \
	  $(FUZZ_BIN)/$$t fuzz-corpus/$$t $(FUZZ_FLAGS) -max_total_time=$(FUZZ_SECONDS) \
	    -artifact_prefix=fuzz-artifacts/$$t/ 2>fuzz-artifacts/$$t/log.txt || status=1; \
	  grep -E '^(stat::|INFO: Done|==[0-9]+==ERROR|SUMMARY)' fuzz-artifacts/$$t/log.txt || true; \
	done; exit $$status

# CI's short fuzz run: builds the targets, then runs each FUZZ_CI_SECONDS (default 15: about a
# minute and a quarter for the five) on a fresh seed corpus from Fixtures/ in fuzz-ci/ (gitignored). Fails only
# on a finding (crash, leak, timeout, out-of-memory) or a target that does not run.
FUZZ_CI_SECONDS ?= 15

fuzz-ci: fuzz-build
	@bash Fuzz/fuzz-ci.sh $(FUZZ_BIN) fuzz-ci $(FUZZ_CI_SECONDS) $(FUZZ_TARGETS)

clean:
	rm -rf .build Fuzz/.build fuzz-ci
