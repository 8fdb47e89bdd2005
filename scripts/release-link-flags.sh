#!/bin/sh
# Prints the extra `swift build` flags for the release tools on Linux (their link, and one flag of
# their compilation), or nothing where the toolchain cannot build so (the tools are then the same,
# only larger in memory or slower to start):
#   - lld, which Swift ships on Linux, instead of gold;
#   - the code the everyday commands run laid out together (ORDER_FILE, scripts/link-order.txt,
#     made by scripts/link-order.py), each function in a section of its own (-function-sections,
#     -ffunction-sections) so that the order places functions, not whole source files: a
#     2,000-note merge maps about 4 MB less of the binary's code, a 20,000-note validate 1.5 MB
#     less again;
#   - relative relocations packed (DT_RELR): every start maps and applies a few KB of them instead
#     of 1.2 MB. A binary linked so needs glibc 2.36 or later where it runs; PACK=no leaves them
#     out (tools built for an older system), as does a build machine whose glibc is older;
#   - with CXX_DIR, the C++ runtime (libstdc++, which Swift's runtime uses) linked in statically:
#     only the parts used are in the binary, instead of the whole shared library mapped and
#     relocated at every start (about 1 MB less resident memory a process). Swift's driver
#     asks for it as -lstdc++; CXX_DIR gets a libstdc++.so that is a linker script naming the
#     toolchain's libstdc++.a, and goes first in the library search path. Left out where no
#     libstdc++.a is found or a program linked so does not run;
#   - type metadata asked for through accessor calls instead of mangled names
#     (-disable-concrete-type-metadata-mangled-name-accessors, a flag of the compiler's front
#     end, for every module of the build): the runtime resolves a mangled name's conformances by
#     scanning every conformance record in the binary (thousands, with Swift's runtime linked
#     in), once per type and protocol, and a command's start-up and argument parsing asked for
#     hundreds; a 2,000-note `pnmerge merge -o` runs about 5% fewer instructions
#     (Benchmarks/HISTORY.md, 2026-11-29). Left out where the compiler refuses it.
# Each is tried by linking and running a one-line program first, and a note on standard error
# says what was left out and why.
# Usage: scripts/release-link-flags.sh SWIFTC ORDER_FILE [PACK [CXX_DIR]]
#   (PACK: yes, the default, or no; CXX_DIR: a folder for the static C++ runtime's link script)
usage="usage: release-link-flags.sh SWIFTC ORDER_FILE [yes|no [CXX_DIR]]"
[ $# -ge 2 ] || { echo "$usage" >&2; exit 2; }
swiftc=$1 order=$2 pack=${3:-yes} cxxdir=${4:-}
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
  flags="$flags $packed"
elif try "$flags"; then
  [ "$pack" = no ] || note "packed relocations need glibc 2.36 or later: left out"
else
  flags=none
fi

# The static C++ runtime: tried with Swift's static runtime, which is what asks for it.
cxx=
case "$cxxdir" in
  "" | none) ;;
  *[[:space:]]*) note "$cxxdir: a path with spaces cannot be passed to the linker: the C++ runtime linked as a shared library" ;;
  *)
    clang=$(dirname "$(command -v "$swiftc")")/clang
    archive=$("$clang" -print-file-name=libstdc++.a 2>/dev/null)
    case "$archive" in
      /*) ;;
      *) archive= ;;
    esac
    if [ "$flags" != none ] && [ -n "$archive" ] && [ -f "$archive" ] && mkdir -p "$cxxdir" \
       && printf 'INPUT(%s)\n' "$archive" > "$cxxdir/libstdc++.so" && try "$flags -static-stdlib -L $cxxdir" \
       && ! { command -v readelf >/dev/null 2>&1 && readelf -d "$dir/probe" | grep -q 'libstdc++'; }; then
      cxx="-Xswiftc -L -Xswiftc $cxxdir"
    else
      note "no static C++ runtime (libstdc++.a) that links here: the C++ runtime linked as a shared library"
      [ -n "$cxxdir" ] && rm -f "$cxxdir/libstdc++.so"
    fi ;;
esac

# The compiler's flags below are tried with the link the tools get: lld and the flags above
# when those link here, else the default linker.
linking=
[ "$flags" != none ] && linking="-use-ld=lld $flags"

meta=
# shellcheck disable=SC2086
if "$swiftc" $linking -Xfrontend -disable-concrete-type-metadata-mangled-name-accessors "$dir/probe.swift" -o "$dir/probe-meta" >"$dir/log-meta" 2>&1 \
   && [ "$("$dir/probe-meta" 2>/dev/null)" = linked ]; then
  meta="-Xswiftc -Xfrontend -Xswiftc -disable-concrete-type-metadata-mangled-name-accessors"
else
  note "the compiler does not take -disable-concrete-type-metadata-mangled-name-accessors: left out"
fi

# A section per function (Swift and C), so that the order file places each function on its own:
# without, a source file's functions move together, and a command touches the code of many
# files spread over the binary. Only with an order to follow.
sections=
if [ "$flags" != none ] && [ -n "$order" ]; then
  # shellcheck disable=SC2086
  if "$swiftc" $linking -Xfrontend -function-sections "$dir/probe.swift" -o "$dir/probe-sections" >"$dir/log-sections" 2>&1 \
     && [ "$("$dir/probe-sections" 2>/dev/null)" = linked ]; then
    sections="-Xswiftc -Xfrontend -Xswiftc -function-sections -Xcc -ffunction-sections"
  else
    note "the compiler does not take -function-sections: code laid out a source file at a time"
  fi
fi

if [ "$flags" != none ]; then
  echo "-Xswiftc -use-ld=lld $flags${cxx:+ $cxx}${meta:+ $meta}${sections:+ $sections}"
else
  case $failed in
    link) note "lld could not link here ($(tail -n 1 "$dir/log")): linking with the default linker" ;;
    run) note "a program linked with lld did not run here: linking with the default linker" ;;
  esac
  echo "$meta"
fi
