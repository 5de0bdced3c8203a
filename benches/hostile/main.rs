//! Benchmark of issue 14's hostile shapes: does time grow linearly, and
//! does anything abort under a 512 MiB address-space limit?
//!
//! Takes: shape names to run (default: all) and `--quick` (1× and 4× only).
//! Gives: for each shape at 1×, 4× and 16× its count, the release binary's
//! wall and user time and peak RSS (from `/usr/bin/time`), and with
//! `--perf` the user-space instructions (`perf stat`), run under
//! `ulimit -v 524288`; then the 16×/1× ratios and whether each stays within
//! 20× (linear with slack for start-up, caches and a loaded machine).
//!
//! Run: `cargo bench --bench hostile` (inputs are written to
//! `bench-data/hostile/`, kept between runs).

mod shapes;
mod wire;

use std::path::{Path, PathBuf};
use std::process::Command;

/// Each case: shape, count at 1×, the kgtrace arguments (`{}` = input).
const CASES: [(&str, usize, &[&str]); 12] = [
    ("members", 8_000, &["rebalances", "{}"]),
    ("rebalances", 5_000, &["rebalances", "{}"]),
    (
        "rebalances",
        5_000,
        &["report", "--format", "markdown", "{}"],
    ),
    // The forms that write every event: one document, or tagged lines.
    ("rebalances", 5_000, &["timeline", "--format", "json", "{}"]),
    ("rebalances", 5_000, &["report", "--format", "json", "{}"]),
    ("rebalances", 5_000, &["report", "--format", "ndjson", "{}"]),
    ("groups", 1_000, &["report", "{}"]),
    ("groups", 1_000, &["report", "{}", "--html", "{}.html"]),
    ("syn-only", 20_000, &["rebalances", "{}"]),
    ("idle", 10_000, &["rebalances", "{}"]),
    ("tiny-protocols", 1, &["rebalances", "{}"]),
    ("partitions", 250_000, &["rebalances", "{}"]),
];

const SCALES: [usize; 3] = [1, 4, 16];

/// What one run cost.
struct Cost {
    code: i32,
    wall_s: f64,
    user_s: f64,
    rss_mb: f64,
    instructions: Option<f64>,
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let quick = args.iter().any(|a| a == "--quick");
    let perf = args.iter().any(|a| a == "--perf");
    let picked: Vec<&String> = args.iter().filter(|a| !a.starts_with('-')).collect();
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_kgtrace"));
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("bench-data/hostile");
    std::fs::create_dir_all(&dir).expect("bench-data/hostile can be created");
    let scales = if quick { &SCALES[..2] } else { &SCALES[..] };
    println!("| case | scale | count | input MB | exit | wall s | user s | peak RSS MB | instructions (G) |");
    println!("| --- | --- | --- | --- | --- | --- | --- | --- | --- |");
    let mut verdicts = Vec::new();
    for (shape, base, cmd) in CASES {
        if !picked.is_empty() && !picked.iter().any(|p| *p == shape) {
            continue;
        }
        // The command without the input's place (`{}`, `{}.html`).
        let named: Vec<&str> = cmd.iter().copied().filter(|a| !a.contains("{}")).collect();
        let case = format!("{shape} ({})", named.join(" "));
        let mut costs = Vec::new();
        for &scale in scales {
            let n = base * scale;
            let input = dir.join(format!("{shape}-{n}.pcap"));
            if !input.exists() {
                shapes::write(shape, n, &input).expect("the shape is written");
            }
            let args: Vec<String> = cmd
                .iter()
                .map(|a| a.replace("{}", &input.to_string_lossy()))
                .collect();
            let cost = run(&bin, &args, perf, &dir);
            let mb = std::fs::metadata(&input).map_or(0.0, |m| m.len() as f64 / 1e6);
            println!(
                "| {case} | {scale}× | {n} | {mb:.1} | {} | {:.2} | {:.2} | {:.0} | {} |",
                cost.code,
                cost.wall_s,
                cost.user_s,
                cost.rss_mb,
                cost.instructions
                    .map_or("-".into(), |i| format!("{:.2}", i / 1e9)),
            );
            costs.push((scale, cost));
        }
        verdicts.push((case, costs));
    }
    println!();
    for (case, costs) in verdicts {
        let failed: Vec<String> = costs
            .iter()
            .filter(|(_, c)| !(0..=1).contains(&c.code))
            .map(|(s, c)| format!("{s}× exited {}", c.code))
            .collect();
        let time = |s: usize| {
            costs
                .iter()
                .find(|(x, _)| *x == s)
                .map(|(_, c)| c.user_s.max(0.01))
        };
        let rss = |s: usize| {
            costs
                .iter()
                .find(|(x, _)| *x == s)
                .map_or(f64::NAN, |(_, c)| c.rss_mb)
        };
        let ratio = |a: usize, b: usize| match (time(a), time(b)) {
            (Some(x), Some(y)) => format!("{:.1}", y / x),
            _ => "-".into(),
        };
        let last = costs.last().map_or(1, |(s, _)| *s);
        let linear = match (time(1), time(last)) {
            (Some(a), Some(b)) => b / a <= last as f64 * 1.25,
            _ => false,
        };
        println!(
            "{case}: user time ×{} (1×→4×), ×{} (4×→16×), ×{} (1×→16×); peak RSS {:.0} → {:.0} MB: {}",
            ratio(1, 4),
            ratio(4, 16),
            ratio(1, last),
            rss(1),
            rss(last),
            if !failed.is_empty() {
                format!("FAILED ({})", failed.join(", "))
            } else if linear {
                "linear (16× within 20×)".into()
            } else {
                "NOT within 20×".into()
            },
        );
    }
}

/// Runs kgtrace with `args` under a 512 MiB address-space limit.
fn run(bin: &Path, args: &[String], perf: bool, dir: &Path) -> Cost {
    let times = dir.join("time.out");
    let counts = dir.join("perf.out");
    let mut script = String::from("ulimit -v 524288; exec /usr/bin/time -f '%e %U %M' -o \"$T\" ");
    if perf {
        script.push_str("perf stat -x, -e instructions:u -o \"$P\" ");
    }
    script.push_str("\"$0\" \"$@\" >/dev/null 2>&1");
    let status = Command::new("sh")
        .arg("-c")
        .arg(script)
        .arg(bin)
        .args(args)
        .env("T", &times)
        .env("P", &counts)
        .status()
        .expect("sh runs");
    let text = std::fs::read_to_string(&times).unwrap_or_default();
    // /usr/bin/time writes "Command exited with non-zero status N" first.
    let last = text.lines().last().unwrap_or("");
    let f: Vec<f64> = last.split(' ').filter_map(|x| x.parse().ok()).collect();
    let instructions = perf
        .then(|| std::fs::read_to_string(&counts).ok())
        .flatten()
        .and_then(|t| {
            t.lines()
                .find(|l| l.contains("instructions"))
                .and_then(|l| l.split(',').next()?.parse().ok())
        });
    Cost {
        code: status.code().unwrap_or(-1),
        wall_s: f.first().copied().unwrap_or(f64::NAN),
        user_s: f.get(1).copied().unwrap_or(f64::NAN),
        rss_mb: f.get(2).copied().unwrap_or(f64::NAN) / 1024.0,
        instructions,
    }
}
