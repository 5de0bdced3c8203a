//! The benchmark's heavy inputs for issue 12: a dense coordinator capture
//! (mostly group traffic), its 256 MB prefix and first 1,024 MB, and a realistic 1 GB
//! `server.log` with about 2 % group-coordinator lines; for the
//! `parallel` cases, the capture's next 256 MB as a second input and the
//! realistic log gzipped.
//!
//! Takes: the generators ([`crate::scenario`], [`crate::serverlog`]) and
//! [`crate::inputs`]' cache. Gives: the files' paths and facts, generated
//! once like the other inputs.

use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use flate2::write::GzEncoder;
use flate2::Compression;

use crate::cases::file_len;
use crate::inputs::{capture, ensure, warm, Input};
use crate::measure::{best_of, cpu_secs, Measured, Sample, Work};
use crate::scenario::Plan;
use crate::serverlog::write_realistic_log;
use crate::{in_child, in_child_many};

/// The dense coordinator capture: 300 groups of 5 to 20 consumers
/// (heartbeats every 3 s, commits every 5 s, Fetch long-polls), a
/// rebalance storm in every fifth group, 10 % of the bytes Fetch/Produce
/// record data; at least 1 GB.
pub const DENSE: Plan = Plan {
    target_bytes: 1_050_000_000,
    groups: 300,
    members: 5,
    seconds: 300,
    spread: 15,
    storm_every: 5,
    bulk_share: 0.1,
};

/// A long coordinator capture for `kgtrace watch`: 40 simulated minutes
/// (longer than the engine's 15-minute windows, so they are trimmed) of 60
/// groups with the dense capture's habits and a third of the bytes Fetch
/// record data. `benches/watch/replay.py --file` feeds it through a pipe.
pub const LONG: Plan = Plan {
    target_bytes: 400_000_000,
    groups: 60,
    members: 5,
    seconds: 2400,
    spread: 15,
    storm_every: 5,
    bulk_share: 0.3,
};

/// The prefix's size.
const PREFIX_BYTES: u64 = 256_000_000;
/// The "1 GB" of issue 12's linearity target ("1 GB takes at most 4.4x
/// the 256 MB prefix"): four prefixes' bytes. The generated capture
/// overshoots its plan (1,213 MB), so the whole file is 4.74x the prefix
/// and cannot be held to the 4x target as it stands.
const GIGABYTE_BYTES: u64 = 4 * PREFIX_BYTES;
/// The realistic log's size.
const REALISTIC_BYTES: u64 = 1_000_000_000;

/// The dense capture.
pub fn dense() -> io::Result<Input> {
    capture("dense.pcap", DENSE)
}

/// The first [`PREFIX_BYTES`] of `full`, cut at a packet boundary.
pub fn dense_prefix(full: &Path) -> io::Result<Input> {
    cut(full, "dense-256mb.pcap", 0, PREFIX_BYTES)
}

/// The first [`GIGABYTE_BYTES`] of `full`, cut at a packet boundary: the
/// same capture as the prefix, four times as long.
pub fn dense_gigabyte(full: &Path) -> io::Result<Input> {
    cut(full, "dense-1gb.pcap", 0, GIGABYTE_BYTES)
}

/// The [`PREFIX_BYTES`] of `full` after the prefix's, cut at packet
/// boundaries: a second capture of the same coordinator (its connections
/// already open when it starts), for reading two inputs at once.
pub fn dense_second(full: &Path) -> io::Result<Input> {
    cut(full, "dense-256mb-b.pcap", PREFIX_BYTES, PREFIX_BYTES)
}

/// `limit` bytes of `full`'s records after its first `skip`, whole
/// packets only, as the input `name`.
fn cut(full: &Path, name: &str, skip: u64, limit: u64) -> io::Result<Input> {
    ensure(name, |tmp| {
        let mut input = BufReader::with_capacity(1 << 20, File::open(full)?);
        let mut out = BufWriter::with_capacity(1 << 20, File::create(tmp)?);
        let packets = copy_prefix(&mut input, &mut out, skip, limit)?;
        out.flush()?;
        Ok(match skip {
            0 => format!("first {packets} packets of dense.pcap"),
            _ => format!("{packets} packets of dense.pcap after its first {skip} bytes"),
        })
    })
}

