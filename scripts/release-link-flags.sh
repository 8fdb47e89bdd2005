#!/bin/sh
# Prints the extra `swift build` flags for the release tools' link on Linux, or nothing where the
# toolchain cannot link so (the tools are then the same, only larger in memory):
#   - lld, which Swift ships on Linux, instead of gold;
#   - the code the everyday commands run laid out together (ORDER_FILE, scripts/link-order.txt,
#     made by scripts/link-order.py): a 2,000-note merge maps about 4 MB less of the binary's code;
#   - relative relocations packed (DT_RELR): every start maps and applies a few KB of them instead
#     of 1.2 MB. A binary linked so needs glibc 2.36 or later where it runs; PACK=no leaves them
#     out (tools built for an older system), as does a build machine whose glibc is older.
# Each is tried by linking and running a one-line program first, and a note on standard error
# says what was left out and why.
# Usage: scripts/release-link-flags.sh SWIFTC ORDER_FILE [PACK]   (PACK: yes, the default, or no)
usage="usage: release-link-flags.sh SWIFTC ORDER_FILE [yes|no]"
[ $# -ge 2 ] || { echo "$usage" >&2; exit 2; }
swiftc=$1 order=$2 pack=${3:-yes}
[ "$(uname -s)" = Linux ] || exit 0
note() { echo "release-link-flags.sh: $*" >&2; }

command -v "$swiftc" >/dev/null 2>&1 || { note "$swiftc not found: linking with the default linker"; exit 0; }
case "$order" in
  *[[:space:]]*) note "$order: a path with spaces cannot be passed to the linker: code laid out as compiled"; order= ;;
  *) [ -f "$order" ] || { note "$order missing: code laid out as compiled"; order= ; } ;;
esac

dir=$(mktemp -d "${TMPDIR:-/tmp}/pn-link-probe.XXXXXX") || { note "cannot make a temporary folder: linking with the default linker"; exit 0; }
trap 'rm -rf "$dir"' EXIT
trap 'exit 1' HUP INT TERM
printf 'print("linked")\n' > "$dir/probe.swift"

# Links and runs the probe with lld and the linker flags $1; says why it failed when it did.
failed=
try() {
  # shellcheck disable=SC2086
  if ! "$swiftc" -use-ld=lld $1 "$dir/probe.swift" -o "$dir/probe" >"$dir/log" 2>&1; then failed=link; return 1; fi
  if [ "$("$dir/probe" 2>/dev/null)" != linked ]; then failed=run; return 1; fi
}

flags=${order:+"-Xlinker --symbol-ordering-file=$order -Xlinker --no-warn-symbol-ordering"}
packed="-Xlinker -z -Xlinker pack-relative-relocs"
if [ "$pack" != no ] && try "$flags $packed"; then
  echo "-Xswiftc -use-ld=lld $flags $packed"
elif try "$flags"; then
  [ "$pack" = no ] || note "packed relocations need glibc 2.36 or later: left out"
  echo "-Xswiftc -use-ld=lld $flags"
else
  case $failed in
    link) note "lld could not link here ($(tail -n 1 "$dir/log")): linking with the default linker" ;;
    run) note "a program linked with lld did not run here: linking with the default linker" ;;
  esac
fi
