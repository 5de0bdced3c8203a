//! Every group field a snap length left whole is decoded (issue 11's done
//! criterion "decode every group field present in the captured bytes").
//!
//! Takes the captures cut by a snap length: `fixtures/snaplen/*.s<N>`
//! (tansu lab captures cut with `editcap -s N`) and the Apache Kafka
//! `fixtures/kafka/*_s128`/`_s200` (recorded with `tcpdump -s N`). For each
//! Kafka frame of a group API (JoinGroup, SyncGroup, Heartbeat, LeaveGroup,
//! OffsetCommit, OffsetFetch) that a packet's cut shortened, it walks the
//! captured bytes itself, by the message schemas of Apache Kafka
//! (clients/src/main/resources/common/message/*Request.json and
//! *Response.json: field order, versions, `flexibleVersions`), and lists
//! every field whose bytes lie wholly inside them. Gives tests that
//! kgtrace's decode of the cut capture has each such field with that value
//! (its events and `decode` rows), and that the walk agrees with tshark's
//! decode stored beside the fixture (the cut capture's own `*.tshark.tsv`
//! for the Apache Kafka ones; for the tansu ones, which were cut from
//! `fixtures/lab/<name>` with frame numbers kept, the whole capture's).
//!
//! Only frames that start and end inside one packet are walked (a frame
//! spread over several packets has holes in the middle, not a cut end;
//! group-API frames are small, so on these loopback captures they are
//! rare); where a cut hid a frame's size, the walk finds the next frame
//! at the next packet that starts like one. Fields
//! kgtrace does not keep even from a whole frame (throttle times, a
//! SyncGroup's protocol type and name, an OffsetCommit's static id) are
//! not asked for. Kafka's empty member id (a new member) and a null static
//! id are kgtrace's none.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use kgtrace::event::{EventKind, Location};
use kgtrace::options::ReadOptions;
use kgtrace::GroupEvent;

use crate::util;

/// The broker port of every fixture.
const BROKER_PORT: u16 = 9092;

/// One Kafka frame whose packet was cut: its frame number, whether it is a
/// request, and its captured bytes after the 4-byte size.
struct CutFrame {
    frame: u64,
    request: bool,
    conn: (std::net::SocketAddr, std::net::SocketAddr),
    body: Vec<u8>,
}

/// Per direction of a connection: the sequence number the next Kafka frame
/// starts at, or `None` once lost.
type Directions = HashMap<(std::net::SocketAddr, std::net::SocketAddr), Option<u32>>;

/// The cut frames of a capture that lie in one packet each.
fn cut_frames(path: &Path) -> Vec<CutFrame> {
    let file = std::fs::File::open(path).expect("capture opens");
    let mut diags = kgtrace::Diagnostics::default();
    let mut next: Directions = HashMap::new();
    let mut out = Vec::new();
    kgtrace::capture::read_capture(file, "cut", &mut diags, |seg| {
        let sent = seg.payload.len() + seg.missing as usize;
        if sent == 0 {
            return;
        }
        let key = (seg.src, seg.dst);
        let at = next.entry(key).or_insert(Some(seg.seq));
        // Lost (a cut hid a frame's size): found again at a packet that
        // starts like a frame, as clients and brokers write one message
        // per send. A wrong guess walks fields kgtrace does not have, and
        // fails the test, so it cannot hide a gap.
        if at.is_none() && starts_like_a_frame(seg.payload) {
            *at = Some(seg.seq);
        }
        let Some(mut start) = *at else { return };
        // A retransmission or a segment past a hole: not walked.
        if start.wrapping_sub(seg.seq) as usize >= sent {
            if (seg.seq.wrapping_sub(start) as i32) > 0 {
                *at = None;
            }
            return;
        }
        loop {
            let off = start.wrapping_sub(seg.seq) as usize;
            if off >= sent {
                break;
            }
            let Some(size) = seg.payload.get(off..off + 4) else {
                // The size itself was cut: the next frame cannot be found.
                *at = None;
                return;
            };
            let size = i32::from_be_bytes(size.try_into().expect("4 bytes")) as usize;
            let end = off + 4 + size;
            let captured = seg.payload.len().min(end);
            if end <= sent && captured < end {
                out.push(CutFrame {
                    frame: seg.frame,
                    request: seg.dst.port() == BROKER_PORT,
                    conn: if seg.dst.port() == BROKER_PORT {
                        (seg.src, seg.dst)
                    } else {
                        (seg.dst, seg.src)
                    },
                    body: seg.payload[off + 4..captured].to_vec(),
                });
            }
            start = start.wrapping_add((4 + size) as u32);
        }
        *at = Some(start);
    })
    .expect("capture reads");
    out
}

