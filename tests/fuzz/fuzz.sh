#!/bin/sh
# make fuzz: build each fuzz target with clang's libFuzzer, AddressSanitizer
# and UndefinedBehaviorSanitizer, run it for FUZZ_SECONDS (default 60) on
# its corpus, merge the inputs that add coverage into the corpus in the
# source tree, and print executions per target.
#
#   fuzz.sh TARGET...     (make passes FUZZ_TARGETS)
#
# From the environment (tests/Makefile.am sets them): top_srcdir,
# top_builddir, FUZZ_DEP_CFLAGS, FUZZ_DEP_LIBS, sysconfdir, localstatedir,
# runstatedir, pkgdatadir.  Optional: FUZZ_SECONDS, FUZZ_CC (clang-14),
# FUZZ_CXX (clang++-14), FUZZ_JOBS (2, parallel compiles), FUZZ_MERGE
# (yes; no leaves the corpora as they are).
#
# The library's sources are compiled here, not taken from the libtool
# build: libFuzzer needs clang's coverage instrumentation in the code
# under test.  Objects are rebuilt when their source, a header or
# config.h is newer.
set -eu

die() {
    echo "make fuzz: $*" >&2
    exit 1
}

: "${top_srcdir:?}" "${top_builddir:?}"
seconds=${FUZZ_SECONDS:-60}
cc=${FUZZ_CC:-clang-14}
cxx=${FUZZ_CXX:-clang++-14}
jobs=${FUZZ_JOBS:-2}
merge=${FUZZ_MERGE:-yes}
fuzzdir=$top_srcdir/tests/fuzz
out=$top_builddir/tests/fuzz/clang
[ $# -gt 0 ] || die "no targets given"

for tool in "$cc" "$cxx"; do
    command -v "$tool" >/dev/null ||
        die "$tool not found: install clang-14 and libclang-rt-14-dev (tools/setup.sh --fuzz)"
done
mkdir -p "$out/obj" "$out/work" "$out/artifacts" "$out/logs"
# The state and notice targets write (and fsync) files in a private
# directory for every input: in memory, where there is one.
if [ -z "${FUZZ_TMPDIR:-}" ] && [ -d /dev/shm ] && [ -w /dev/shm ]; then
    FUZZ_TMPDIR=/dev/shm
fi
TMPDIR=${FUZZ_TMPDIR:-${TMPDIR:-/tmp}}
export TMPDIR

san="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
# Split into words where used; the path macros' double quotes are meant
# for the compiler (configure's paths hold no spaces).
# shellcheck disable=SC2089
cflags="-g -O1 $san -fsanitize=fuzzer-no-link -Wall -Wextra -I$top_builddir -I$top_srcdir/libloginguard -I$top_srcdir/daemon
    -DSYSCONFDIR=\"${sysconfdir:-/etc}\" -DLOCALSTATEDIR=\"${localstatedir:-/var}\"
    -DRUNSTATEDIR=\"${runstatedir:-/run}\" -DPKGDATADIR=\"${pkgdatadir:-/usr/share/loginguard}\"
    -DPKGLIBEXECDIR=\"${pkglibexecdir:-/usr/libexec/loginguard}\"
    ${FUZZ_DEP_CFLAGS:-}"

printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return !d + !n; }\n' \
    >"$out/probe.c"
"$cc" -fsanitize=fuzzer "$out/probe.c" -o "$out/probe" 2>"$out/logs/probe.log" ||
    die "$cc cannot link libFuzzer ($(head -n 1 "$out/logs/probe.log")): install libclang-rt-14-dev"

# Whether file $1 was changed after $2 was made.
newer() {
    [ -n "$(find "$1" -newer "$2")" ]
}

# An object is stale when its source, any header of the libraries or of
# the fuzz targets, or config.h changed since it was made.
stale() {
    [ ! -f "$2" ] || newer "$1" "$2" || newer "$top_builddir/config.h" "$2" ||
        newer "$fuzzdir/fuzz.h" "$2" ||
        [ -n "$(find "$top_srcdir/libloginguard" "$top_srcdir/daemon" -name '*.h' -newer "$2" | head -n 1)" ]
}

compile() {
    case $1 in
    *.cc) tool=$cxx ;;
    *) tool=$cc ;;
    esac
    # shellcheck disable=SC2086,SC2090
    if $tool $cflags -c "$1" -o "$2.tmp" 2>"$2.log"; then
        mv "$2.tmp" "$2"
    else
        cat "$2.log" >&2
        rm -f "$2.tmp"
    fi
}

