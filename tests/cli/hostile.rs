//! Hostile and odd inputs (issue 14) and input detection (issue 11): each
//! input is built here by a small generator, never a large committed file,
//! and each test asserts the exit status and the diagnostic.

use std::io::Write;
use std::path::Path;

use kgtrace::capture::synth::{Link, PcapOptions, PcapWriter, Side, TcpConversation};

use crate::util::{json, kgtrace, lab, rows, run, run_command, run_with_stdin};

use super::{fixture_bytes, SERVER_LOG};

fn rebalances_of(args: &[&str]) -> Vec<serde_json::Value> {
    let mut all = vec!["rebalances", "--format", "json"];
    all.extend_from_slice(args);
    let out = run(&all);
    assert!(out.code == 0 || out.code == 1, "{out:#?}");
    kinds_and_generations(&json(&out.stdout))
}

/// Each rebalance of a JSON report as what tells it apart: group,
/// generations before and after, start, trigger kind, member and client,
/// and the members after it (so "the same rebalances" means the same
/// story, not only as many rows).
fn kinds_and_generations(report: &serde_json::Value) -> Vec<serde_json::Value> {
    rows(report, "rebalances")
        .iter()
        .map(|r| {
            serde_json::json!([
                r["group"],
                r["previous_generation"],
                r["generation"],
                r["started_at"],
                r["trigger"]["kind"],
                r["trigger"]["member_id"],
                r["trigger"]["client_id"],
                r["members_after"],
            ])
        })
        .collect()
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    enc.write_all(bytes).unwrap();
    enc.finish().unwrap()
}

/// A legacy pcap split into `parts` files of whole records.
fn split_pcap(bytes: &[u8], parts: usize) -> Vec<Vec<u8>> {
    assert_eq!(
        &bytes[..4],
        &[0xd4, 0xc3, 0xb2, 0xa1],
        "little-endian µs pcap"
    );
    let header = &bytes[..24];
    let mut records = Vec::new();
    let mut at = 24;
    while at + 16 <= bytes.len() {
        let len = u32::from_le_bytes(bytes[at + 8..at + 12].try_into().unwrap()) as usize;
        records.push(&bytes[at..at + 16 + len]);
        at += 16 + len;
    }
    let per = records.len().div_ceil(parts);
    records
        .chunks(per)
        .map(|c| {
            let mut out = header.to_vec();
            for r in c {
                out.extend_from_slice(r);
            }
            out
        })
        .collect()
}

const KILLED: &str = "ck_killed.pcap";

#[test]
fn a_gzipped_capture_gives_the_same_rebalances_as_the_capture() {
    let plain = rebalances_of(&[&lab(KILLED)]);
    assert!(!plain.is_empty());
    let dir = tempfile::tempdir().unwrap();
    let gz = dir.path().join("k.pcap.gz");
    std::fs::write(&gz, gzip(&fixture_bytes(&lab(KILLED)))).unwrap();
    assert_eq!(rebalances_of(&[gz.to_str().unwrap()]), plain);
    let out = run(&["groups", "--format", "json", gz.to_str().unwrap()]).expect_code(0);
    assert_eq!(json(&out.stdout)["inputs"][0]["read_as"], "gzip capture");
}

#[test]
fn a_zstd_capture_gives_the_same_rebalances_as_the_capture() {
    let plain = rebalances_of(&[&lab(KILLED)]);
    let dir = tempfile::tempdir().unwrap();
    let zst = dir.path().join("k.pcap.zst");
    let bytes = ruzstd::encoding::compress_to_vec(
        &fixture_bytes(&lab(KILLED))[..],
        ruzstd::encoding::CompressionLevel::Fastest,
    );
    std::fs::write(&zst, bytes).unwrap();
    assert_eq!(rebalances_of(&[zst.to_str().unwrap()]), plain);
}

