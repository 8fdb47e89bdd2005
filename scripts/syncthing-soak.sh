#!/bin/sh
# Two real Syncthing instances on 127.0.0.1 share one folder; a writer on each side runs
# `peernote add` in a loop for some minutes while they sync; then the script lets them settle
# and prints, for each side, the edits made and the edits its notebook holds. docs/SYNC.md
# quotes its figures. It does not run in CI and installs nothing: it needs syncthing
# (Debian: apt-get install syncthing), curl, and the built peernote and pnmerge.
#
#   scripts/syncthing-soak.sh [--mode file|folder] [--minutes N] [--interval SECONDS]
#                             [--settle SECONDS] [--bin DIR] [--keep]
#
# --mode file    one NAME.peernote file, as most people keep a notebook today (default)
# --mode folder  a notebook folder (`peernote new PATH --folder`); refused, with a clear line,
#                by a peernote that has no notebook folders
# --minutes N    how long the writers run (default 3)
# --interval S   pause between one writer's edits (default 0.2)
# --settle S     longest wait for the two sides to agree once the writers stop (default 120)
# --bin DIR      where peernote and pnmerge are (default: .build/release, else .build/debug,
#                else PATH)
# --keep         keep the temporary folder (homes, logs, both copies) and say where
#
# Each instance has its own home under a temporary folder, listens on tcp://127.0.0.1:PORT
# only, and has global and local discovery, relays, NAT traversal, usage reporting, crash
# reporting and upgrades off; each knows the other by its explicit address. The folder is
# shared through each instance's REST API with Syncthing's default folder settings
# (file-system watcher on, 10 s delay). Both instances are stopped when the script ends,
# however it ends (trap). The whole run is bounded: minutes + about 2 x settle + 2 minutes.
set -eu

mode=file minutes=3 interval=0.2 settle=120 bin= keep=no
while [ $# -gt 0 ]; do
    case $1 in
    --mode) mode=${2:?--mode needs file or folder}; shift 2 ;;
    --minutes) minutes=${2:?--minutes needs a number}; shift 2 ;;
    --interval) interval=${2:?--interval needs seconds}; shift 2 ;;
    --settle) settle=${2:?--settle needs seconds}; shift 2 ;;
    --bin) bin=${2:?--bin needs a folder}; shift 2 ;;
    --keep) keep=yes; shift ;;
    -h|--help) sed -n '2,26p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "syncthing-soak: unknown option $1 (see --help)" >&2; exit 64 ;;
    esac
done
case $mode in file|folder) ;; *) echo "syncthing-soak: --mode must be file or folder, not $mode" >&2; exit 64 ;; esac
case $minutes in ''|*[!0-9]*) echo "syncthing-soak: --minutes must be a whole number" >&2; exit 64 ;; esac
case $settle in ''|*[!0-9]*) echo "syncthing-soak: --settle must be a whole number of seconds" >&2; exit 64 ;; esac

command -v syncthing >/dev/null || { echo "syncthing-soak: syncthing is not installed (Debian: apt-get install syncthing)" >&2; exit 69; }
command -v curl >/dev/null || { echo "syncthing-soak: curl is not installed (Debian: apt-get install curl)" >&2; exit 69; }
root=$(cd "$(dirname "$0")/.." && pwd)
if [ -z "$bin" ]; then
    for candidate in "$root/.build/release" "$root/.build/debug"; do
        if [ -x "$candidate/peernote" ] && [ -x "$candidate/pnmerge" ]; then bin=$candidate; break; fi
    done
fi
if [ -n "$bin" ]; then PATH=$bin:$PATH; export PATH; fi
command -v peernote >/dev/null && command -v pnmerge >/dev/null ||
    { echo "syncthing-soak: peernote and pnmerge not found (swift build, or --bin DIR)" >&2; exit 69; }

