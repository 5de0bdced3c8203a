//! The benchmark's heavy inputs for issue 12: a dense coordinator capture
//! (mostly group traffic), its 256 MB prefix, and a realistic 1 GB
//! `server.log` with about 2 % group-coordinator lines.
//!
//! Takes: the generators ([`crate::scenario`], [`crate::serverlog`]) and
//! [`crate::inputs`]' cache. Gives: the files' paths and facts, generated
//! once like the other inputs.

use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use crate::cases::file_len;
use crate::in_child;
use crate::inputs::{capture, ensure, warm, Input};
use crate::measure::{best_of, cpu_secs, Measured, Sample, Work};
use crate::scenario::Plan;
use crate::serverlog::write_realistic_log;

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

/// The prefix's size.
const PREFIX_BYTES: u64 = 256_000_000;
/// The realistic log's size.
const REALISTIC_BYTES: u64 = 1_000_000_000;

/// The dense capture.
pub fn dense() -> io::Result<Input> {
    capture("dense.pcap", DENSE)
}

/// The first [`PREFIX_BYTES`] of `full`, cut at a packet boundary.
pub fn dense_prefix(full: &Path) -> io::Result<Input> {
    ensure("dense-256mb.pcap", |tmp| {
        let mut input = BufReader::with_capacity(1 << 20, File::open(full)?);
        let mut out = BufWriter::with_capacity(1 << 20, File::create(tmp)?);
        let packets = copy_prefix(&mut input, &mut out, PREFIX_BYTES)?;
        out.flush()?;
        Ok(format!("first {packets} packets of dense.pcap"))
    })
}

/// Copies the pcap global header and whole records while under `limit`
/// bytes; returns the records copied.
fn copy_prefix(r: &mut impl Read, w: &mut impl Write, limit: u64) -> io::Result<u64> {
    let mut head = [0u8; 24];
    r.read_exact(&mut head)?;
    let little = match head[..4] {
        [0xd4, 0xc3, 0xb2, 0xa1] | [0x4d, 0x3c, 0xb2, 0xa1] => true,
        [0xa1, 0xb2, 0xc3, 0xd4] | [0xa1, 0xb2, 0x3c, 0x4d] => false,
        _ => return Err(io::Error::other("not a pcap file")),
    };
    w.write_all(&head)?;
    let (mut written, mut packets) = (24u64, 0u64);
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
        if written + 16 + len as u64 > limit {
            return Ok(packets);
        }
        data.resize(len, 0);
        r.read_exact(&mut data)?;
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

/// The dense capture and its prefix end to end (`rebalances`), and the
/// realistic log end to end, read only, and `rg -c GroupCoordinator`.
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
        for (name, input) in [
            ("dense 256 MB prefix (rebalances)", &prefix),
            ("dense capture (rebalances)", &full),
        ] {
            warm(&input.path)?;
            rows.push(in_child(name, "rebalances", &input.path, "pkts", runs));
        }
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
            "realistic log: read only",
            "logread",
            path,
            "lines",
            runs,
        ));
        rows.extend(rg_case(path, runs));
    }
    Ok(())
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
                peak_mb: None,
            }
        },
    ))
}
