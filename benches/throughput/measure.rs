//! Timing one case: wall time, CPU time (user + sys) and peak RSS, best of
//! several runs, and the table they end up in.
//!
//! Takes: a closure doing one run and returning its counts. Gives: a
//! [`Measured`] row. CPU time comes from `/proc/self/stat` (clock ticks,
//! USER_HZ = 100 on Linux), children's from its `cutime`/`cstime`; the peak
//! RSS is the process's `VmHWM`, which is why each kgtrace run happens in a
//! fresh child process (see `main.rs`): one case's peak cannot leak into
//! the next. On a shared machine wall time is noisy: the table shows both,
//! and throughput from each.

use std::time::Instant;

/// What one run processed.
#[derive(Clone, Copy, Debug, Default)]
pub struct Work {
    /// Input bytes (file size).
    pub bytes: u64,
    /// Packets or lines.
    pub records: u64,
    /// Rebalances found (or exchanges, events: the case says).
    pub found: u64,
}

/// The best of several runs of one case.
#[derive(Clone, Debug)]
pub struct Measured {
    pub name: String,
    pub unit: &'static str,
    pub found_label: &'static str,
    pub work: Work,
    pub wall: f64,
    pub cpu: f64,
    pub peak_mib: Option<f64>,
}

/// USER_HZ: the unit of /proc's tick counts on Linux.
const TICKS_PER_SEC: f64 = 100.0;

fn stat_fields() -> Vec<u64> {
    let text = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // The command name (field 2) may hold spaces; fields after ")" split cleanly.
    let rest = text.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
    rest.split_whitespace()
        .map(|f| f.parse().unwrap_or(0))
        .collect()
}

/// (own, children's) CPU seconds so far.
pub fn cpu_secs() -> (f64, f64) {
    let f = stat_fields();
    // After ")": state is index 0, so utime (field 14) is index 11.
    let at = |i: usize| f.get(i).copied().unwrap_or(0) as f64 / TICKS_PER_SEC;
    (at(11) + at(12), at(13) + at(14))
}

/// Peak resident set of this process so far (`VmHWM`), in MiB (its KiB
/// over 1024).
pub fn peak_mib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

/// One run: what it did and what it cost.
#[derive(Clone, Copy, Debug, Default)]
pub struct Sample {
    pub work: Work,
    pub wall: f64,
    pub cpu: f64,
    pub peak_mib: Option<f64>,
}

impl Sample {
    /// The line a child process prints for its parent.
    pub fn to_line(self) -> String {
        let w = &self.work;
        let peak = self.peak_mib.unwrap_or(-1.0);
        format!(
            "SAMPLE {} {} {} {} {} {peak}",
            w.bytes, w.records, w.found, self.wall, self.cpu
        )
    }

    /// Reads [`Sample::to_line`] back.
    pub fn from_line(text: &str) -> Option<Sample> {
        let line = text.lines().find(|l| l.starts_with("SAMPLE "))?;
        let f: Vec<&str> = line.split_whitespace().skip(1).collect();
        let num = |i: usize| f.get(i).and_then(|x| x.parse::<f64>().ok());
        let peak = num(5)?;
        Some(Sample {
            work: Work {
                bytes: num(0)? as u64,
                records: num(1)? as u64,
                found: num(2)? as u64,
            },
            wall: num(3)?,
            cpu: num(4)?,
            peak_mib: (peak >= 0.0).then_some(peak),
        })
    }
}

/// Times `run` in this process: wall, own CPU, and the process's peak RSS.
pub fn sample(run: impl FnOnce() -> Work) -> Sample {
    let cpu0 = cpu_secs().0;
    let t0 = Instant::now();
    let work = run();
    Sample {
        work,
        wall: t0.elapsed().as_secs_f64(),
        cpu: cpu_secs().0 - cpu0,
        peak_mib: peak_mib(),
    }
}

/// Runs `run` `n` times; keeps the best wall and best CPU time, and the
/// largest peak RSS.
pub fn best_of(
    name: &str,
    unit: &'static str,
    found_label: &'static str,
    n: usize,
    mut run: impl FnMut() -> Sample,
) -> Measured {
    let mut m = Measured {
        name: name.to_string(),
        unit,
        found_label,
        work: Work::default(),
        wall: f64::MAX,
        cpu: f64::MAX,
        peak_mib: None,
    };
    for i in 0..n.max(1) {
        let s = run();
        eprintln!(
            "  {name} run {}: wall {:.2} s, cpu {:.2} s, peak {} MiB",
            i + 1,
            s.wall,
            s.cpu,
            s.peak_mib.map_or("-".into(), |p| format!("{p:.0}"))
        );
        m.work = s.work;
        m.wall = m.wall.min(s.wall);
        m.cpu = m.cpu.min(s.cpu);
        m.peak_mib = match (m.peak_mib, s.peak_mib) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
    }
    m
}

/// Prints the table of every case.
pub fn print_table(rows: &[Measured]) {
    println!(
        "{:<34} {:>8} {:>7} {:>7} {:>9} {:>9} {:>11} {:>11} {:>9} {:>12}",
        "case",
        "MB",
        "wall s",
        "cpu s",
        "MB/s wall",
        "MB/s cpu",
        "rec/s wall",
        "rec/s cpu",
        "peak MiB",
        "found"
    );
    for r in rows {
        let mb = r.work.bytes as f64 / 1e6;
        let rec = r.work.records as f64;
        let peak = r.peak_mib.map_or("-".to_string(), |p| format!("{p:.0}"));
        println!(
            "{:<34} {:>8.0} {:>7.2} {:>7.2} {:>9.0} {:>9.0} {:>11} {:>11} {:>9} {:>12}",
            r.name,
            mb,
            r.wall,
            r.cpu,
            mb / r.wall,
            mb / r.cpu.max(0.01),
            si(rec / r.wall, r.unit),
            si(rec / r.cpu.max(0.01), r.unit),
            peak,
            format!("{} {}", r.work.found, r.found_label)
        );
    }
}

fn si(x: f64, unit: &str) -> String {
    if x >= 1e6 {
        format!("{:.2}M {unit}", x / 1e6)
    } else {
        format!("{:.0}k {unit}", x / 1e3)
    }
}