/// `log` gzipped whole (flate2's default level, one member).
pub fn gzipped(log: &Path, name: &str) -> io::Result<Input> {
    ensure(name, |tmp| {
        let mut input = BufReader::with_capacity(1 << 20, File::open(log)?);
        let out = BufWriter::with_capacity(1 << 20, File::create(tmp)?);
        let mut gz = GzEncoder::new(out, Compression::default());
        let bytes = io::copy(&mut input, &mut gz)?;
        gz.finish()?.flush()?;
        Ok(format!("{bytes} bytes gzipped"))
    })
}

/// Copies the pcap global header, then whole records: those starting at
/// or after `skip` bytes of records, while under `limit` bytes written;
/// returns the records copied.
fn copy_prefix(r: &mut impl Read, w: &mut impl Write, skip: u64, limit: u64) -> io::Result<u64> {
    let mut head = [0u8; 24];
    r.read_exact(&mut head)?;
    let little = match head[..4] {
        [0xd4, 0xc3, 0xb2, 0xa1] | [0x4d, 0x3c, 0xb2, 0xa1] => true,
        [0xa1, 0xb2, 0xc3, 0xd4] | [0xa1, 0xb2, 0x3c, 0x4d] => false,
        _ => return Err(io::Error::other("not a pcap file")),
    };
    w.write_all(&head)?;
    let (mut written, mut packets, mut skipped) = (24u64, 0u64, 0u64);
    let mut data = Vec::new();
    loop {
        let mut rec = [0u8; 16];
        if r.read_exact(&mut rec).is_err() {
            return Ok(packets);
        }
        let len: [u8; 4] = rec[8..12].try_into().expect("4 bytes");
        let len = if little {
            u32::from_le_bytes(len)
        } else {
            u32::from_be_bytes(len)
        } as usize;
        if len > 1 << 18 {
            return Err(io::Error::other("pcap record too long"));
        }
        if skipped >= skip && written + 16 + len as u64 > limit {
            return Ok(packets);
        }
        data.resize(len, 0);
        r.read_exact(&mut data)?;
        if skipped < skip {
            skipped += 16 + len as u64;
            continue;
        }
        w.write_all(&rec)?;
        w.write_all(&data)?;
        written += 16 + len as u64;
        packets += 1;
    }
}

/// The realistic 1 GB broker log.
pub fn realistic_log() -> io::Result<Input> {
    ensure("realistic-server.log", |tmp| {
        let mut out = BufWriter::with_capacity(1 << 20, File::create(tmp)?);
        let facts = write_realistic_log(&mut out, REALISTIC_BYTES)?;
        out.flush()?;
        Ok(format!("{facts:?}"))
    })
}

/// The dense capture, its 256 MB prefix and its first 1,024 MB end to end
/// (`rebalances`), the last two also by turns (the linearity target); and
/// the realistic log end to end, read only, and `rg -c GroupCoordinator`.
/// Opt-in (`-- dense`, `-- realog`): the inputs take minutes to generate.
pub fn heavy_cases(
    picked: &dyn Fn(&str) -> bool,
    runs: usize,
    rows: &mut Vec<Measured>,
) -> io::Result<()> {
    if picked("dense") {
        let full = dense()?;
        println!("dense: {}\n  {}", full.path.display(), full.facts);
        let prefix = dense_prefix(&full.path)?;
        println!(
            "dense prefix: {}\n  {}",
            prefix.path.display(),
            prefix.facts
        );
        let gigabyte = dense_gigabyte(&full.path)?;
        println!(
            "dense 1 GB: {}\n  {}",
            gigabyte.path.display(),
            gigabyte.facts
        );
        for (name, input) in [
            ("dense 256 MB prefix (rebalances)", &prefix),
            ("dense first 1,024 MB (rebalances)", &gigabyte),
            ("dense capture (rebalances)", &full),
        ] {
            warm(&input.path)?;
            rows.push(in_child(name, "rebalances", &input.path, "pkts", runs));
        }
        linearity_by_turns(&prefix.path, &gigabyte.path, runs)?;
    }
    if picked("rows") {
        // `decode` and `timeline` of one capture, written while it is read.
        let full = dense()?;
        warm(&full.path)?;
        for (name, kind) in [
            ("dense: decode ndjson as read", "decode-rows"),
            ("dense: timeline ndjson as read", "timeline-rows"),
        ] {
            rows.push(in_child(name, kind, &full.path, "pkts", runs));
        }
    }
    if picked("long") {
        let long = capture("long.pcap", LONG)?;
        println!("long: {}\n  {}", long.path.display(), long.facts);
        warm(&long.path)?;
        let name = "long coordinator capture (rebalances)";
        rows.push(in_child(name, "rebalances", &long.path, "pkts", runs));
    }
    if picked("parallel") {
        parallel_cases(runs, rows)?;
    }
    if picked("realog") {
        let log = realistic_log()?;
        println!("realistic log: {}\n  {}", log.path.display(), log.facts);
        warm(&log.path)?;
        let path = &log.path;
        rows.push(in_child(
            "realistic log (rebalances)",
            "rebalances",
            path,
            "lines",
            runs,
        ));
        rows.push(in_child(
            "realistic log (rebalances ndjson)",
            "rebalance-rows",
            path,
            "lines",
            runs,
        ));
        rows.push(in_child(
            "realistic log: read only",
            "logread",
            path,
            "lines",
            runs,
        ));
        rows.extend(rg_case(path, runs));
        alternated_with_rg(path, runs);
    }
    Ok(())
}