#[test]
fn a_rotation_set_in_a_directory_beside_a_log_is_read_as_one_capture_in_time_order() {
    let plain = rebalances_of(&[&lab(KILLED)]);
    let dir = tempfile::tempdir().unwrap();
    let parts = split_pcap(&fixture_bytes(&lab(KILLED)), 3);
    // Names whose order is not time order, and that say nothing true.
    std::fs::write(dir.path().join("a.txt"), &parts[2]).unwrap();
    std::fs::write(dir.path().join("b.out"), gzip(&parts[0])).unwrap();
    std::fs::write(dir.path().join("c.log"), &parts[1]).unwrap();
    let out = run(&[
        "rebalances",
        "--format",
        "json",
        dir.path().to_str().unwrap(),
    ]);
    let report = json(&out.stdout);
    assert_eq!(kinds_and_generations(&report), plain);
    assert_eq!(rows(&report, "inputs").len(), 3);
    // Beside a log: both are read, and the capture's groups keep their
    // rebalances (the log's are of other groups, orders and billing).
    std::fs::write(dir.path().join("server.log"), SERVER_LOG).unwrap();
    let out = run(&[
        "rebalances",
        "--format",
        "json",
        dir.path().to_str().unwrap(),
    ]);
    let both = kinds_and_generations(&json(&out.stdout));
    let (logged, captured): (Vec<_>, Vec<_>) = both
        .into_iter()
        .partition(|r| r[0] == "orders" || r[0] == "billing");
    assert_eq!(captured, plain);
    assert!(!logged.is_empty(), "the log's rebalances are read too");
    let out = run(&["groups", "--format", "json", dir.path().to_str().unwrap()]).expect_code(0);
    let kinds: Vec<_> = rows(&json(&out.stdout), "inputs")
        .iter()
        .map(|i| i["kind"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(kinds.iter().filter(|k| *k == "log").count(), 1, "{kinds:?}");
    assert_eq!(kinds.iter().filter(|k| *k == "capture").count(), 3);
}

/// `bytes` (a little-endian µs pcap on Ethernet) with a 1,400-byte UDP
/// datagram between 10.9.9.1 and 10.9.9.2 after each record, at its time:
/// other traffic on the interface, enough to pass tcpdump's smallest `-C`
/// (one million bytes) several times.
fn with_udp_filler(bytes: &[u8]) -> Vec<u8> {
    assert_eq!(&bytes[20..24], &[1, 0, 0, 0], "Ethernet link type");
    let payload = vec![0x5a_u8; 1400];
    let mut frame = vec![0_u8; 12];
    frame.extend_from_slice(&[0x08, 0x00]);
    let ip_len = (20 + 8 + payload.len()) as u16;
    frame.extend_from_slice(&[0x45, 0, 0, 0, 0, 0, 0x40, 0, 64, 17, 0, 0]);
    frame[16..18].copy_from_slice(&ip_len.to_be_bytes());
    frame.extend_from_slice(&[10, 9, 9, 1, 10, 9, 9, 2]);
    frame.extend_from_slice(&9999_u16.to_be_bytes());
    frame.extend_from_slice(&9999_u16.to_be_bytes());
    frame.extend_from_slice(&(8 + payload.len() as u16).to_be_bytes());
    frame.extend_from_slice(&[0, 0]);
    frame.extend_from_slice(&payload);
    let mut out = bytes[..24].to_vec();
    let mut at = 24;
    while at + 16 <= bytes.len() {
        let len = u32::from_le_bytes(bytes[at + 8..at + 12].try_into().unwrap()) as usize;
        out.extend_from_slice(&bytes[at..at + 16 + len]);
        out.extend_from_slice(&bytes[at..at + 8]);
        let n = (frame.len() as u32).to_le_bytes();
        out.extend_from_slice(&n);
        out.extend_from_slice(&n);
        out.extend_from_slice(&frame);
        at += 16 + len;
    }
    out
}

/// Whether `tcpdump` runs here; without it the test says it skipped,
/// except in CI (`CI=true`), where .ci/run installs it and its absence fails.
fn tcpdump_available() -> bool {
    let found = std::process::Command::new("tcpdump")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "tcpdump is not installed (CI installs it in .ci/run)"
        );
        eprintln!("note: tcpdump not installed; skipping the real `tcpdump -C` rotation test");
    }
    found
}