# The libraries: every source but the daemon's main().
objs=""
running=0
for src in "$top_srcdir"/libloginguard/*.c "$top_srcdir"/libloginguard/*.cc "$top_srcdir"/daemon/*/*.c \
    "$fuzzdir/fuzzutil.c"; do
    case $src in */loginguardd.c) continue ;; esac
    base=${src##*/}
    obj=$out/obj/${base%.*}.o
    objs="$objs $obj"
    if stale "$src" "$obj"; then
        rm -f "$obj"
        compile "$src" "$obj" &
        running=$((running + 1))
        if [ "$running" -ge "$jobs" ]; then
            wait
            running=0
        fi
    fi
done
wait
for obj in $objs; do
    [ -f "$obj" ] || die "${obj##*/}: did not compile (see above)"
done
lib=$out/libloginguard-fuzz.a
for obj in $objs; do
    if [ ! -f "$lib" ] || newer "$obj" "$lib"; then
        # shellcheck disable=SC2086
        rm -f "$lib" && ar rcs "$lib" $objs
        break
    fi
done

# The most bytes an input may have: what the daemon reads of each.
max_len() {
    case $1 in
    units) echo 256 ;;
    procfs_stat | proc_connector | cgroup) echo 1024 ;;
    shellquote) echo 2048 ;;
    *) echo 4096 ;;
    esac
}

summary=$out/logs/summary
: >"$summary"
failed=""
for t in "$@"; do
    src=$fuzzdir/fuzz_$t.c
    bin=$out/fuzz_$t
    [ -f "$src" ] || die "no target $t ($src)"
    if stale "$src" "$bin" || newer "$lib" "$bin"; then
        echo "  CCLD     fuzz_$t"
        # shellcheck disable=SC2086,SC2090
        if ! "$cc" $cflags -fsanitize=fuzzer -c "$src" -o "$out/obj/fuzz_$t.o" ||
            ! "$cxx" $san -fsanitize=fuzzer "$out/obj/fuzz_$t.o" "$lib" ${FUZZ_DEP_LIBS:-} -lm \
                -o "$bin"; then
            die "fuzz_$t: did not build"
        fi
    fi
    corpus=$fuzzdir/corpus/$t
    work=$out/work/$t
    mkdir -p "$corpus"
    rm -rf "$work"
    mkdir -p "$work"
    dict=""
    [ -f "$fuzzdir/dict/$t.dict" ] && dict="-dict=$fuzzdir/dict/$t.dict"
    len=$(max_len "$t")
    log=$out/logs/$t.log
    echo "  FUZZ     $t (${seconds}s, inputs up to $len bytes)"
    # New inputs go to the first directory (the build tree's); the corpus
    # in the source tree gets only those the merge below keeps.
    status=0
    # shellcheck disable=SC2086
    "$bin" -max_len="$len" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
        -print_final_stats=1 -artifact_prefix="$out/artifacts/$t-" $dict \
        "$work" "$corpus" >"$log" 2>&1 || status=$?
    before=$(find "$corpus" -type f | wc -l)
    if [ "$status" -ne 0 ]; then
        failed="$failed $t"
        tail -n 40 "$log" >&2
    elif [ "$merge" = yes ]; then
        # Only inputs that reach code the corpus does not (edges, not hit
        # counts): the corpus stays a few dozen small files.
        # shellcheck disable=SC2086
        "$bin" -merge=1 -use_counters=0 -max_len="$len" $dict "$corpus" "$work" \
            >"$out/logs/$t.merge.log" 2>&1 ||
            die "$t: merging into $corpus failed (see $out/logs/$t.merge.log)"
    fi
    after=$(find "$corpus" -type f | wc -l)
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
    printf '%-16s %12s %10s %8s %6s %s\n' "$t" "${execs:-?}" "${rate:-?}" "$after" \
        "+$((after - before))" "$([ "$status" -eq 0 ] && echo ok || echo "FAILED (see $log)")" \
        >>"$summary"
done

echo
printf '%-16s %12s %10s %8s %6s %s\n' target executions execs/s corpus added result
cat "$summary"
if [ -n "$failed" ]; then
    echo "make fuzz: failed:$failed; the inputs are in $out/artifacts/" >&2
    exit 1
fi