/// The realistic log's `rebalances` against `rg -c GroupCoordinator`, run
/// by turns ([`by_turns`]).
fn alternated_with_rg(path: &Path, runs: usize) {
    let name = "realistic log (rebalances), by turns with rg";
    let pair = || {
        let ours = in_child(name, "rebalances", path, "lines", 1);
        Some((ours.wall, rg_case(path, 1)?.wall))
    };
    if let Some((n, median, low, high)) = by_turns(runs, pair) {
        println!(
            "realistic log against rg, {n} pairs run by turns: {median:.2}x rg's wall time (pairs {low:.2}x to {high:.2}x)"
        );
    }
}

/// The first 1,024 MB's `rebalances` against the 256 MB prefix's, run by
/// turns ([`by_turns`]): the target is a ratio.
fn linearity_by_turns(prefix: &Path, gigabyte: &Path, runs: usize) -> io::Result<()> {
    warm(prefix)?;
    warm(gigabyte)?;
    let pair = || {
        let small = in_child("prefix, by turns", "rebalances", prefix, "pkts", 1);
        let large = in_child("1 GB, by turns", "rebalances", gigabyte, "pkts", 1);
        Some((large.wall, small.wall))
    };
    if let Some((n, median, low, high)) = by_turns(runs, pair) {
        println!(
            "dense first 1,024 MB against its 256 MB prefix (4x the bytes), {n} pairs run by turns: {median:.2}x the prefix's wall time (pairs {low:.2}x to {high:.2}x)"
        );
    }
    Ok(())
}

/// `runs` pairs (at least 5) of wall times `(a, b)` run back to back, as
/// the ratios `a / b`: how many, their median, lowest and highest; `None`
/// when a pair could not be run or none was. This VM's speed drifts by the
/// hour (`rg` alone took 0.06 to 0.20 s on one day), so the best of each,
/// taken minutes apart, can compare two different machines; a pair run
/// back to back shares one.
fn by_turns(
    runs: usize,
    mut pair: impl FnMut() -> Option<(f64, f64)>,
) -> Option<(usize, f64, f64, f64)> {
    let mut ratios = Vec::new();
    for _ in 0..runs.max(5) {
        let (a, b) = pair()?;
        if b > 0.0 {
            ratios.push(a / b);
        }
    }
    let median = median(&mut ratios)?;
    Some((ratios.len(), median, ratios[0], ratios[ratios.len() - 1]))
}

/// The median of `values` (sorted in place); `None` when there are none.
fn median(values: &mut [f64]) -> Option<f64> {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(values[n / 2]),
        _ => Some((values[n / 2 - 1] + values[n / 2]) / 2.0),
    }
}