/// Whether `payload` starts with a plausible Kafka size (8 bytes to
/// 16 MiB). A wrong guess on an answer finds no request with its
/// correlation id and is not walked.
fn starts_like_a_frame(payload: &[u8]) -> bool {
    let Some(size) = payload.get(..4) else {
        return false;
    };
    let size = i32::from_be_bytes(size.try_into().expect("4 bytes"));
    (8..1 << 24).contains(&size)
}

/// A reader over captured bytes; every read is `None` past their end.
struct Walk<'a> {
    b: &'a [u8],
    at: usize,
    flexible: bool,
    fields: Vec<(String, String)>,
}

impl<'a> Walk<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let s = self.b.get(self.at..self.at.checked_add(n)?)?;
        self.at += n;
        Some(s)
    }
    fn int(&mut self, n: usize) -> Option<i64> {
        let s = self.take(n)?;
        Some(
            s.iter()
                .fold(if s[0] & 0x80 != 0 { -1i64 } else { 0 }, |v, b| {
                    (v << 8) | i64::from(*b)
                }),
        )
    }
    fn uvarint(&mut self) -> Option<u64> {
        let mut v = 0u64;
        for shift in (0..35).step_by(7) {
            let b = self.take(1)?[0];
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Some(v);
            }
        }
        None
    }
    /// A string or bytes length; `None` inside for null.
    fn len(&mut self, wide: bool) -> Option<Option<usize>> {
        let n = if self.flexible {
            self.uvarint()? as i64 - 1
        } else {
            self.int(if wide { 4 } else { 2 })?
        };
        Some(usize::try_from(n).ok())
    }
    fn string(&mut self) -> Option<Option<String>> {
        match self.len(false)? {
            None => Some(None),
            Some(n) => Some(Some(String::from_utf8_lossy(self.take(n)?).into_owned())),
        }
    }
    fn tags(&mut self) -> Option<()> {
        if self.flexible {
            for _ in 0..self.uvarint()? {
                self.uvarint()?;
                let n = self.uvarint()? as usize;
                self.take(n)?;
            }
        }
        Some(())
    }
    fn note(&mut self, name: &str, value: String) {
        self.fields.push((name.to_string(), value));
    }
    fn note_int(&mut self, name: &str, n: usize) -> Option<()> {
        let v = self.int(n)?;
        self.note(name, v.to_string());
        Some(())
    }
    fn note_str(&mut self, name: &str) -> Option<()> {
        let v = self.string()?.unwrap_or_default();
        self.note(name, v);
        Some(())
    }
    fn skip_str(&mut self) -> Option<()> {
        self.string().map(|_| ())
    }
    fn skip_bytes(&mut self) -> Option<()> {
        let n = self.len(true)?.unwrap_or(0);
        self.take(n).map(|_| ())
    }
    fn count(&mut self) -> Option<usize> {
        Some(self.len(true)?.unwrap_or(0))
    }
}

/// The first flexible version of each group API's request and response
/// (`flexibleVersions` of its message schemas).
fn first_flexible(api: i16) -> i16 {
    match api {
        8 => 8,
        9 => 6,
        11 => 6,
        12..=14 => 4,
        _ => i16::MAX,
    }
}

/// Walked fields: (name, value) in wire order.
type Fields = Vec<(String, String)>;

/// The fields of a cut request whose bytes are whole, in wire order.
fn walk_request(body: &[u8]) -> Option<(i16, i16, i32, Fields)> {
    let mut w = Walk {
        b: body,
        at: 0,
        flexible: false,
        fields: Vec::new(),
    };
    let (api, version, corr) = (w.int(2)? as i16, w.int(2)? as i16, w.int(4)? as i32);
    if !(8..=14).contains(&api) || api == 10 {
        return None;
    }
    w.skip_str()?; // client id: an INT16 length even in header v2
    w.flexible = version >= first_flexible(api);
    w.tags()?;
    let _ = request_fields(&mut w, api, version);
    Some((api, version, corr, w.fields))
}