#[test]
fn a_directory_rotated_by_the_real_tcpdump_dash_c_gives_the_same_rebalances_as_its_capture() {
    if !tcpdump_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let whole = dir.path().join("whole.pcap");
    std::fs::write(
        &whole,
        with_udp_filler(&fixture_bytes("fixtures/kafka/ak4_ck_killed.pcap")),
    )
    .unwrap();
    let plain = rebalances_of(&[whole.to_str().unwrap()]);
    assert!(plain.len() >= 2, "{plain:?}");
    let rotated = dir.path().join("rotated");
    std::fs::create_dir(&rotated).unwrap();
    // -C 1: a new file once the current one passes 1,000,000 bytes; -Z
    // keeps tcpdump from dropping privileges to a user who cannot write here.
    let status = std::process::Command::new("tcpdump")
        .args(["-n", "-Z", "root", "-r"])
        .arg(&whole)
        .arg("-w")
        .arg(rotated.join("k.pcap"))
        .args(["-C", "1"])
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(status.success(), "tcpdump -r … -w … -C 1: {status}");
    let files = std::fs::read_dir(&rotated).unwrap().count();
    assert!(files >= 3, "tcpdump -C 1 wrote {files} files");
    let out = run(&["rebalances", "--format", "json", rotated.to_str().unwrap()]);
    let report = json(&out.stdout);
    assert_eq!(rows(&report, "inputs").len(), files);
    assert_eq!(kinds_and_generations(&report), plain);
}

#[cfg(unix)]
#[test]
fn a_directory_with_a_link_loop_a_fifo_a_socket_and_a_dangling_link_reads_each_file_once() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("server.log"), SERVER_LOG).unwrap();
    std::os::unix::fs::symlink(".", dir.path().join("loop")).unwrap();
    std::os::unix::fs::symlink("nowhere", dir.path().join("dangling")).unwrap();
    let fifo = dir.path().join("fifo");
    assert!(std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let _socket = std::os::unix::net::UnixListener::bind(dir.path().join("sock")).unwrap();
    let out = run(&["groups", "--format", "json", dir.path().to_str().unwrap()]).expect_code(0);
    let report = json(&out.stdout);
    assert_eq!(rows(&report, "inputs").len(), 1, "{report:#}");
    for said in ["a FIFO", "a socket", "dangling", "link loop"] {
        assert!(out.stderr.contains(said), "{said}: {}", out.stderr);
    }
}

#[test]
fn an_empty_directory_or_one_of_empty_directories_is_warned_about_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let out = run(&["rebalances", d]).expect_code(1);
    assert!(
        out.stderr
            .contains(&format!("{d}: an empty directory: nothing read")),
        "{}",
        out.stderr
    );
    std::fs::create_dir(dir.path().join("rotated")).unwrap();
    let out = run(&["rebalances", d]).expect_code(1);
    assert!(
        out.stderr.contains(&format!(
            "{d}: a directory with no file to read in it (1 entry)"
        )),
        "{}",
        out.stderr
    );
}

#[test]
fn the_same_file_given_twice_is_read_once_with_a_warning() {
    let once = rebalances_of(&[&lab(KILLED)]);
    let out = run(&["rebalances", "--format", "json", &lab(KILLED), &lab(KILLED)]).expect_code(0);
    assert_eq!(rows(&json(&out.stdout), "rebalances").len(), once.len());
    assert!(out.stderr.contains("given twice"), "{}", out.stderr);
}

#[test]
fn a_capture_on_stdin_delivered_slowly_is_read_whole() {
    let bytes = fixture_bytes(&lab(KILLED));
    let plain = rebalances_of(&[&lab(KILLED)]);
    let out = run_with_stdin(&["rebalances", "--format", "json", "-"], &bytes).expect_code(0);
    assert_eq!(kinds_and_generations(&json(&out.stdout)), plain);
    // `/dev/stdin` as a path (a pipe): nothing lost to detection.
    let out = run_with_stdin(&["rebalances", "--format", "json", "/dev/stdin"], &bytes);
    assert_eq!(kinds_and_generations(&json(&out.stdout)), plain);
}

#[test]
fn a_log_through_a_pipe_path_loses_no_line() {
    // 3,000 lines (over the 64 KiB peek) through /dev/stdin.
    let mut log = String::new();
    for g in 1..=1000 {
        log.push_str(&format!("[2024-05-01 12:00:{:02},{:03}] INFO [GroupCoordinator 1]: Preparing to rebalance group orders in state PreparingRebalance with old generation {} (__consumer_offsets-12) (reason: Adding new member m-{g} with group instance id None; client reason: not provided) (kafka.coordinator.group.GroupCoordinator)\n", g % 60, g % 1000, g - 1));
        log.push_str(&format!("[2024-05-01 12:00:{:02},{:03}] INFO [GroupCoordinator 1]: Stabilized group orders generation {g} (__consumer_offsets-12) with 1 members (kafka.coordinator.group.GroupCoordinator)\n", g % 60, g % 1000 + 1));
    }
    assert!(log.len() > 64 * 1024);
    let out = run_with_stdin(
        &["groups", "--format", "json", "/dev/stdin"],
        log.as_bytes(),
    )
    .expect_code(0);
    let report = json(&out.stdout);
    assert_eq!(
        report["inputs"][0]["records"], 2000,
        "{:#}",
        report["inputs"]
    );
}

