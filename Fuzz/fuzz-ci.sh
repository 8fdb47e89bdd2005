#!/usr/bin/env bash
# A short fuzz run for CI (make fuzz-ci): each target runs SECONDS on a fresh seed corpus built
# from Fixtures/. Fails only when libFuzzer reports a finding (a crash, leak, timeout or
# out-of-memory, which it writes as an artifact) or when a target does not run at all.
#
#   Fuzz/fuzz-ci.sh BIN_DIR WORK_DIR SECONDS TARGET...
#
# BIN_DIR holds the built targets (Fuzz/.build/release); WORK_DIR is emptied and receives
# corpus/TARGET, artifacts/TARGET and TARGET.log.
set -uo pipefail
bin=$1 work=$2 seconds=$3
shift 3
cd "$(dirname "$0")/.." || exit 2

rm -rf "$work"
mkdir -p "$work"
python3 Fuzz/fuzz-seeds.py Fixtures "$work/corpus" || exit 2

# The Swift backtracer reads memory in a way AddressSanitizer reports as an error of its own,
# hiding the real one (see docs/ROBUSTNESS.md).
export SWIFT_BACKTRACE=enable=no

failed=()
for t in "$@"; do
  artifacts="$work/artifacts/$t"
  log="$work/$t.log"
  mkdir -p "$artifacts"
  if [ ! -x "$bin/$t" ]; then
    echo "== $t: not built ($bin/$t missing)"
    failed+=("$t")
    continue
  fi
  seeds=$(ls "$work/corpus/$t" | wc -l | tr -d ' ')
  "$bin/$t" "$work/corpus/$t" -max_total_time="$seconds" -max_len=65536 -timeout=10 \
    -rss_limit_mb=2048 -malloc_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$artifacts/" >"$log" 2>&1
  status=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  seed=$(sed -n 's/^INFO: Seed: *//p' "$log" | head -1)
  cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -1)
  found=$(find "$artifacts" -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' \) | sort)
  if [ -n "$found" ]; then
    echo "== $t: FINDING after ${runs:-?} executions (libFuzzer seed ${seed:-?})"
    grep -E '^(==[0-9]+== ?ERROR|ERROR: libFuzzer|SUMMARY|Fatal error|FUZZ INVARIANT|.*: Fatal error| *#[0-9]+ 0x)' "$log" | head -20
    echo "$found" | sed 's/^/   artifact: /'
    # The input itself, so that a finding on a machine whose files are gone (CI) can be
    # reproduced from this log alone:
    #   python3 -c 'import sys; sys.stdout.buffer.write(bytes.fromhex(sys.argv[1]))' HEX > input
    for f in $found; do
      size=$(wc -c <"$f" | tr -d ' ')
      if [ "$size" -le 4096 ]; then
        echo "   input ($size bytes, hex): $(od -An -v -tx1 "$f" | tr -d ' \n')"
      else
        echo "   input: $size bytes (too long to print; its SHA-1 is the artifact's name)"
      fi
    done
    echo "   reproduce: SWIFT_BACKTRACE=enable=no $bin/$t ARTIFACT   (log: $log)"
    failed+=("$t")
  elif [ "$status" -ne 0 ] || [ -z "$runs" ]; then
    echo "== $t: libFuzzer exited with status $status without a finding; the end of $log:"
    tail -15 "$log"
    failed+=("$t")
  else
    echo "== $t: ${seconds} s, $runs executions, ${cov:-cov: ?} edges, corpus $seeds seeds -> $(ls "$work/corpus/$t" | wc -l | tr -d ' ') inputs, no finding"
  fi
done

if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz-ci: FAILED: ${failed[*]}"
  exit 1
fi
echo "fuzz-ci: $# targets, ${seconds} s each, no finding"
