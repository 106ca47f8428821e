#!/bin/bash
# The bash completion of loginguardctl (tools/completion/loginguardctl):
# sourced into this shell, asked for what a user at a prompt would get.
# Runs without root; the built tool is first on PATH (event kinds come
# from it).
set -u
top_srcdir=${LG_TOP_SRCDIR:-$(dirname "$0")/../..}
top_builddir=${LG_TOP_BUILDDIR:-$top_srcdir}
PATH=$top_builddir/tools:$PATH
# shellcheck source=/dev/null
. "$top_srcdir/tools/completion/loginguardctl"

passed=0
failed=0
dir=$(mktemp -d /tmp/lgcomp.XXXXXX)
trap 'rm -rf "$dir"' EXIT
: >"$dir/loginguard.conf"
: >"$dir/local.conf"
: >"$dir/with blanks.conf"

# complete WORD... : COMPREPLY for the command line WORD..., the cursor
# at the end of the last word ("" for a new word).
complete_line()
{
    COMP_WORDS=("$@")
    COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
    COMP_LINE="$*"
    COMP_POINT=${#COMP_LINE}
    COMPREPLY=()
    _loginguardctl loginguardctl "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
}

replies()
{
    printf '%s\n' "${COMPREPLY[@]}" | sort | tr '\n' ' ' | sed 's/ $//'
}

# expect "WANTED" WORD...: the replies, sorted, are exactly WANTED.
expect()
{
    local want=$1
    shift
    complete_line "$@"
    local got
    got=$(replies)
    if [[ $got == "$want" ]]; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1))
        echo "FAIL: loginguardctl ${*:2}<TAB>: want '$want', got '$got'"
    fi
}

# has "WORD" WORD...: WORD is among the replies (and, with !WORD, not).
has()
{
    local want=$1
    shift
    complete_line "$@"
    local found=no r
    for r in "${COMPREPLY[@]}"; do
        [[ $r == "${want#!}" ]] && found=yes
    done
    if [[ ($want == !* && $found == no) || ($want != !* && $found == yes) ]]; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1))
        echo "FAIL: loginguardctl ${*:2}<TAB>: '$want' among ${COMPREPLY[*]:-nothing}?"
    fi
}

# Commands, and options before one.
expect "check-config cluster events exempt forgive me metrics reload report simulate status user why" loginguardctl ""
expect "status" loginguardctl st
expect "check-config" loginguardctl ch
expect "--json" loginguardctl --j
expect "--config --help --json --socket" loginguardctl --
expect "events" loginguardctl --config /etc/x.conf ev
expect "events" loginguardctl --config = /etc/x.conf ev

# Each command's options, and the global ones.
expect "--all --cluster --config --help --json --socket" loginguardctl status --
expect "--cluster --config --follow --help --json --kind --since --socket --user" loginguardctl events --
expect "--for" loginguardctl exempt root --r --f
expect "--config --for --help --json --reason --remove --socket" loginguardctl exempt root --
expect "--reason --remove" loginguardctl exempt root --re
expect "--reason" loginguardctl forgive root --r
expect "--config --help --json --socket" loginguardctl metrics --
expect "--config --help --json --socket" loginguardctl reload --
expect "--dump" loginguardctl check-config /etc/x.conf --d

# Users, pids, event kinds, files, durations.
has root loginguardctl user ro
has root loginguardctl forgive r
has root loginguardctl exempt ""
has root loginguardctl --json events --user ro
has root loginguardctl events --user = ro
has '!root' loginguardctl user root ""
has '!root' loginguardctl me ""
has 1 loginguardctl why ""
has "$$" loginguardctl why "$$"
has '!1' loginguardctl why 1 ""
expect "violation" loginguardctl events --kind vio
expect "violation" loginguardctl events --kind = vio
expect "violation,limits_error violation,limits_set" loginguardctl events --kind violation,lim
expect "proc_connector_error process_exited process_killed process_stopping" \
    loginguardctl events --follow --kind proc
has user_forgiven loginguardctl events --kind ""
has daemon_stopped loginguardctl events --kind ""
expect "$dir/local.conf $dir/loginguard.conf" loginguardctl check-config "$dir/l"
expect "$dir/loginguard.conf" loginguardctl --config "$dir/log"
has "$dir/with blanks.conf" loginguardctl --config "$dir/w"
expect "$dir/loginguard.conf" loginguardctl --config = "$dir/log"
expect "10m 1d 1h" loginguardctl events --since 1
expect "today" loginguardctl events --since to
expect "1d 1h" loginguardctl exempt bob --for 1
expect "" loginguardctl forgive bob --reason ""
expect "reload report" loginguardctl re
expect "--cluster --config --format --help --json --since --socket --table --until" loginguardctl report --
expect "html" loginguardctl report --format h
expect "programs" loginguardctl report --format csv --table pro
expect "1d 1h" loginguardctl report --until 1
expect "--table" loginguardctl report --format = csv --t
expect "simulate" loginguardctl si
expect "--config --current --help --json --since --socket --trace --until" loginguardctl simulate --
expect "$dir/loginguard.conf" loginguardctl simulate --config "$dir/l" --current "$dir/log"
expect "7d" loginguardctl simulate --config x --since 7
expect "init" loginguardctl cluster ""
expect "--config --grant --help --json --socket" loginguardctl cluster init --
expect "" loginguardctl cluster init --grant ""

# Registered for the command's name.
if complete -p loginguardctl | grep -q -- '-F _loginguardctl'; then
    passed=$((passed + 1))
else
    failed=$((failed + 1))
    echo "FAIL: complete -p loginguardctl"
fi

echo "$passed passed, $failed failed"
[[ $failed == 0 ]]