#[test]
fn an_empty_file_and_plain_text_each_get_a_warning_naming_them() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.log");
    let text = dir.path().join("notes.txt");
    std::fs::write(&empty, b"").unwrap();
    std::fs::write(&text, b"hello\nthis is not kafka\n").unwrap();
    let out = run(&[
        "groups",
        "--format",
        "json",
        empty.to_str().unwrap(),
        text.to_str().unwrap(),
    ])
    .expect_code(1);
    assert!(
        out.stderr.contains("empty.log: an empty input"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains("notes.txt: text with no Kafka group lines"),
        "{}",
        out.stderr
    );
    let report = json(&out.stdout);
    assert!(rows(&report, "inputs")
        .iter()
        .all(|i| i["warning"].is_string()));
}

#[test]
fn input_type_log_reads_a_capture_as_text_and_says_so() {
    let out = run(&[
        "groups",
        "--format",
        "json",
        "--input-type",
        "log",
        &lab(KILLED),
    ]);
    assert_eq!(out.code, 1, "{out:#?}");
    assert_eq!(json(&out.stdout)["inputs"][0]["read_as"], "log");
    let out = run(&["groups", "--input-type", "capture", &lab(KILLED)]).expect_code(0);
    assert!(!out.stdout.is_empty());
}

#[test]
fn nul_runs_in_a_log_are_skipped_and_counted() {
    let mut bytes = SERVER_LOG.as_bytes().to_vec();
    let cut = bytes.len() / 2;
    let at = cut + bytes[cut..].iter().position(|&b| b == b'\n').unwrap() + 1;
    bytes.splice(at..at, std::iter::repeat_n(0u8, 4096));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("server.log");
    std::fs::write(&path, bytes).unwrap();
    let with_nuls = run(&["rebalances", "--format", "json", path.to_str().unwrap()]).expect_code(0);
    assert!(
        with_nuls.stderr.contains("4096 NUL bytes in 1 runs"),
        "{}",
        with_nuls.stderr
    );
    let clean = dir.path().join("clean.log");
    std::fs::write(&clean, SERVER_LOG).unwrap();
    let plain = run(&["rebalances", "--format", "json", clean.to_str().unwrap()]).expect_code(0);
    assert_eq!(
        rows(&json(&with_nuls.stdout), "rebalances").len(),
        rows(&json(&plain.stdout), "rebalances").len()
    );
}