work=$(mktemp -d "${TMPDIR:-/tmp}/syncthing-soak.XXXXXX")
pids=
cleanup() {
    for pid in $pids; do kill "$pid" 2>/dev/null || true; done
    for pid in $pids; do wait "$pid" 2>/dev/null || true; done
    if [ "$keep" = yes ]; then echo "kept: $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

if [ "$mode" = folder ]; then
    probe=$(peernote new "$work/probe.peernote" --folder 2>&1) || {
        echo "syncthing-soak: --mode folder needs notebook folders, and this peernote cannot make one: $(echo "$probe" | head -n 1)" >&2
        exit 69
    }
    [ -d "$work/probe.peernote" ] || { echo "syncthing-soak: peernote new --folder made no folder: $probe" >&2; exit 69; }
    rm -rf "$work/probe.peernote"
fi

# Ports: four in a row from a base that depends on this process, checked free by curl.
base=$((20000 + $$ % 20000))
gui_a=$base listen_a=$((base + 1)) gui_b=$((base + 2)) listen_b=$((base + 3))
for port in $gui_a $listen_a $gui_b $listen_b; do
    if curl -s -o /dev/null --max-time 1 "http://127.0.0.1:$port/"; then
        echo "syncthing-soak: port $port is in use; run again (ports follow the process id)" >&2; exit 75
    fi
done
key=soak-$$-key

setup_home() { # NAME GUIPORT LISTENPORT
    home=$work/$1/home
    mkdir -p "$work/$1/data"
    syncthing generate --home="$home" --no-default-folder --skip-port-probing >"$work/$1/generate.log" 2>&1
    sed -i \
        -e "s|<listenAddress>default</listenAddress>|<listenAddress>tcp://127.0.0.1:$3</listenAddress>|" \
        -e "s|<address>127.0.0.1:8384</address>|<address>127.0.0.1:$2</address>|" \
        -e "s|<apikey>[^<]*</apikey>|<apikey>$key</apikey>|" \
        -e "s|<globalAnnounceEnabled>true<|<globalAnnounceEnabled>false<|" \
        -e "s|<localAnnounceEnabled>true<|<localAnnounceEnabled>false<|" \
        -e "s|<relaysEnabled>true<|<relaysEnabled>false<|" \
        -e "s|<natEnabled>true<|<natEnabled>false<|" \
        -e "s|<urAccepted>0<|<urAccepted>-1<|" \
        -e "s|<startBrowser>true<|<startBrowser>false<|" \
        -e "s|<crashReportingEnabled>true<|<crashReportingEnabled>false<|" \
        -e "s|<autoUpgradeIntervalH>12<|<autoUpgradeIntervalH>0<|" \
        "$home/config.xml"
    for setting in "<listenAddress>tcp://127.0.0.1:$3<" "<globalAnnounceEnabled>false<" "<localAnnounceEnabled>false<" \
                   "<relaysEnabled>false<" "<natEnabled>false<" "<urAccepted>-1<"; do
        grep -q "$setting" "$home/config.xml" || { echo "syncthing-soak: could not set $setting in $home/config.xml" >&2; exit 70; }
    done
    syncthing serve --home="$home" --device-id
}
id_a=$(setup_home a "$gui_a" "$listen_a")
id_b=$(setup_home b "$gui_b" "$listen_b")

start() { # NAME
    STNOUPGRADE=1 STNODEFAULTFOLDER=1 syncthing serve --home="$work/$1/home" --no-browser --no-restart \
        --logfile="$work/$1/syncthing.log" >"$work/$1/stdout.log" 2>&1 &
    pids="$pids $!"
}
start a
start b

api() { # GUIPORT METHOD PATH [JSON]
    if [ $# -ge 4 ]; then
        curl -s --fail --max-time 10 -X "$2" -H "X-API-Key: $key" -H 'Content-Type: application/json' -d "$4" "http://127.0.0.1:$1$3"
    else
        curl -s --fail --max-time 10 -X "$2" -H "X-API-Key: $key" "http://127.0.0.1:$1$3"
    fi
}
wait_for() { # SECONDS WHAT COMMAND...
    limit=$1 what=$2; shift 2
    i=0
    until "$@" >/dev/null 2>&1; do
        i=$((i + 1))
        [ $i -le "$limit" ] || { echo "syncthing-soak: gave up after ${limit} s waiting for $what (logs: $work, kept)" >&2; keep=yes; exit 75; }
        sleep 1
    done
}
wait_for 60 "instance a's REST API" api "$gui_a" GET /rest/system/ping
wait_for 60 "instance b's REST API" api "$gui_b" GET /rest/system/ping

share() { # GUIPORT NAME OTHERID OTHERLISTEN SELFID
    api "$1" POST /rest/config/devices "{\"deviceID\": \"$3\", \"name\": \"other\", \"addresses\": [\"tcp://127.0.0.1:$4\"]}" >/dev/null
    api "$1" POST /rest/config/folders "{\"id\": \"soak\", \"label\": \"soak\", \"path\": \"$work/$2/data\",
        \"devices\": [{\"deviceID\": \"$5\"}, {\"deviceID\": \"$3\"}]}" >/dev/null
}
share "$gui_a" a "$id_b" "$listen_b" "$id_a"
share "$gui_b" b "$id_a" "$listen_a" "$id_b"
connected() { api "$1" GET /rest/system/connections | grep -q '"connected": *true'; }
wait_for 90 "the two instances to connect" connected "$gui_a"

name=soak.peernote
if [ "$mode" = folder ]; then
    peernote new "$work/a/data/$name" --folder --title "Soak" --author setup >/dev/null
else
    peernote new "$work/a/data/$name" --title "Soak" --author setup >/dev/null
fi
arrived() { pnmerge validate "$work/b/data/$name" >/dev/null 2>&1 || peernote list "$work/b/data/$name" >/dev/null 2>&1; }
wait_for 90 "the new notebook to reach b" arrived

writer() { # NAME
    made=0 failed=0 n=0
    end=$(($(date +%s) + minutes * 60))
    while [ "$(date +%s)" -lt "$end" ]; do
        n=$((n + 1))
        if peernote add "$work/$1/data/$name" --title "$1-$n" --body "edit $n on $1" --author "$1" >/dev/null 2>>"$work/$1/writer.err"; then
            made=$((made + 1))
        else
            failed=$((failed + 1))
        fi
        sleep "$interval"
    done
    echo "$made $failed" >"$work/$1/made"
}
echo "mode $mode: two writers for $minutes min ($(syncthing --version | cut -d' ' -f1-2), peernote from $(command -v peernote))"
writer a &
writer_a=$!
writer b &
writer_b=$!
wait "$writer_a" "$writer_b"

# Settled: both instances idle with nothing to fetch, and the two folders the same (notebook,
# conflict copies, chunk files; Syncthing's own temporary files and marker aside), for 15 polls
# in a row one second apart (longer than the watcher's 10 s delay, so a change not yet scanned
# shows up first).
idle() {
    status=$(api "$1" GET "/rest/db/status?folder=soak") || return 1
    echo "$status" | grep -q '"state": *"idle"' && echo "$status" | grep -q '"needTotalItems": *0'
}
same() { diff -r -q -x '.syncthing.*' -x '.stfolder' "$work/a/data" "$work/b/data" >/dev/null; }
settled() {
    for _ in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15; do idle "$gui_a" && idle "$gui_b" && same || return 1; sleep 1; done
}
settle() { # LABEL
    start=$(date +%s)
    i=0
    until settled; do
        i=$((i + 1))
        if [ $i -ge "$settle" ]; then echo "  ($1: not settled after ${settle} s; counting anyway)"; return; fi
        sleep 1
    done
    echo "  ($1: settled in $(($(date +%s) - start)) s)"
}
found() { # SIDE WRITER: distinct titles WRITER-N in SIDE's notebook
    peernote list "$work/$1/data/$name" --json 2>/dev/null | grep -o "\"title\" *: *\"$2-[0-9]*\"" | sort -u | wc -l | tr -d ' '
}
copies() { find "$work/$1/data" -name '*sync-conflict*' | wc -l | tr -d ' '; }
report() { # LABEL
    echo "$1:"
    for side in a b; do
        echo "  on $side: edits from a $(found $side a), from b $(found $side b); conflict copies $(copies $side)"
    done
}

settle "after the writers stopped"
read -r made_a failed_a <"$work/a/made"
read -r made_b failed_b <"$work/b/made"
echo "edits made: a $made_a (failed $failed_a), b $made_b (failed $failed_b); total $((made_a + made_b))"
report "edits found in each side's notebook"
pnmerge sync "$work/a/data" >"$work/sync.log" 2>&1 || echo "  (pnmerge sync exited $?; $work/sync.log)"
settle "after pnmerge sync on a"
report "after pnmerge sync on a folded the conflict copies still there"
for side in a b; do
    echo "lost on $side: $((made_a + made_b - $(found $side a) - $(found $side b))) of $((made_a + made_b)) edits"
done
