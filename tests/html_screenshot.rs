//! The HTML report opened in headless Chromium (Debian's `chromium`): the
//! screenshot must show the swimlanes and the partition-stop bars. Skipped, with a note, when
//! `/usr/bin/chromium` is absent; `.ci/run` installs it.

use std::fs::File;
use std::io::BufReader;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use kgtrace::render::render_html;
use kgtrace::report::{
    EvidenceLine, GroupSummary, InputSummary, MemberJoin, MemberSummary, Owner, PartitionStop,
    Rebalance, RemovedMember, Report, StopWithoutRebalance, TimelineEntry, Trigger, FORMAT_VERSION,
};
use kgtrace::time::Timestamp;

const CHROMIUM: &str = "/usr/bin/chromium";

/// Colours the picture is drawn with (src/render/svg/glyph.rs): lane
/// stripes, members' presence lines, JoinGroup and SyncGroup marks.
const LANE_STRIPE: [u8; 3] = [0xee, 0xf2, 0xf8];
const PRESENCE: [u8; 3] = [0xb4, 0xc4, 0xdc];
const JOIN: [u8; 3] = [0x2f, 0x6f, 0xb3];
const SYNC: [u8; 3] = [0x2e, 0x9e, 0x48];
/// Partition-stop bars (glyph.rs `STOP_BAR`).
const STOP: [u8; 3] = [0x8a, 0x4b, 0x2a];

const CAPTURE: &str = "lab/checkout.pcap";
const MEMBERS: [(&str, &str); 3] = [
    (
        "checkout-1",
        "checkout-1-0f4c2a9e-77b1-4d0e-a3c5-1b2d3e4f5a6b",
    ),
    (
        "checkout-2",
        "checkout-2-5e6f7a8b-9c0d-4e1f-8a2b-3c4d5e6f7a8b",
    ),
    (
        "checkout-3",
        "checkout-3-aa11bb22-cc33-4d44-8e55-ff6677889900",
    ),
];

fn at(ms: i64) -> Timestamp {
    Timestamp(1_714_564_800_000_000_000 + ms * 1_000_000)
}

fn entry(ms: i64, m: usize, gen: i32, kind: &str, mark: &str, frame: u64) -> TimelineEntry {
    TimelineEntry {
        ts: at(ms),
        group: Some("checkout".into()),
        member_id: Some(MEMBERS[m].1.into()),
        client_id: Some(MEMBERS[m].0.into()),
        client_host: Some(format!("10.0.1.{}:4{m}001", 20 + m)),
        generation: Some(gen),
        kind: kind.into(),
        mark: mark.into(),
        source: CAPTURE.into(),
        frame: Some(frame),
        ..TimelineEntry::default()
    }
}

fn member(m: usize) -> MemberSummary {
    MemberSummary {
        member_id: MEMBERS[m].1.into(),
        client_id: Some(MEMBERS[m].0.into()),
        ..MemberSummary::default()
    }
}

/// Heartbeats every 3 s for members 0 and 1 and, from 60 s to 150 s, for
/// member 2, which joins at 60 s and leaves at 150 s.
fn timeline() -> Vec<TimelineEntry> {
    let mut all = Vec::new();
    let mut frame = 1;
    for ms in (0..180_000).step_by(3_000) {
        for m in 0..3 {
            let present = m < 2 || (62_000..150_000).contains(&ms);
            let gen = if ms < 60_000 {
                3
            } else if ms < 150_000 {
                4
            } else {
                5
            };
            if present {
                all.push(entry(
                    ms + m as i64 * 700,
                    m,
                    gen,
                    "Heartbeat request",
                    "heartbeat",
                    frame,
                ));
                frame += 1;
            }
        }
    }
    for (ms, m, gen, kind, mark) in [
        (60_000, 2, -1, "JoinGroup request", "join"),
        (60_900, 0, 3, "JoinGroup request", "join"),
        (61_700, 1, 3, "JoinGroup request", "join"),
        (61_720, 0, 4, "SyncGroup response", "sync"),
        (61_720, 1, 4, "SyncGroup response", "sync"),
        (61_720, 2, 4, "SyncGroup response", "sync"),
        (150_000, 2, 4, "LeaveGroup request", "leave"),
        (150_400, 0, 4, "JoinGroup request", "join"),
        (150_500, 1, 4, "JoinGroup request", "join"),
        (150_650, 0, 5, "SyncGroup response", "sync"),
        (150_650, 1, 5, "SyncGroup response", "sync"),
    ] {
        all.push(entry(ms, m, gen, kind, mark, frame));
        frame += 1;
    }
    all.sort_by_key(|e| e.ts);
    all
}

