#!/bin/sh
# Runs fuzz targets one after another for 10 minutes each (the CPU is
# shared), from the binaries `cargo +nightly fuzz build -O` left in
# $CARGO_TARGET_DIR (default fuzz/target), so that editing the crate while
# they run does not rebuild them. Usage: fuzz/run.sh [target...]
# (default: kafka tcp logs pcap pipeline). Logs go to fuzz/logs/.
set -u
cd "$(dirname "$0")"
bin="${CARGO_TARGET_DIR:-target}/x86_64-unknown-linux-gnu/release"
mkdir -p logs
for t in ${*:-kafka tcp logs pcap pipeline}; do
  mkdir -p "corpus/$t" "artifacts/$t"
  start=$(date -u +%FT%TZ)
  nice -n 15 "$bin/$t" -artifact_prefix="artifacts/$t/" -max_len=16384 -timeout=25 \
    -rss_limit_mb=2048 -max_total_time=600 -jobs=1 -workers=1 "corpus/$t" \
    > "logs/$t.log" 2>&1
  echo "$t: started $start, exit $?, $(grep -E '^#[0-9]+' fuzz-0.log | tail -1)" >> logs/summary.txt
  mv fuzz-0.log "logs/$t.fuzz.log"
done