fn request_fields(w: &mut Walk<'_>, api: i16, v: i16) -> Option<()> {
    match api {
        // JoinGroupRequest.json
        11 => {
            w.note_str("group_id")?;
            w.note_int("session_timeout_ms", 4)?;
            if v >= 1 {
                w.note_int("rebalance_timeout_ms", 4)?;
            }
            w.note_str("member_id")?;
            if v >= 5 {
                w.note_str("group_instance_id")?;
            }
            w.note_str("protocol_type")?;
            for i in 0..w.count()? {
                let name = w.string()?.unwrap_or_default();
                w.note(&format!("protocol[{i}].name"), name);
                w.skip_bytes()?;
                w.tags()?;
            }
            if v >= 8 {
                w.note_str("reason")?;
            }
        }
        // SyncGroupRequest.json
        14 => {
            w.note_str("group_id")?;
            w.note_int("generation_id", 4)?;
            w.note_str("member_id")?;
            if v >= 3 {
                w.note_str("group_instance_id")?;
            }
            if v >= 5 {
                w.skip_str()?; // protocol type
                w.skip_str()?; // protocol name
            }
            for i in 0..w.count()? {
                w.note_str(&format!("assignment[{i}].member_id"))?;
                w.skip_bytes()?;
                w.tags()?;
            }
        }
        // HeartbeatRequest.json
        12 => {
            w.note_str("group_id")?;
            w.note_int("generation_id", 4)?;
            w.note_str("member_id")?;
            if v >= 3 {
                w.note_str("group_instance_id")?;
            }
        }
        // LeaveGroupRequest.json
        13 => {
            w.note_str("group_id")?;
            if v < 3 {
                return w.note_str("member_id");
            }
            for i in 0..w.count()? {
                w.note_str(&format!("leaving[{i}].member_id"))?;
                w.note_str(&format!("leaving[{i}].group_instance_id"))?;
                if v >= 5 {
                    w.note_str(&format!("leaving[{i}].reason"))?;
                }
                w.tags()?;
            }
        }
        // OffsetCommitRequest.json
        8 => {
            w.note_str("group_id")?;
            if v >= 1 {
                w.note_int("generation_id", 4)?;
                w.note_str("member_id")?;
            }
        }
        // OffsetFetchRequest.json
        9 => {
            if v < 8 {
                return w.note_str("group_id");
            }
            if w.count()? > 0 {
                w.note_str("group_id")?;
                if v >= 9 {
                    w.note_str("member_id")?;
                    w.note_int("generation_id", 4)?;
                }
            }
        }
        _ => {}
    }
    Some(())
}

/// The fields of a cut response whose bytes are whole, in wire order.
fn walk_response(body: &[u8], api: i16, v: i16) -> Vec<(String, String)> {
    let mut w = Walk {
        b: body,
        at: 0,
        flexible: v >= first_flexible(api),
        fields: Vec::new(),
    };
    let _ = response_fields(&mut w, api, v);
    w.fields
}

fn response_fields(w: &mut Walk<'_>, api: i16, v: i16) -> Option<()> {
    w.take(4)?; // correlation id
    w.tags()?;
    match api {
        // JoinGroupResponse.json
        11 => {
            if v >= 2 {
                w.take(4)?;
            }
            w.note_int("error_code", 2)?;
            w.note_int("generation_id", 4)?;
            if v >= 7 {
                w.skip_str()?; // protocol type
            }
            w.note_str("protocol_name")?;
            w.note_str("leader")?;
            if v >= 9 {
                w.take(1)?; // skip assignment
            }
            w.note_str("member_id")?;
            for i in 0..w.count()? {
                w.note_str(&format!("member[{i}].member_id"))?;
                if v >= 5 {
                    w.note_str(&format!("member[{i}].group_instance_id"))?;
                }
                w.skip_bytes()?;
                w.tags()?;
            }
        }
        // SyncGroupResponse.json, HeartbeatResponse.json, LeaveGroupResponse.json
        12..=14 => {
            if v >= 1 {
                w.take(4)?;
            }
            w.note_int("error_code", 2)?;
        }
        _ => {}
    }
    Some(())
}

