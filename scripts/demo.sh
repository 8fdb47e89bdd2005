#!/bin/sh
# The main job on the bundled fixtures: check two diverged copies, merge them, show the result.
# Usage: scripts/demo.sh BIN_DIR   (make demo passes .build/release)
set -eu
BIN=${1:-.build/release}
PNMERGE="$(cd "$BIN" && pwd)/pnmerge"
ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/peernote-demo.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
cp "$ROOT"/Fixtures/grocery-laptop.peernote "$ROOT"/Fixtures/grocery-phone.peernote \
   "$ROOT"/Fixtures/meeting-alice.peernote "$ROOT"/Fixtures/meeting-bob.peernote \
   "$ROOT"/Fixtures/unrelated-a.peernote "$ROOT"/Fixtures/unrelated-b.peernote "$WORK"/
cd "$WORK"

if [ -t 1 ] && [ -z "${NO_COLOR:-}" ]; then B='\033[1m'; N='\033[0m'; else B=''; N=''; fi
step() { printf "\n${B}== %s${N}\n\$ %s\n" "$1" "$2"; }

step "1. Two copies of a grocery list, edited offline on a laptop and a phone" \
     "pnmerge validate grocery-laptop.peernote grocery-phone.peernote"
"$PNMERGE" validate grocery-laptop.peernote grocery-phone.peernote

step "2. What each copy has that the other lacks" "pnmerge diff grocery-laptop.peernote grocery-phone.peernote"
"$PNMERGE" diff grocery-laptop.peernote grocery-phone.peernote

step "3. Merge the phone's edits into the laptop's copy (written atomically, in place)" \
     "pnmerge merge grocery-laptop.peernote grocery-phone.peernote"
"$PNMERGE" merge grocery-laptop.peernote grocery-phone.peernote

step "4. The merged notebook: every edit from both devices" "pnmerge show grocery-laptop.peernote"
"$PNMERGE" show grocery-laptop.peernote

step "5. Merging again changes nothing" "pnmerge merge grocery-laptop.peernote grocery-phone.peernote"
"$PNMERGE" merge grocery-laptop.peernote grocery-phone.peernote

step "6. Meeting notes edited by Alice and Bob: conflicts are kept and reported, nothing is lost" \
     "pnmerge merge meeting-alice.peernote meeting-bob.peernote -o meeting.peernote"
"$PNMERGE" merge meeting-alice.peernote meeting-bob.peernote -o meeting.peernote

step "7. History of the merged meeting notes, as a graph" "pnmerge log --graph meeting.peernote"
"$PNMERGE" log --graph meeting.peernote | head -40

step "8. Copies of two different notebooks are refused, and nothing is written" \
     "pnmerge merge unrelated-a.peernote unrelated-b.peernote"
status=0
"$PNMERGE" merge unrelated-a.peernote unrelated-b.peernote || status=$?
echo "(exit status $status: unrelated documents)"

step "9. Damaged files are rejected with the byte offset and what is wrong" \
     "pnmerge validate Fixtures/damaged/*.peernote"
status=0
( cd "$ROOT" && "$PNMERGE" validate Fixtures/damaged/*.peernote ) || status=$?
echo "(exit status $status: invalid or damaged input)"