#[test]
fn a_gzip_bomb_is_cut_with_a_warning_in_bounded_memory() {
    // 300 MiB of newlines compress to ~300 KiB: over 250:1 past 64 MiB.
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    let chunk = vec![b'\n'; 1 << 20];
    for _ in 0..300 {
        enc.write_all(&chunk).unwrap();
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("server.log.gz");
    std::fs::write(&path, enc.finish().unwrap()).unwrap();
    let out = under_512_mb(&["groups", path.to_str().unwrap()]);
    assert_eq!(out.code, 1, "{out:#?}");
    assert!(out.stderr.contains("decompression bomb"), "{}", out.stderr);
}

/// Runs kgtrace with a 512 MiB address-space limit (`ulimit -v`).
fn under_512_mb(args: &[&str]) -> crate::util::Run {
    let bin = kgtrace().get_program().to_owned();
    let mut cmd = std::process::Command::new("sh");
    cmd.current_dir(env!("CARGO_MANIFEST_DIR"))
        .arg("-c")
        .arg("ulimit -v 524288 && exec \"$0\" \"$@\"")
        .arg(bin)
        .args(args);
    run_command(&mut cmd, b"")
}

/// A JoinGroup v6 exchange whose response's members count is the varint
/// `80 80 80 80 08` (2^31): issue 14's 521-byte abort.
fn join_group_v6_with_a_huge_member_count() -> Vec<u8> {
    let compact = |s: &str| {
        let mut v = vec![s.len() as u8 + 1];
        v.extend_from_slice(s.as_bytes());
        v
    };
    let mut req = Vec::new();
    req.extend_from_slice(&11i16.to_be_bytes()); // JoinGroup
    req.extend_from_slice(&6i16.to_be_bytes());
    req.extend_from_slice(&7i32.to_be_bytes()); // correlation id
    req.extend_from_slice(&(1i16).to_be_bytes());
    req.push(b'c'); // client id "c"
    req.push(0); // header tags
    req.extend(compact("g"));
    req.extend_from_slice(&45_000i32.to_be_bytes());
    req.extend_from_slice(&300_000i32.to_be_bytes());
    req.extend(compact(""));
    req.push(0); // group_instance_id null
    req.extend(compact("consumer"));
    req.push(2); // one protocol
    req.extend(compact("range"));
    req.push(1); // empty metadata
    req.push(0);
    req.push(0);
    let mut resp = Vec::new();
    resp.extend_from_slice(&7i32.to_be_bytes());
    resp.push(0); // header tags
    resp.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 0, 0, 1]);
    resp.extend(compact("range"));
    resp.extend(compact("m-1"));
    resp.extend(compact("m-1"));
    resp.extend_from_slice(&[0x80, 0x80, 0x80, 0x80, 0x08]);
    resp.extend_from_slice(&[0; 8]);
    let frame = |body: &[u8]| {
        let mut f = (body.len() as i32).to_be_bytes().to_vec();
        f.extend_from_slice(body);
        f
    };
    let mut conv = TcpConversation::new("10.0.0.1:50000", "10.0.0.2:9092");
    conv.handshake()
        .client_sends(&frame(&req))
        .server_sends(&frame(&resp))
        .fin(Side::Client)
        .fin(Side::Server);
    let mut pcap = PcapWriter::new(Vec::new(), Link::Ethernet, PcapOptions::default()).unwrap();
    conv.write_to(&mut pcap).unwrap();
    pcap.into_inner()
}

#[test]
fn a_five_byte_member_count_in_a_join_group_response_is_undecodable_not_an_abort() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("abort.pcap");
    std::fs::write(&path, join_group_v6_with_a_huge_member_count()).unwrap();
    let out = under_512_mb(&["decode", "--format", "json", path.to_str().unwrap()]);
    assert!(out.code == 0 || out.code == 1, "{out:#?}");
    let report = json(&out.stdout);
    let said = report["diagnostics"].to_string();
    assert!(said.contains("array count"), "{said}");
}

#[test]
fn csv_escapes_control_and_bidi_characters_and_quotes_formulas() {
    let log = "[2024-05-01 12:00:00,000] INFO [GroupCoordinator 1]: Preparing to rebalance group =cmd\u{1b}[31m\u{202e} in state PreparingRebalance with old generation 0 (__consumer_offsets-12) (reason: Adding new member m-1 with group instance id None; client reason: not provided) (kafka.coordinator.group.GroupCoordinator)\n";
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("server.log");
    std::fs::write(&path, log).unwrap();
    let out = run(&["timeline", "--format", "csv", path.to_str().unwrap()]).expect_code(0);
    assert!(!out.stdout.contains('\u{1b}') && !out.stdout.contains('\u{202e}'));
    assert!(
        out.stdout.contains("\"=cmd\\u{1b}[31m\\u{202e}\""),
        "{}",
        out.stdout
    );
    for format in ["table", "json", "ndjson", "markdown"] {
        let out = run(&["timeline", "--format", format, path.to_str().unwrap()]).expect_code(0);
        assert!(
            !out.stdout.contains('\u{1b}') && !out.stdout.contains('\u{202e}'),
            "{format}: {}",
            out.stdout
        );
    }
}

