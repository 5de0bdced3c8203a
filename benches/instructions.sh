#!/usr/bin/env bash
# Instructions executed (valgrind's callgrind, user space, every thread) by
# one or more kgtrace binaries on slices of the throughput benchmark's
# inputs: a count that does not move with the machine's speed, for
# comparing code with code on a VM whose wall times drift by ±20 % from
# one minute to the next (docs/performance-log.md).
#
# Usage: benches/instructions.sh BINARY [BINARY...]
#   e.g. benches/instructions.sh /tmp/kgtrace-before target/release/kgtrace
# Inputs: the files `cargo bench --bench throughput -- dense realog log`
# writes under $KGTRACE_BENCH_DATA (default target/bench-data); slices are
# cut once into $KGTRACE_BENCH_DATA/slices. Needs valgrind.
set -euo pipefail

[ $# -ge 1 ] || { sed -n '2,13p' "$0"; exit 2; }
command -v valgrind >/dev/null || { echo "valgrind is not installed" >&2; exit 2; }
data=${KGTRACE_BENCH_DATA:-target/bench-data}
slices=$data/slices
mkdir -p "$slices"

# slice NAME SOURCE BYTES: the first BYTES of SOURCE (a log cut at a line's
# end, a capture at any byte: kgtrace reads a cut last packet as cut).
slice() {
    local out=$slices/$1 src=$data/$2
    [ -s "$out" ] && { echo "$out"; return; }
    [ -f "$src" ] || { echo "missing $src: run cargo bench --bench throughput -- dense realog log" >&2; return 1; }
    case $1 in
        *.log) head -c "$3" "$src" | sed '$d' > "$out.tmp" ;;
        *) head -c "$3" "$src" > "$out.tmp" ;;
    esac
    mv "$out.tmp" "$out"
    echo "$out"
}

# The realistic log's group lines alone (what its reading and rebuilding cost).
group_lines() {
    local out=$slices/realistic-group-lines-5mb.log
    if [ ! -s "$out" ]; then
        grep -a roup "$data/realistic-server.log" | head -c 5000000 | sed '$d' > "$out.tmp"
        mv "$out.tmp" "$out"
    fi
    echo "$out"
}

# Cut first (a missing input stops the run here, not as an empty count).
realistic=$(slice realistic-200mb.log realistic-server.log 200000000)
lines=$(group_lines)
all_group=$(slice all-group-20mb.log server.log 20000000)
dense=$(slice dense-30mb.pcap dense.pcap 30000000)

cases=(
    "realistic log, first 200 MB|rebalances -q -c|$realistic"
    "realistic log, group lines (5 MB)|rebalances -q -c|$lines"
    "generated all-group log, first 20 MB|rebalances -q -c|$all_group"
    "generated all-group log, first 20 MB|rebalances -q --format json|$all_group"
    "generated all-group log, first 20 MB|rebalances -q --stream --format ndjson|$all_group"
    "dense capture, first 30 MB|rebalances -q --format json|$dense"
)

printf '| input | command |'
for b in "$@"; do printf ' %s |' "$b"; done
printf '\n|---|---|'
for _ in "$@"; do printf -- '---|'; done
printf '\n'
for c in "${cases[@]}"; do
    IFS='|' read -r name cmd input <<< "$c"
    printf '| %s | `%s` |' "$name" "$cmd"
    for b in "$@"; do
        # shellcheck disable=SC2086 # the command's words
        ir=$(valgrind --tool=callgrind --callgrind-out-file=/dev/null "$b" $cmd "$input" 2>&1 >/dev/null \
            | sed -n 's/.*I *refs: *//p' | tr -d ',')
        printf ' %s M |' "$(( ir / 1000000 ))"
    done
    printf '\n'
done