/// kgtrace's value of a walked field, from the frame's events and its
/// `decode` row; `None` when kgtrace has none.
fn kgtrace_value(field: &str, events: &[&GroupEvent], row: Option<&RowFields>) -> Option<String> {
    let from_row = |f: &dyn Fn(&RowFields) -> Option<String>| row.and_then(f);
    let event = |f: &dyn Fn(&GroupEvent) -> Option<String>| events.iter().find_map(|e| f(e));
    let (list, index, sub) = split_index(field);
    match (list, sub) {
        ("group_id", _) => event(&|e| e.group.as_deref().map(String::from))
            .or_else(|| from_row(&|r| r.group_id.clone())),
        ("member_id", _) => event(&|e| e.member_id.as_deref().map(String::from))
            .or_else(|| from_row(&|r| r.member_id.clone())),
        ("generation_id", _) => event(&|e| e.generation_id.map(|g| g.to_string()))
            .or_else(|| from_row(&|r| r.generation_id.map(|g| g.to_string()))),
        ("group_instance_id", _) => event(&|e| e.group_instance_id.as_deref().map(String::from)),
        ("error_code", _) => from_row(&|r| r.error_code.map(|c| c.to_string())),
        _ => event(&|e| kind_value(&e.kind, list, index, sub)),
    }
}

/// `protocol[2].name` → (`protocol`, 2, `name`); `group_id` → (`group_id`, 0, ``).
fn split_index(field: &str) -> (&str, usize, &str) {
    let Some((list, rest)) = field.split_once('[') else {
        return (field, 0, "");
    };
    let (n, sub) = rest.split_once("].").unwrap_or((rest, ""));
    (list, n.parse().unwrap_or(usize::MAX), sub)
}

fn kind_value(kind: &EventKind, list: &str, i: usize, sub: &str) -> Option<String> {
    let nonempty = |s: &str| (!s.is_empty()).then(|| s.to_string());
    match (kind, list, sub) {
        (
            EventKind::JoinGroupRequest {
                session_timeout_ms, ..
            },
            "session_timeout_ms",
            _,
        ) => Some(session_timeout_ms.to_string()),
        (
            EventKind::JoinGroupRequest {
                rebalance_timeout_ms,
                ..
            },
            "rebalance_timeout_ms",
            _,
        ) => rebalance_timeout_ms.map(|t| t.to_string()),
        (EventKind::JoinGroupRequest { protocol_type, .. }, "protocol_type", _) => {
            nonempty(protocol_type)
        }
        (EventKind::JoinGroupRequest { protocols, .. }, "protocol", "name") => {
            protocols.get(i).map(|p| p.name.clone())
        }
        (EventKind::JoinGroupRequest { reason, .. }, "reason", _) => {
            reason.as_ref().map(|r| r.to_string())
        }
        (EventKind::SyncGroupRequest { assignments, .. }, "assignment", "member_id") => {
            assignments.get(i).map(|a| a.member_id.clone())
        }
        (EventKind::LeaveGroupRequest { members, .. }, "leaving", sub) => {
            let m = members.get(i)?;
            match sub {
                "member_id" => Some(m.member_id.clone()),
                "group_instance_id" => m.group_instance_id.clone(),
                _ => m.reason.clone(),
            }
        }
        (EventKind::JoinGroupResponse { protocol_name, .. }, "protocol_name", _) => {
            protocol_name.as_ref().map(|p| p.to_string())
        }
        (EventKind::JoinGroupResponse { leader, .. }, "leader", _) => nonempty(leader),
        (EventKind::JoinGroupResponse { members, .. }, "member", sub) => {
            let m = members.get(i)?;
            match sub {
                "member_id" => Some(m.member_id.clone()),
                _ => m.group_instance_id.clone(),
            }
        }
        _ => None,
    }
}

/// The `decode` row fields of one side of an exchange.
struct RowFields {
    group_id: Option<String>,
    member_id: Option<String>,
    generation_id: Option<i32>,
    error_code: Option<i16>,
}

