#!/bin/sh
# make check-stress: the integration suite on a busy machine, as a login
# node is busy.  Two rounds:
#   1. every core busy at nice 19 (a build someone was kind enough to nice);
#   2. one core busy at nice 0 (someone's program that nobody niced).
# Every test must pass in both.  Each load runs in a session of its own.
# On a kernel with autogroup each session is scheduled as one group, and
# a group's nice is that of its autogroup (/proc/PID/autogroup), not its
# tasks': that is set too, or nice 19 would mean nothing to the tests.
#   stress.sh MAKE ARGS...   (as tests/Makefile.am runs it; LG_TOP_BUILDDIR set)
set -u
spin=${LG_TOP_BUILDDIR:?}/tests/helpers/spin
cores=$(nproc)
status=0
summary=""

round() {
    name=$1 nice=$2 threads=$3
    shift 3
    echo "=== check-stress, $name: $threads busy thread(s) at nice $nice ==="
    setsid sh -c 'echo "$1" >/proc/self/autogroup 2>/dev/null; exec nice -n "$1" "$2" "$3" 1 86400' \
        sh "$nice" "$spin" "$threads" &
    load=$!
    began=$(date +%s)
    rm -f integration/*.log integration/*.trs
    if ! "$@"; then
        status=1
        # The next round starts by removing the logs: what failed is said now.
        for log in integration/*.log; do
            grep -q '^FAIL:\|^ERROR:' "$log" 2>/dev/null || continue
            echo "--- $log"
            grep -A 30 '^FAIL:\|^ERROR:' "$log"
        done
    fi
    kill "$load" 2>/dev/null
    wait "$load" 2>/dev/null
    counts=$(cat integration/*.log 2>/dev/null | awk '
        /^[0-9]+ passed, [0-9]+ failed$/ { p += $1; f += $3 }
        END { printf "%d passed, %d failed", p, f }')
    summary="$summary
  $name: $counts in $(($(date +%s) - began)) s"
}

round "both cores at nice 19" 19 "$cores" "$@"
round "one core at nice 0" 0 1 "$@"
echo "=== check-stress ===$summary"
exit $status