#[test]
fn html_refuses_to_overwrite_an_input_and_says_cannot_write() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("k.pcap");
    let bytes = fixture_bytes(&lab(KILLED));
    std::fs::write(&input, &bytes).unwrap();
    let path = input.to_str().unwrap();
    let out = run(&["report", path, "--html", path]).expect_code(2);
    assert!(out.stderr.contains("cannot write"), "{}", out.stderr);
    assert_eq!(std::fs::read(&input).unwrap(), bytes, "the input is intact");
    let out = run(&["report", path, "--html", "/nonexistent/dir/r.html"]).expect_code(2);
    assert!(
        out.stderr
            .contains("cannot write '/nonexistent/dir/r.html'"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_kafka_data_segment_in_a_directory_is_skipped_as_binary() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("server.log"), SERVER_LOG).unwrap();
    let mut segment = vec![0u8; 61];
    segment.extend_from_slice(&[0x02, 0xff, 0x13, 0x55]);
    segment.extend(std::iter::repeat_n(0x41u8, 200));
    std::fs::write(dir.path().join("00000000000000000000.log"), segment).unwrap();
    let out = run(&["groups", "--format", "json", dir.path().to_str().unwrap()]).expect_code(0);
    assert_eq!(rows(&json(&out.stdout), "inputs").len(), 1);
    assert!(
        out.stderr
            .contains("00000000000000000000.log: skipped: binary data"),
        "{}",
        out.stderr
    );
    let _ = Path::new("");
}

#[test]
fn a_copy_of_a_capture_under_another_name_is_read_once_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("copy-of-killed.pcap");
    std::fs::copy(lab(KILLED), &copy).unwrap();
    let once = rebalances_of(&[&lab(KILLED)]);
    let args = [
        "rebalances",
        "--format",
        "json",
        &lab(KILLED),
        copy.to_str().unwrap(),
    ];
    let out = run(&args).expect_code(0);
    assert_eq!(rows(&json(&out.stdout), "rebalances").len(), once.len());
    assert!(out.stderr.contains("the same content as"), "{}", out.stderr);
    // A copy inside a directory given beside the original: the same.
    let out = run(&[
        "rebalances",
        "--format",
        "json",
        &lab(KILLED),
        dir.path().to_str().unwrap(),
    ])
    .expect_code(0);
    assert_eq!(rows(&json(&out.stdout), "rebalances").len(), once.len());
    assert!(out.stderr.contains("the same content as"), "{}", out.stderr);
}

#[test]
fn two_files_that_differ_only_in_the_middle_are_both_read() {
    // Same length, same first and last 64 KiB: the fingerprint matches,
    // the byte comparison does not.
    let mut a = vec![b'#'; 300 * 1024];
    a.extend_from_slice(b"\n");
    let mut b = a.clone();
    b[150 * 1024] = b'!';
    let dir = tempfile::tempdir().unwrap();
    let (pa, pb) = (dir.path().join("a.log"), dir.path().join("b.log"));
    std::fs::write(&pa, &a).unwrap();
    std::fs::write(&pb, &b).unwrap();
    let out = run(&["groups", pa.to_str().unwrap(), pb.to_str().unwrap()]);
    assert!(
        !out.stderr.contains("the same content as"),
        "{}",
        out.stderr
    );
}

/// A capture of `count` unanswered JoinGroup v5 requests of almost 16 MiB
/// each: 64 protocols, each subscribing to 130,000 empty-named topics
/// (issue 14: 897 MB of RSS per request before the cap).
fn unanswered_join_groups_of_tiny_protocols(count: i32) -> Vec<u8> {
    let mut meta = vec![0, 0];
    meta.extend_from_slice(&130_000i32.to_be_bytes());
    for _ in 0..130_000 {
        meta.extend_from_slice(&[0, 0]);
    }
    meta.extend_from_slice(&(-1i32).to_be_bytes());
    let mut conv = TcpConversation::new("10.0.0.1:50000", "10.0.0.2:9092");
    conv.handshake();
    for corr in 1..=count {
        let mut req = Vec::new();
        req.extend_from_slice(&11i16.to_be_bytes()); // JoinGroup
        req.extend_from_slice(&5i16.to_be_bytes());
        req.extend_from_slice(&corr.to_be_bytes());
        req.extend_from_slice(&1i16.to_be_bytes());
        req.push(b'c');
        req.extend_from_slice(&4i16.to_be_bytes());
        req.extend_from_slice(b"tiny"); // group id
        req.extend_from_slice(&10_000i32.to_be_bytes());
        req.extend_from_slice(&300_000i32.to_be_bytes());
        req.extend_from_slice(&0i16.to_be_bytes()); // member id ""
        req.extend_from_slice(&(-1i16).to_be_bytes()); // no instance id
        req.extend_from_slice(&8i16.to_be_bytes());
        req.extend_from_slice(b"consumer");
        req.extend_from_slice(&64i32.to_be_bytes());
        for p in 0..64 {
            let name = format!("p{p}");
            req.extend_from_slice(&(name.len() as i16).to_be_bytes());
            req.extend_from_slice(name.as_bytes());
            req.extend_from_slice(&(meta.len() as i32).to_be_bytes());
            req.extend_from_slice(&meta);
        }
        let mut frame = (req.len() as i32).to_be_bytes().to_vec();
        frame.extend_from_slice(&req);
        conv.client_sends(&frame);
    }
    conv.fin(Side::Client).fin(Side::Server);
    let mut pcap = PcapWriter::new(Vec::new(), Link::Ethernet, PcapOptions::default()).unwrap();
    conv.write_to(&mut pcap).unwrap();
    pcap.into_inner()
}

