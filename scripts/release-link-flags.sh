#!/bin/sh
# Prints the extra `swift build` flags for the release tools' link on Linux, or nothing where the
# toolchain cannot link so (the tools are then the same, only heavier to start):
#   - lld, which Swift ships on Linux, instead of gold;
#   - relative relocations packed (DT_RELR, glibc 2.36 and later): every start maps and applies
#     a few KB of them instead of 1.2 MB;
#   - the code the everyday commands run laid out together (scripts/link-order.txt, made by
#     scripts/link-order.py): a 2,000-note merge maps about 4 MB less of the binary's code;
#   - no dynamic symbol table of the tools' own functions (SwiftPM exports them all; nothing
#     loads the tools as a library): 418 dynamic symbols instead of 8,549 to map and look through.
# A trial link of a one-line program, run once, tells whether this machine's swiftc, lld and C
# library do all of it. Usage: scripts/release-link-flags.sh SWIFTC ORDER_FILE
swiftc=${1:-swiftc}
order=$2
[ "$(uname -s)" = Linux ] || exit 0
[ -f "$order" ] || { echo "release-link-flags.sh: $order missing: linking with the default linker" >&2; exit 0; }
dir=$(mktemp -d) || exit 0
trap 'rm -rf "$dir"' EXIT
printf 'print("linked")\n' > "$dir/probe.swift"
linker="-Xlinker -z -Xlinker pack-relative-relocs -Xlinker --symbol-ordering-file=$order -Xlinker --no-warn-symbol-ordering -Xlinker --no-export-dynamic"
# shellcheck disable=SC2086
if "$swiftc" -use-ld=lld $linker "$dir/probe.swift" -o "$dir/probe" >/dev/null 2>&1 && [ "$("$dir/probe" 2>/dev/null)" = linked ]; then
  echo "-Xswiftc -use-ld=lld $linker"
else
  echo "release-link-flags.sh: this toolchain cannot link with lld and packed relocations: linking with the default linker" >&2
fi