/// Issue 12's parallel inputs: the dense prefix and the capture's next
/// 256 MB each alone and both in one run (one thread each), with the
/// speed-up of the pair over the two alone; the realistic log gzipped
/// (inflated on its own thread) beside `gzip -dc` of the same file.
fn parallel_cases(runs: usize, rows: &mut Vec<Measured>) -> io::Result<()> {
    let full = dense()?;
    let first = dense_prefix(&full.path)?;
    let second = dense_second(&full.path)?;
    println!(
        "dense second: {}\n  {}",
        second.path.display(),
        second.facts
    );
    warm(&first.path)?;
    warm(&second.path)?;
    let a = in_child(
        "dense prefix alone",
        "rebalances",
        &first.path,
        "pkts",
        runs,
    );
    let b = in_child(
        "dense next 256 MB alone",
        "rebalances",
        &second.path,
        "pkts",
        runs,
    );
    let both = [first.path.as_path(), second.path.as_path()];
    let ab = in_child_many("both in one run", "rebalances", &both, "pkts", runs);
    println!(
        "two inputs: {:.2}x the wall time of one after the other ({:.2} + {:.2} s alone, {:.2} s together; cpu {:.2} + {:.2} s alone, {:.2} s together)",
        (a.wall + b.wall) / ab.wall,
        a.wall,
        b.wall,
        ab.wall,
        a.cpu,
        b.cpu,
        ab.cpu
    );
    rows.extend([a, b, ab]);
    let log = realistic_log()?;
    let gz = gzipped(&log.path, "realistic-server.log.gz")?;
    let mb = file_len(&gz.path) / 1_000_000;
    println!(
        "realistic gz: {} ({mb} MB)\n  {}",
        gz.path.display(),
        gz.facts
    );
    warm(&gz.path)?;
    warm(&log.path)?;
    rows.push(in_child(
        "realistic log (rebalances)",
        "rebalances",
        &log.path,
        "lines",
        runs,
    ));
    let z = in_child(
        "realistic .gz log (rebalances)",
        "rebalances",
        &gz.path,
        "lines",
        runs,
    );
    let name = "realistic .gz log: gzip -dc > /dev/null";
    if let Some(g) = tool_case(name, "gzip", &["-dc"], &gz.path, z.work.bytes, runs) {
        println!(
            "gz: kgtrace takes {:.2}x the wall time of gzip -dc ({:.2} s vs {:.2} s; cpu {:.2} s vs {:.2} s)",
            z.wall / g.wall,
            z.wall,
            g.wall,
            z.cpu,
            g.cpu
        );
        rows.extend([z, g]);
    } else {
        rows.push(z);
    }
    Ok(())
}

/// `tool ARGS FILE` with its output thrown away, `bytes` counted as its
/// work; `None` when the tool is not installed.
fn tool_case(
    name: &str,
    tool: &str,
    args: &[&str],
    path: &Path,
    bytes: u64,
    runs: usize,
) -> Option<Measured> {
    if Command::new(tool)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_err()
    {
        println!("{tool} not installed: comparison skipped");
        return None;
    }
    Some(best_of(name, "lines", "-", runs, || {
        let (cpu0, t0) = (cpu_secs().1, Instant::now());
        Command::new(tool)
            .args(args)
            .arg(path)
            .stdout(Stdio::null())
            .status()
            .expect("the tool runs");
        Sample {
            work: Work {
                bytes,
                records: 0,
                found: 0,
            },
            wall: t0.elapsed().as_secs_f64(),
            cpu: cpu_secs().1 - cpu0,
            peak_mib: None,
        }
    }))
}

/// `rg -c GroupCoordinator FILE` (found: its count); `None` without rg.
fn rg_case(path: &Path, runs: usize) -> Option<Measured> {
    let probe = Command::new("rg")
        .arg("--version")
        .stdout(Stdio::null())
        .status();
    if probe.is_err() {
        println!("rg not installed: comparison skipped");
        return None;
    }
    Some(best_of(
        "realistic log: rg -c GroupCoordinator",
        "lines",
        "matches",
        runs,
        || {
            let (cpu0, t0) = (cpu_secs().1, Instant::now());
            let out = Command::new("rg")
                .args(["-c", "GroupCoordinator"])
                .arg(path)
                .output()
                .expect("rg runs");
            let wall = t0.elapsed().as_secs_f64();
            let found = String::from_utf8_lossy(&out.stdout)
                .trim()
                .parse()
                .unwrap_or(0);
            Sample {
                work: Work {
                    bytes: file_len(path),
                    records: 0,
                    found,
                },
                wall,
                cpu: cpu_secs().1 - cpu0,
                peak_mib: None,
            }
        },
    ))
}