/// kgtrace's events and `decode` rows of a capture, by frame.
fn kgtrace_decode(path: &Path) -> (HashMap<u64, Vec<GroupEvent>>, HashMap<u64, RowFields>) {
    let collected =
        kgtrace::input::read_inputs(&[path.to_path_buf()], &ReadOptions::default(), true, true)
            .expect("kgtrace reads the capture");
    let mut events: HashMap<u64, Vec<GroupEvent>> = HashMap::new();
    for e in collected.captured {
        if let Location::Frame { frame } = e.evidence.at {
            events.entry(frame).or_default().push(e);
        }
    }
    let mut rows = HashMap::new();
    for x in collected.exchanges {
        if let Some(f) = x.request_frame {
            rows.insert(
                f,
                RowFields {
                    group_id: x.group_id.clone(),
                    member_id: x.member_id.clone(),
                    generation_id: x.generation_id,
                    error_code: None,
                },
            );
        }
        if let Some(f) = x.response_frame {
            rows.insert(
                f,
                RowFields {
                    group_id: x.group_id,
                    member_id: x.member_id,
                    generation_id: x.generation_id,
                    error_code: x.error_code,
                },
            );
        }
    }
    (events, rows)
}

/// A walked field's value as kgtrace writes it: Kafka's empty member id
/// and null static id are none, and so is OffsetFetch's member epoch -1
/// (no member: OffsetFetchRequest.json `MemberEpoch`), as from whole frames.
fn expected(api: i16, field: &str, value: &str) -> Option<String> {
    if api == 9 && field == "generation_id" && value == "-1" {
        return None;
    }
    let none_when_empty = field.ends_with("member_id")
        || field.ends_with("group_instance_id")
        || field.ends_with("reason")
        || field == "leader"
        || field == "protocol_name"
        || field == "protocol_type";
    (!(none_when_empty && value.is_empty())).then(|| value.to_string())
}

/// The tshark column holding a walked field, if any.
fn tshark_column(field: &str) -> Option<&'static str> {
    let (list, _, sub) = split_index(field);
    Some(match (list, sub) {
        ("group_id", _) => "kafka.consumer_group",
        ("member_id", _) | (_, "member_id") => "kafka.member_id",
        ("generation_id", _) => "kafka.generation_id",
        ("group_instance_id", _) | (_, "group_instance_id") => "kafka.consumer_group_instance",
        ("leader", _) => "kafka.group_leader_id",
        ("protocol_name", _) | ("protocol", "name") => "kafka.protocol_name",
        ("session_timeout_ms", _) => "kafka.session_timeout",
        ("rebalance_timeout_ms", _) => "kafka.rebalance_timeout",
        ("error_code", _) => "kafka.error",
        _ => return None,
    })
}

/// What one cut capture shows: frames walked, fields checked against
/// kgtrace, fields tshark confirmed, and every problem.
#[derive(Default)]
struct Tally {
    frames: usize,
    fields: usize,
    confirmed: usize,
    problems: Vec<String>,
}

fn check(cut: &Path, tshark: &[util::TsvRow]) -> Tally {
    let by_frame: HashMap<u64, &util::TsvRow> = tshark
        .iter()
        .filter_map(|r| Some((r.get("frame.number")?.parse().ok()?, r)))
        .collect();
    let (events, rows) = kgtrace_decode(cut);
    let mut asked: HashMap<(std::net::SocketAddr, std::net::SocketAddr, i32), (i16, i16)> =
        HashMap::new();
    let mut t = Tally::default();
    for f in cut_frames(cut) {
        let walked = if f.request {
            let Some((api, version, corr, fields)) = walk_request(&f.body) else {
                // Not a group API: still pair its answer by correlation id.
                if f.body.len() >= 8 {
                    let corr = i32::from_be_bytes(f.body[4..8].try_into().expect("4"));
                    asked.remove(&(f.conn.0, f.conn.1, corr));
                }
                continue;
            };
            asked.insert((f.conn.0, f.conn.1, corr), (api, version));
            (api, version, fields)
        } else {
            let Some(corr) = f.body.get(..4) else {
                continue;
            };
            let corr = i32::from_be_bytes(corr.try_into().expect("4"));
            let Some((api, version)) = asked.remove(&(f.conn.0, f.conn.1, corr)) else {
                continue;
            };
            (api, version, walk_response(&f.body, api, version))
        };
        let (api, version, walked) = walked;
        if walked.is_empty() {
            continue;
        }
        t.frames += 1;
        let evs: Vec<&GroupEvent> = events.get(&f.frame).into_iter().flatten().collect();
        let row = rows.get(&f.frame);
        for (field, value) in &walked {
            t.fields += 1;
            let want = expected(api, field, value);
            let got = kgtrace_value(field, &evs, row);
            if got != want {
                t.problems.push(format!(
                    "frame {}: {field} is {value:?} in the captured bytes, kgtrace {got:?}",
                    f.frame
                ));
            }
            // tshark reads OffsetFetch v8+'s list of groups as one group id
            // (it prints the list's compact count byte): no confirmation.
            if api == 9 && version >= 8 {
                continue;
            }
            let Some(col) = tshark_column(field) else {
                continue;
            };
            let Some(said) = by_frame.get(&f.frame).and_then(|r| r.get(col)) else {
                continue;
            };
            if said.is_empty() || value.is_empty() {
                continue;
            }
            // tshark lists a frame's values of one field joined by commas;
            // it names errors and writes nulls its own way.
            let known = said.split(',').any(|s| s == value)
                || col == "kafka.error"
                || said.contains("Null");
            if !known {
                t.problems.push(format!(
                    "frame {}: {field} walked as {value:?}, tshark says {said:?}",
                    f.frame
                ));
            } else if col != "kafka.error" {
                t.confirmed += 1;
            }
        }
    }
    t
}