#[test]
fn unanswered_16_mib_join_groups_of_tiny_protocols_keep_what_fits_under_512_mb() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tiny.pcap");
    std::fs::write(&path, unanswered_join_groups_of_tiny_protocols(6)).unwrap();
    let out = under_512_mb(&["decode", "--format", "json", path.to_str().unwrap()]);
    assert!(out.code == 0 || out.code == 1, "{out:#?}");
    let report = json(&out.stdout);
    let said = report["diagnostics"].to_string();
    assert!(said.contains("list entries"), "{said}");
    assert!(said.contains("left out"), "{said}");
    // Every request is still there, unanswered.
    assert_eq!(rows(&report, "exchanges").len(), 6, "{report:#}");
}

/// Fuzz finding `crash-b6db4ab4` (pipeline target, fuzz/README.md): a
/// broker log whose member id holds invalid UTF-8 (read as U+FFFD) before
/// its UUID made kgtrace panic (exit 101) naming the member's client.
#[test]
fn fuzz_crash_b6db4ab4_a_member_id_with_invalid_utf8_is_read_without_a_panic() {
    let prefix = "[2026-12-03 02:42:22,414] INFO [GroupCoordinator id=1 topic=__consumer_offsets partition=2] ";
    let mut log = Vec::new();
    log.extend_from_slice(prefix.as_bytes());
    log.extend_from_slice(b"Pending dynamic member with id g1-c1-b24674");
    log.extend_from_slice(&[0xeb; 84]);
    log.extend_from_slice(b"b5-f73b-4bdf-b049-a4ed18eaca4a joins group g1 in Empty state. Adding to the group now. (org.apache.kafka.coordinator.group.GroupMetadataManager)\n");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("server.log");
    std::fs::write(&path, &log).unwrap();
    for view in ["rebalances", "report"] {
        let out = run(&[view, path.to_str().unwrap()]);
        assert!(out.code == 0 || out.code == 1, "{view}: {out:#?}");
    }
}

/// A broker log of one group rebalancing `rounds` times, a minute apart:
/// a member's session expires, the group stabilises at the next generation.
fn a_group_rebalancing(rounds: usize) -> String {
    let mut log = String::new();
    for n in 0..rounds {
        let (day, hour, minute) = (1 + n / 1440, (n / 60) % 24, n % 60);
        let stamp = |s: u32| format!("2024-05-{day:02} {hour:02}:{minute:02}:{s:02},000");
        log.push_str(&format!(
            "[{}] INFO [GroupCoordinator 1]: Preparing to rebalance group storm in state PreparingRebalance with old generation {n} (__consumer_offsets-1) (reason: removing member c-{n}-0a1b2c3d on heartbeat expiration) (kafka.coordinator.group.GroupCoordinator)\n\
             [{}] INFO [GroupCoordinator 1]: Stabilized group storm generation {} (__consumer_offsets-1) with 1 members (kafka.coordinator.group.GroupCoordinator)\n",
            stamp(0),
            stamp(3),
            n + 1
        ));
    }
    log
}

#[test]
fn a_group_past_ten_thousand_rebalances_keeps_the_newest_and_counts_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("server.log");
    std::fs::write(&path, a_group_rebalancing(10_004)).unwrap();
    let out = under_512_mb(&["rebalances", "--format", "json", path.to_str().unwrap()]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let report = json(&out.stdout);
    let kept = rows(&report, "rebalances");
    assert_eq!(kept.len(), 10_000);
    assert_eq!(kept[0]["generation"], 5, "the four oldest were let go");
    let said = report["diagnostics"].to_string();
    assert!(
        said.contains("4 earlier rebalances of group storm were not kept"),
        "{said}"
    );
}
