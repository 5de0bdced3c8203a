#!/bin/sh
# Seeds each target's corpus from our own fixtures (fixtures/lab): the
# captures for pipeline/pcap, their Kafka payloads via the pipeline, and
# lines of logs written by the tests for logs.
set -e
cd "$(dirname "$0")"
for t in pipeline pcap kafka tcp logs; do mkdir -p "corpus/$t"; done
for f in ../fixtures/lab/*.pcap ../fixtures/lab/*.pcapng ../fixtures/kafka/*.pcap; do
  [ -f "$f" ] || continue
  cp "$f" corpus/pipeline/
  cp "$f" corpus/pcap/
  # The first 4 KiB of each capture as raw bytes for the stream targets.
  head -c 4096 "$f" > "corpus/kafka/$(basename "$f").head"
  head -c 4096 "$f" > "corpus/tcp/$(basename "$f").head"
done
for f in ../fixtures/kafka/*.log; do
  [ -f "$f" ] || continue
  head -c 65536 "$f" > "corpus/logs/$(basename "$f")"
  head -c 65536 "$f" > "corpus/pipeline/$(basename "$f")"
done