fn owner(m: usize) -> Option<Owner> {
    Some(Owner {
        member_id: MEMBERS[m].1.into(),
        client_id: Some(MEMBERS[m].0.into()),
    })
}

/// `partition` moved from member `from` to `to`, stopped from `start` to
/// `end` ms (`None`: still stopped at the end).
fn stop(partition: &str, from: usize, to: usize, start: i64, end: Option<i64>) -> PartitionStop {
    PartitionStop {
        partition: partition.into(),
        from: owner(from),
        to: owner(to),
        why_stopped: "revoked".into(),
        stopped_at: at(start),
        resumed_at: end.map(at),
        stopped_ms: end.map(|e| (e - start) as f64),
        ..PartitionStop::default()
    }
}

fn rebalance(prev: i32, kind: &str, by: usize, start: i64, end: i64) -> Rebalance {
    Rebalance {
        group: "checkout".into(),
        protocol: "classic".into(),
        previous_generation: Some(prev),
        generation: Some(prev + 1),
        started_at: at(start),
        completed_at: Some(at(end)),
        duration_ms: Some((end - start) as f64),
        trigger: Trigger {
            kind: kind.into(),
            member_id: Some(MEMBERS[by].1.into()),
            client_id: Some(MEMBERS[by].0.into()),
            detail: format!("{kind} by {}", MEMBERS[by].0),
            confidence: "high".into(),
        },
        evidence: vec![EvidenceLine {
            source: CAPTURE.into(),
            frame: Some(1),
            line: None,
            ts: at(start),
            text: "first evidence".into(),
        }],
        ..Rebalance::default()
    }
}

fn report() -> Report {
    let mut joined = rebalance(3, "member_joined", 2, 60_000, 61_720);
    joined.joins = (0..3)
        .map(|m| MemberJoin {
            member_id: MEMBERS[m].1.into(),
            client_id: Some(MEMBERS[m].0.into()),
            requested_at: at([60_900, 61_700, 60_000][m]),
            parked_ms: Some([800.0, 10.0, 1_700.0][m]),
            after_start_ms: [900.0, 1_700.0, 0.0][m],
        })
        .collect();
    joined.members_before = vec![member(0), member(1)];
    joined.members_after = vec![member(0), member(1), member(2)];
    joined.partitions = vec![stop("checkout-2", 1, 2, 60_000, Some(61_750))];
    let mut left = rebalance(4, "member_left", 2, 150_000, 150_650);
    left.removed = vec![RemovedMember {
        member_id: MEMBERS[2].1.into(),
        client_id: Some(MEMBERS[2].0.into()),
        how: "left".into(),
    }];
    // Its partitions move to the others; one is never taken up.
    left.partitions = vec![
        stop("checkout-2", 2, 0, 150_000, Some(150_700)),
        stop("checkout-4", 2, 1, 150_000, Some(150_680)),
        stop("checkout-5", 2, 0, 150_000, None),
    ];
    Report {
        format_version: FORMAT_VERSION,
        inputs: vec![InputSummary {
            path: CAPTURE.into(),
            kind: "capture".into(),
            read_as: "capture".into(),
            records: 2_400,
            bytes: 512_000,
            events: 160,
            first_ts: Some(at(0)),
            last_ts: Some(at(180_000)),
            clock_offset_ms: None,
            ..Default::default()
        }],
        log_time_zone: "UTC".into(),
        groups: vec![GroupSummary {
            group: "checkout".into(),
            protocol: "classic".into(),
            state: "Stable".into(),
            generation: Some(5),
            generations_seen: vec![3, 4, 5],
            members: vec![member(0), member(1)],
            rebalance_count: 2,
            rebalances_per_hour: Some(40.0),
            rebalancing_ms: 2_370.0,
            first_seen: Some(at(0)),
            last_seen: Some(at(179_400)),
            ..GroupSummary::default()
        }],
        rebalances: vec![Box::new(joined), Box::new(left)],
        timeline: timeline(),
        // A static member restarted within its session timeout: its
        // partition waited 5 s with no rebalance.
        stops_without_rebalance: vec![StopWithoutRebalance {
            group: "checkout".into(),
            generation: Some(4),
            cause: "static_member_restarted".into(),
            group_instance_id: Some("checkout-static-1".into()),
            partitions: vec![stop("checkout-1", 0, 0, 100_000, Some(105_000))],
        }],
        ..Report::default()
    }
}

