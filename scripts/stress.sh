#!/bin/bash
# The adversarial corpus at four doubling sizes, timed through the built tools: one growth
# table per family (docs/ROBUSTNESS.md, "Pathological histories"). Usage, from the repository:
#   bash scripts/stress.sh [BIN_DIR] [CORPUS_DIR]     (defaults: .build/release, .build/stress-corpus)
# The corpus is written by the test AdversarialCorpusTests/writeCorpus (PEERNOTE_STRESS_DIR);
# each command runs once per file under /usr/bin/time (wall seconds, peak resident memory).
# A command that fails, or runs past STRESS_TIMEOUT seconds (default 600), is marked so.
# STRESS_DIVISOR divides the sizes (a quicker run, on debug tools for instance); STRESS_FAMILY
# names one family to write and time (the others are not written).
set -u
BIN=${1:-.build/release}
CORPUS=${2:-.build/stress-corpus}
TIMEOUT=${STRESS_TIMEOUT:-600}
for tool in pnmerge peernote; do
  [ -x "$BIN/$tool" ] || { echo "stress: $BIN/$tool not found (build first: make release)" >&2; exit 2; }
done
[ -x /usr/bin/time ] || { echo "stress: /usr/bin/time not found (apt-get install time)" >&2; exit 2; }
mkdir -p "$CORPUS"
CORPUS=$(cd "$CORPUS" && pwd)
if [ -z "${STRESS_REUSE:-}" ] || ! ls "$CORPUS"/*.peernote >/dev/null 2>&1; then
  rm -f "$CORPUS"/*.peernote
  echo "stress: writing the corpus into $CORPUS" >&2
  PEERNOTE_STRESS_DIR="$CORPUS" PEERNOTE_STRESS_DIVISOR="${STRESS_DIVISOR:-1}" PEERNOTE_STRESS_FAMILY="${STRESS_FAMILY:-}" swift test --skip-build --filter 'AdversarialCorpusTests/writeCorpus' >/dev/null \
    || { echo "stress: writing the corpus failed (swift build --build-tests first)" >&2; exit 1; }
fi
WORK=$(mktemp -d "${TMPDIR:-/tmp}/pn-stress.XXXXXX") || exit 2
trap 'rm -rf "$WORK"' EXIT
export PEERNOTE_AUTHOR=stress

# measure CMD...: prints "SECONDS PEAK_MB" or "failed(STATUS)" / "timeout"
measure() {
  /usr/bin/time -f "%e %M" -o "$WORK/time" timeout "$TIMEOUT" "$@" >"$WORK/out" 2>"$WORK/err"
  local rc=$?
  if [ $rc -eq 124 ]; then echo "timeout"; return; fi
  # pnmerge show/list/validate exit 0; merge exits 0 (or 1 for the git driver, unused here)
  if [ $rc -ne 0 ]; then echo "failed($rc)"; return; fi
  awk '{ printf "%.2f / %.0f", $1, $2 / 1024 }' "$WORK/time"
}

families=$(ls "$CORPUS"/*.peernote | sed 's|.*/||; s|-[0-9]*\.peernote$||' | sort -u)
for family in $families; do
  echo "### $family"
  echo
  printf '| n | bytes | validate s / MB | show s / MB | list s / MB | merge s / MB | compact s / MB | log --graph s / MB | graph widest line |\n'
  printf '|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n'
  # by size (the number after the last '-'; the folder's name may hold a '-' too)
  for f in $(ls "$CORPUS/$family"-*.peernote | awk -F- '{ print $NF, $0 }' | sort -n | cut -d' ' -f2-); do
    n=$(basename "$f" .peernote | sed 's/.*-//')
    bytes=$(wc -c <"$f" | tr -d ' ')
    v=$(measure "$BIN/pnmerge" validate "$f")
    s=$(measure "$BIN/pnmerge" show "$f")
    l=$(measure "$BIN/peernote" list "$f")
    # merge: the file and a copy with one more note (a fresh OUT each time)
    cp "$f" "$WORK/theirs.peernote"
    "$BIN/peernote" add "$WORK/theirs.peernote" --title "one more" >/dev/null 2>&1
    rm -f "$WORK/merged.peernote"
    m=$(measure "$BIN/pnmerge" merge "$f" "$WORK/theirs.peernote" -o "$WORK/merged.peernote")
    # compact: a copy rewritten in the canonical order (and read back before it is written)
    cp "$f" "$WORK/compact.peernote"
    c=$(measure "$BIN/pnmerge" compact "$WORK/compact.peernote")
    g=$(measure "$BIN/pnmerge" log --graph "$f")
    w=$(awk '{ if (length($0) > w) w = length($0) } END { print w + 0 }' "$WORK/out")
    printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$n" "$bytes" "$v" "$s" "$l" "$m" "$c" "$g" "$w"
  done
  echo
done
