#!/usr/bin/env python3
"""Seeds the `kafka` and `tcp` fuzz targets from our own fixture captures.

Takes: the captures under ../fixtures (read with tshark). Gives:
corpus/kafka/<capture>.<n>: one connection's exchanges in the kafka target's
record format ([api][version][request len u16][response len u16] request body,
response body, both after their headers); corpus/tcp/<capture>.<n>: one
connection's first segments in the tcp target's format ([side|flags][seq offset
u16][len u8] payload).
"""
import glob
import os
import struct
import subprocess
import sys
from collections import defaultdict

# api key -> (index in the target's APIS, first flexible version)
APIS = {11: (0, 6), 14: (1, 4), 12: (2, 4), 13: (3, 4), 8: (4, 8), 9: (5, 6),
        10: (6, 3), 15: (7, 5), 16: (8, 3), 18: (9, 3), 68: (10, 0), 69: (11, 0),
        0: (12, 9), 1: (13, 12), 2: (14, 6), 3: (15, 9)}
MAX_RECORDS = 48
MAX_SEED = 60000


def uvarint(b, i):
    shift = v = 0
    while i < len(b):
        c = b[i]
        i += 1
        v |= (c & 0x7F) << shift
        if not c & 0x80:
            return v, i
        shift += 7
    return v, i


def skip_tags(b, i):
    n, i = uvarint(b, i)
    for _ in range(min(n, 64)):
        _, i = uvarint(b, i)
        size, i = uvarint(b, i)
        i += size
    return i


def frames(stream):
    i = 0
    while i + 4 <= len(stream):
        (size,) = struct.unpack(">i", stream[i:i + 4])
        if size < 0 or i + 4 + size > len(stream):
            return
        yield stream[i + 4:i + 4 + size]
        i += 4 + size


def packets(path):
    out = subprocess.run(
        ["tshark", "-r", path, "-Y", "tcp", "-o", "tcp.desegment_tcp_streams:FALSE",
         "-o", "tcp.relative_sequence_numbers:TRUE", "-T", "fields",
         "-e", "tcp.stream", "-e", "tcp.dstport", "-e", "tcp.seq", "-e", "tcp.flags",
         "-e", "tcp.payload"],
        capture_output=True, text=True, check=False).stdout
    for line in out.splitlines():
        f = line.split("\t")
        if len(f) < 5 or not f[0]:
            continue
        yield (int(f[0]), int(f[1]) == 9092, int(f[2] or 0), int(f[3], 16),
               bytes.fromhex(f[4].replace(":", "")))


def kafka_seed(client, server):
    responses = {}
    for fr in frames(server):
        if len(fr) >= 4:
            responses[struct.unpack(">i", fr[:4])[0]] = fr
    rec = b""
    n = 0
    for fr in frames(client):
        if len(fr) < 10 or n >= MAX_RECORDS:
            continue
        api, ver, corr, clen = struct.unpack(">hhih", fr[:10])
        if api not in APIS or not 0 <= ver <= 255:
            continue
        index, flexible = APIS[api]
        i = 10 + max(clen, 0)
        if ver >= flexible and api != 18 or api == 18 and ver >= 3:
            i = skip_tags(fr, i)
        req = fr[i:][:65535]
        resp = responses.get(corr, b"")
        j = 4
        if ver >= flexible and api != 18:
            j = skip_tags(resp, j)
        resp = resp[j:][:65535]
        rec += struct.pack(">BBHH", index, ver, len(req), len(resp)) + req + resp
        n += 1
        if len(rec) > MAX_SEED:
            break
    return rec


def tcp_seed(segs):
    rec = b""
    for to_server, seq, flags, payload in segs[:200]:
        side = 0 if to_server else 1
        b0 = side | (2 if flags & 0x02 else 0) | (0 if flags & 0x10 else 4) \
            | (8 if flags & 0x01 else 0) | (16 if flags & 0x04 else 0)
        payload = payload[:255]
        rec += struct.pack(">BHB", b0, seq & 0xFFFF, len(payload)) + payload
    return rec


def main():
    os.chdir(os.path.dirname(os.path.abspath(__file__)))
    for t in ("kafka", "tcp"):
        os.makedirs(f"corpus/{t}", exist_ok=True)
    caps = sorted(glob.glob("../fixtures/*/*.pcap") + glob.glob("../fixtures/*/*.pcapng"))
    for cap in caps:
        streams = defaultdict(lambda: ([], []))
        segs = defaultdict(list)
        for stream, to_server, seq, flags, payload in packets(cap):
            streams[stream][0 if to_server else 1].append((seq, payload))
            segs[stream].append((to_server, seq, flags, payload))
        name = os.path.basename(cap)
        for s, (c, sv) in list(streams.items())[:20]:
            join = lambda parts: b"".join(p for _, p in sorted(dict(parts).items()))
            rec = kafka_seed(join(c), join(sv))
            if rec:
                open(f"corpus/kafka/{name}.{s}", "wb").write(rec)
        for s, ss in list(segs.items())[:4]:
            open(f"corpus/tcp/{name}.{s}", "wb").write(tcp_seed(ss))
    for t in ("kafka", "tcp"):
        print(t, len(os.listdir(f"corpus/{t}")), file=sys.stderr)


main()
