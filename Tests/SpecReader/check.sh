#!/bin/sh
# The spec check: pnread.py, a reader of .peernote written in Python from peernote(5) alone,
# must read every file as the tools do (README.md in this folder). Usage, from the repository:
#   sh Tests/SpecReader/check.sh [BIN_DIR]      (the folder holding pnmerge and peernote; default .build/debug)
# Exits 0 when both readers agree on everything, 1 when they disagree (the lines marked DIFF or !!
# say where), 2 when it cannot run.
set -u
cd "$(dirname "$0")/../.." || exit 2
BIN=${1:-.build/debug}
if ! command -v python3 >/dev/null 2>&1; then
  echo "spec check SKIPPED: python3 is not installed (apt-get install python3); the Swift tests above ran" >&2
  exit 0
fi
for tool in pnmerge peernote; do
  [ -x "$BIN/$tool" ] || { echo "spec check: $BIN/$tool not found (build first: swift build)" >&2; exit 2; }
done
WORK=$(mktemp -d "${TMPDIR:-/tmp}/pn-spec-check.XXXXXX") || exit 2
trap 'rm -rf "$WORK"' EXIT
export PN_BIN="$BIN" PN_FIXTURES=Fixtures PN_WORK="$WORK" PYTHONDONTWRITEBYTECODE=1
status=0
run() {  # run NAME COMMAND...: quiet when it passes, its whole output when it fails
  if "$@" >"$WORK/out.txt" 2>&1; then
    echo "spec check: $NAME: agree"
  else
    echo "spec check: $NAME: DISAGREE"; cat "$WORK/out.txt"; status=1
  fi
}
NAME="fixtures ($(ls Fixtures/*.peernote Fixtures/damaged/*.peernote | wc -l | tr -d ' ') files)"
run python3 Tests/SpecReader/compare.py Fixtures/*.peernote Fixtures/damaged/*.peernote
NAME="crafted variants of the fixtures"; run python3 Tests/SpecReader/mutate.py
NAME="crafted variants, more"; run python3 Tests/SpecReader/mutate.py more
NAME="hand-built op shapes"; run python3 Tests/SpecReader/craft.py
for seed in 1 2; do
  NAME="random CLI session, seed $seed, 40 steps on 3 copies"
  run python3 Tests/SpecReader/fuzz.py "$seed" 40 "$WORK/fuzz$seed"
done
NAME="notebook folders (chunk names, chains, the folder's notebook)"; run python3 Tests/SpecReader/folders.py
# The same with the tools writing format version 3 (not yet their default).
NAME="random CLI session writing format version 3, seed 3, 40 steps on 3 copies"
run env PEERNOTE_WRITE_FORMAT=3 python3 Tests/SpecReader/fuzz.py 3 40 "$WORK/fuzz3"
unset NAME
exit $status
