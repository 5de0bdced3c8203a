#!/bin/sh
# Seeds each target's corpus from our own fixtures (never /work/shared):
# captures (first 64 KiB) for pipeline/pcap, log heads for logs/pipeline,
# and seed.py's per-connection exchanges and segments for kafka/tcp.
set -e
cd "$(dirname "$0")"
for t in pipeline pcap kafka tcp logs; do mkdir -p "corpus/$t"; done
for f in ../fixtures/*/*.pcap ../fixtures/*/*.pcapng; do
  [ -f "$f" ] || continue
  head -c 65536 "$f" > "corpus/pipeline/$(basename "$f")"
  head -c 65536 "$f" > "corpus/pcap/$(basename "$f")"
done
for f in ../fixtures/kafka/*.log; do
  [ -f "$f" ] || continue
  head -c 16384 "$f" > "corpus/logs/$(basename "$f")"
  head -c 16384 "$f" > "corpus/pipeline/$(basename "$f")"
done
python3 seed.py
