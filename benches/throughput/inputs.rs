//! The benchmark's input files: generated once, deterministically, under
//! `target/bench-data/` (or `$KGTRACE_BENCH_DATA`), and reused.
//!
//! Takes: nothing but the generators. Gives: the paths of a ≥ 500 MiB
//! capture, a 40 MB slice of the same story for the tshark comparison, a
//! 1 GiB multi-version broker log and its gzip (several gzip members, as
//! `logrotate` plus `cat` make). Each file is written under a temporary name
//! and renamed; a `.done` marker with the generator version and what the
//! file holds says it is complete, so an interrupted run regenerates it.

use std::fs::{self, File};
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use flate2::write::GzEncoder;
use flate2::Compression;

use crate::scenario::{write_capture, Plan};

/// Bump when any generator's output changes, to regenerate old files.
const GENERATOR_VERSION: &str = "kgtrace-bench-data v1";

/// The full-size capture: 540 MB ≥ 500 MiB, 8 groups of 6 consumers, ten
/// simulated minutes.
pub const CAPTURE: Plan = Plan {
    target_bytes: 540_000_000,
    groups: 8,
    members: 6,
    seconds: 600,
    spread: 0,
    storm_every: 0,
    bulk_share: 0.9,
};

/// The small capture for comparing with tshark (same story, shorter).
pub const SLICE: Plan = Plan {
    target_bytes: 40_000_000,
    groups: 4,
    members: 4,
    seconds: 180,
    spread: 0,
    storm_every: 0,
    bulk_share: 0.9,
};

/// Log size: 1 GiB.
const LOG_BYTES: u64 = 1 << 30;
/// Uncompressed bytes per gzip member.
const GZ_MEMBER: usize = 128 << 20;

/// Where the files live.
pub fn data_dir() -> PathBuf {
    std::env::var_os("KGTRACE_BENCH_DATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target/bench-data"))
}

/// A generated file and what its generator said about it.
pub struct Input {
    /// The file.
    pub path: PathBuf,
    /// The generator's summary (from the `.done` marker).
    pub facts: String,
}

/// Returns `name` in the data dir, generating it with `make` unless a
/// complete copy of this generator version exists.
pub fn ensure(name: &str, make: impl FnOnce(&Path) -> io::Result<String>) -> io::Result<Input> {
    let dir = data_dir();
    fs::create_dir_all(&dir)?;
    let path = dir.join(name);
    let marker = dir.join(format!("{name}.done"));
    if let Ok(text) = fs::read_to_string(&marker) {
        if let Some(facts) = text.strip_prefix(GENERATOR_VERSION) {
            if path.is_file() {
                return Ok(Input {
                    path,
                    facts: facts.trim().to_string(),
                });
            }
        }
    }
    eprintln!("generating {} ...", path.display());
    let tmp = dir.join(format!("{name}.tmp"));
    let facts = make(&tmp)?;
    fs::rename(&tmp, &path)?;
    fs::write(&marker, format!("{GENERATOR_VERSION}\n{facts}\n"))?;
    Ok(Input { path, facts })
}

/// The capture of `plan`, named `name`.
pub fn capture(name: &str, plan: Plan) -> io::Result<Input> {
    ensure(name, |tmp| {
        let facts = write_capture(File::create(tmp)?, plan)?;
        Ok(format!("{facts:?}"))
    })
}

/// The 1 GiB multi-version broker/client log.
pub fn log() -> io::Result<Input> {
    ensure("server.log", |tmp| {
        let mut out = BufWriter::with_capacity(1 << 20, File::create(tmp)?);
        let stats = kgtrace::logs::synth::write_synthetic_log(&mut out, LOG_BYTES, 42)?;
        out.flush()?;
        Ok(format!("{stats:?}"))
    })
}

/// The log gzipped (default level) in several members.
pub fn log_gz(plain: &Path) -> io::Result<Input> {
    ensure("server.log.gz", |tmp| {
        let mut input = BufReader::with_capacity(1 << 20, File::open(plain)?);
        let mut out = BufWriter::with_capacity(1 << 20, File::create(tmp)?);
        let mut buf = vec![0u8; GZ_MEMBER];
        let mut members = 0;
        loop {
            let n = read_full(&mut input, &mut buf)?;
            if n == 0 {
                break;
            }
            let mut gz = GzEncoder::new(&mut out, Compression::default());
            gz.write_all(&buf[..n])?;
            gz.finish()?;
            members += 1;
        }
        out.flush()?;
        Ok(format!("{members} gzip members of up to {GZ_MEMBER} bytes"))
    })
}

fn read_full(r: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..])? {
            0 => break,
            k => n += k,
        }
    }
    Ok(n)
}

/// Reads `path` once so the timed runs start with a warm page cache.
pub fn warm(path: &Path) -> io::Result<u64> {
    let mut f = File::open(path)?;
    io::copy(&mut f, &mut io::sink())
}