/// Every cut capture with the tshark decode to confirm its walk.
fn cut_captures() -> Vec<(PathBuf, Vec<util::TsvRow>)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(util::snaplen_dir()).expect("fixtures/snaplen") {
        let path = entry.expect("entry").path();
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        if name.ends_with(".truth.json") {
            continue;
        }
        let original = name.split('.').next().unwrap_or_default().to_string();
        out.push((path, util::tshark_rows(&original)));
    }
    for name in util::KAFKA_FIXTURES.iter().filter(|n| util::snapped(n)) {
        out.push((util::capture_of(name), util::tshark_rows(name)));
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

#[test]
fn every_group_field_whose_bytes_a_snap_length_left_whole_is_decoded() {
    let captures = cut_captures();
    assert!(captures.len() >= 10, "{} cut captures", captures.len());
    let mut problems = Vec::new();
    for (path, tshark) in &captures {
        let t = check(path, tshark);
        println!(
            "{}: {} cut group frames, {} whole fields checked, {} confirmed by tshark",
            path.display(),
            t.frames,
            t.fields,
            t.confirmed
        );
        assert!(
            t.frames > 0 && t.confirmed > 0,
            "{}: nothing checked",
            path.display()
        );
        problems.extend(
            t.problems
                .iter()
                .map(|p| format!("{}: {p}", path.display())),
        );
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_walk_lists_exactly_the_fields_inside_the_captured_bytes() {
    // A JoinGroup v5 request cut inside its first protocol's metadata:
    // header (api 11, v5, correlation 3, client "c"), group "g",
    // timeouts 6000 and 300000, empty member id, null static id,
    // protocol type "consumer", one protocol "range" with 20 bytes of
    // metadata of which 2 were captured.
    let mut b = vec![0, 11, 0, 5, 0, 0, 0, 3, 0, 1, b'c', 0, 1, b'g'];
    b.extend_from_slice(&6000i32.to_be_bytes());
    b.extend_from_slice(&300_000i32.to_be_bytes());
    b.extend_from_slice(&[0, 0, 0xff, 0xff, 0, 8]);
    b.extend_from_slice(b"consumer");
    b.extend_from_slice(&[0, 0, 0, 1, 0, 5]);
    b.extend_from_slice(b"range");
    b.extend_from_slice(&[0, 0, 0, 20, 0, 3]);
    let (api, version, corr, fields) = walk_request(&b).expect("a group request");
    assert_eq!((api, version, corr), (11, 5, 3));
    let names: Vec<&str> = fields.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "group_id",
            "session_timeout_ms",
            "rebalance_timeout_ms",
            "member_id",
            "group_instance_id",
            "protocol_type",
            "protocol[0].name"
        ]
    );
    // Seven bytes less and the protocol name is no longer whole.
    let cut = walk_request(&b[..b.len() - 7]).expect("a group request").3;
    assert_eq!(cut.last().map(|f| f.0.as_str()), Some("protocol_type"));
}
