#!/bin/sh
# Merges every ordered pair of fixtures with two pnmerge binaries and reports every difference
# in exit code, standard output, standard error or bytes written.
#
#   sh scripts/compare-merges.sh OLD_PNMERGE NEW_PNMERGE [FIXTURE ...]
#
# The fixtures default to Fixtures/*.peernote and Fixtures/damaged/*.peernote. For each ordered
# pair (MINE, THEIRS) of distinct fixtures, each binary runs in turn in the same folder, on copies
# with the same names, so that messages naming files are comparable:
#   merge MINE THEIRS -o OUT           (and OUT's bytes)
#   merge MINE THEIRS -o OUT --json    (and OUT's bytes)
#   merge MINE THEIRS                  (in place: MINE's bytes after, and after `compact`)
# Prints one line per difference and a summary; exits 1 when anything differs.
set -u
if [ $# -lt 2 ]; then
    echo "usage: sh scripts/compare-merges.sh OLD_PNMERGE NEW_PNMERGE [FIXTURE ...]" >&2
    exit 64
fi
old=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
new=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
shift 2
root=$(cd "$(dirname "$0")/.." && pwd)
if [ $# -eq 0 ]; then
    set -- "$root"/Fixtures/*.peernote "$root"/Fixtures/damaged/*.peernote
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/compare-merges.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM

# Runs one case with binary $1 in folder $2: $3 is a label, the rest the arguments.
# Leaves rc, out, err (and the files written) in $2/$3.*
run() {
    bin=$1 dir=$2 label=$3
    shift 3
    (cd "$dir" && PEERNOTE_LOCK_DIR="$dir/.locks" "$bin" "$@" >"$label.out" 2>"$label.err"; echo $? >"$label.rc")
}

pairs=0 cases=0 differ=0
for a in "$@"; do
    for b in "$@"; do
        [ "$a" = "$b" ] && continue
        pairs=$((pairs + 1))
        for side in old new; do
            d="$work/run"
            rm -rf "$d" "$work/$side"
            mkdir -p "$d/.locks"
            chmod 700 "$d/.locks"
            eval bin=\$$side
            cp "$a" "$d/mine.peernote"
            cp "$b" "$d/theirs.peernote"
            run "$bin" "$d" out merge mine.peernote theirs.peernote -o merged.peernote
            [ -f "$d/merged.peernote" ] && mv "$d/merged.peernote" "$d/out.bytes"
            run "$bin" "$d" json merge mine.peernote theirs.peernote -o merged.peernote --json
            [ -f "$d/merged.peernote" ] && mv "$d/merged.peernote" "$d/json.bytes"
            run "$bin" "$d" inplace merge mine.peernote theirs.peernote
            cp "$d/mine.peernote" "$d/inplace.bytes"
            run "$bin" "$d" compact compact mine.peernote
            cp "$d/mine.peernote" "$d/compact.bytes"
            rm -rf "$d/.locks" "$d/mine.peernote" "$d/theirs.peernote"
            mv "$d" "$work/$side"
        done
        for f in out.rc out.out out.err out.bytes json.rc json.out json.err json.bytes \
                 inplace.rc inplace.out inplace.err inplace.bytes compact.rc compact.out compact.err compact.bytes; do
            cases=$((cases + 1))
            if [ -e "$work/old/$f" ] || [ -e "$work/new/$f" ]; then
                if ! cmp -s "$work/old/$f" "$work/new/$f"; then
                    differ=$((differ + 1))
                    echo "differs: $(basename "$a") $(basename "$b") $f"
                fi
            fi
        done
    done
done
echo "$pairs ordered pairs, $cases comparisons, $differ differ"
[ "$differ" -eq 0 ]