/// Runs Chromium headless on `html`, writing `png`; `false` on timeout.
fn screenshot(html: &Path, png: &Path, profile: &Path) -> bool {
    let mut child = Command::new(CHROMIUM)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--hide-scrollbars",
            "--window-size=1400,1800",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("--screenshot={}", png.display()))
        .arg(format!("file://{}", html.display()))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("chromium starts");
    let deadline = Instant::now() + Duration::from_secs(120);
    while Instant::now() < deadline {
        if let Some(status) = child.try_wait().expect("wait for chromium") {
            return status.success();
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let _ = child.kill();
    let _ = child.wait();
    false
}

/// How many pixels of the PNG are within 2 of `rgb` on every channel.
fn count_pixels(png: &Path, colours: &[[u8; 3]]) -> Vec<usize> {
    let file = BufReader::new(File::open(png).expect("screenshot exists"));
    let mut reader = png::Decoder::new(file).read_info().expect("a PNG");
    let mut buf = vec![0; reader.output_buffer_size().expect("a sane size")];
    let info = reader.next_frame(&mut buf).expect("one frame");
    assert_eq!(info.bit_depth, png::BitDepth::Eight);
    let step = info.color_type.samples();
    let near = |a: u8, b: u8| a.abs_diff(b) <= 2;
    colours
        .iter()
        .map(|c| {
            buf[..info.buffer_size()]
                .chunks_exact(step)
                .filter(|p| near(p[0], c[0]) && near(p[1], c[1]) && near(p[2], c[2]))
                .count()
        })
        .collect()
}

#[test]
fn html_report_screenshot_shows_the_swimlanes_and_the_partition_stops() {
    if !Path::new(CHROMIUM).exists() {
        eprintln!("note: {CHROMIUM} not installed; skipping the HTML screenshot test");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let html = dir.path().join("report.html");
    let mut out = Vec::new();
    render_html(&report(), &mut out).unwrap();
    std::fs::write(&html, &out).unwrap();
    let png = dir.path().join("shot.png");
    assert!(
        screenshot(&html, &png, &dir.path().join("profile")),
        "chromium failed or hung"
    );
    let size = std::fs::metadata(&png).unwrap().len();
    assert!(
        size > 20_000,
        "a {size}-byte screenshot is too plain to show anything"
    );
    // Keep a copy for people to look at.
    let keep = Path::new(env!("CARGO_TARGET_TMPDIR")).join("html_report_screenshot.png");
    let _ = std::fs::copy(&png, &keep);
    let counts = count_pixels(&png, &[LANE_STRIPE, PRESENCE, JOIN, SYNC, STOP]);
    let [stripes, presence, joins, syncs, stops] = counts[..] else {
        unreachable!()
    };
    eprintln!(
        "screenshot {}: stripes {stripes}, presence {presence}, join {joins}, sync {syncs}, stop bars {stops} px",
        keep.display()
    );
    // Two striped lanes of the overview alone are ~2 × 1200 × 30 px.
    assert!(stripes > 40_000, "lane stripes: {stripes} px");
    // Three presence lines, 5 px thick, across most of the plot.
    assert!(presence > 5_000, "presence lines: {presence} px");
    assert!(
        joins > 100 && syncs > 100,
        "join {joins} px, sync {syncs} px"
    );
    // The two closed stops of the second round, zoomed in (its 0.65 s
    // round padded to ~0.87 s across ~1000 px), are each ~750 × 10 px; in
    // the overview, the stops are a few pixels wide.
    assert!(stops > 10_000, "partition-stop bars: {stops} px");
}

/// The same report's HTML, read as text: the bars the screenshot shows
/// are there with their tooltips and numbers (this part runs without
/// Chromium).
#[test]
fn html_report_draws_a_bar_per_partition_stop_numbered_per_group() {
    let mut out = Vec::new();
    render_html(&report(), &mut out).unwrap();
    let html = String::from_utf8(out).unwrap();
    for row in ["checkout-2", "checkout-4", "checkout-5"] {
        assert!(html.contains(&format!("stopped {row}</text>")), "{row}");
    }
    assert!(html.contains("<title>Rebalance 1: checkout-2 stopped 1.75 s (revoked)"));
    assert!(html.contains("<title>Rebalance 2: checkout-4 stopped 680 ms (revoked)"));
    assert!(html.contains(
        "<title>Rebalance 2: checkout-5 still stopped at the end of the input (revoked)"
    ));
    assert!(html.contains("dashed with ▸: still stopped at the end"));
    // The static member's restart: a bar with no rebalance's number.
    assert!(html.contains("stopped checkout-1</text>"));
    assert!(html.contains(
        "<title>Static member checkout-static-1 restarted, no rebalance: checkout-1 stopped 5.00 s (revoked)"
    ));
    assert!(html.contains(">restart 5.00 s</text>"), "{html}");
    assert!(html.contains("restart: a static member restarted, no rebalance"));
}
