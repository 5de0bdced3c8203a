//! Test support: typed Kafka messages → framed bytes, and a driver that
//! feeds them to a [`KafkaDecoder`] as stream events.
//!
//! Takes: kafka-protocol structs (encoded with its `Encodable`, as the
//! house style allows in tests). Gives: wire frames and a [`Sim`] that plays
//! connections, gaps and closes and collects exchanges and diagnostics.

use std::net::SocketAddr;

use bytes::BytesMut;
use kafka_protocol::messages::{ApiKey, RequestHeader, ResponseHeader};
use kafka_protocol::protocol::{Encodable, StrBytes};

use crate::diagnostic::{DiagnosticKind, Diagnostics};
use crate::tcp::{ConnectionKey, Direction, StreamEvent};
use crate::time::Timestamp;

use super::{ClosedConnection, Exchange, KafkaConfig, KafkaDecoder};

/// `s` as the crate's string type.
pub(crate) fn s(text: &str) -> StrBytes {
    StrBytes::from_string(text.to_string())
}

fn framed(body: BytesMut) -> Vec<u8> {
    let mut f = (body.len() as u32).to_be_bytes().to_vec();
    f.extend_from_slice(&body);
    f
}

/// A request frame: size, header (the version the API uses), body.
pub(crate) fn request<T: Encodable>(
    api_key: i16,
    version: i16,
    corr: i32,
    client_id: &str,
    body: &T,
) -> Vec<u8> {
    let header_version = ApiKey::try_from(api_key)
        .unwrap()
        .request_header_version(version);
    let header = RequestHeader::default()
        .with_request_api_key(api_key)
        .with_request_api_version(version)
        .with_correlation_id(corr)
        .with_client_id(Some(s(client_id)));
    let mut buf = BytesMut::new();
    header.encode(&mut buf, header_version).unwrap();
    body.encode(&mut buf, version).unwrap();
    framed(buf)
}

/// A request frame whose body is `body` verbatim (APIs we skip, or bytes
/// the crate cannot encode).
pub(crate) fn raw_request(
    api_key: i16,
    version: i16,
    corr: i32,
    client_id: &str,
    body: &[u8],
) -> Vec<u8> {
    let mut b = BytesMut::new();
    b.extend_from_slice(&api_key.to_be_bytes());
    b.extend_from_slice(&version.to_be_bytes());
    b.extend_from_slice(&corr.to_be_bytes());
    b.extend_from_slice(&(client_id.len() as i16).to_be_bytes());
    b.extend_from_slice(client_id.as_bytes());
    b.extend_from_slice(body);
    framed(b)
}

/// A response frame answering `api_key` at `version`.
pub(crate) fn response<T: Encodable>(api_key: i16, version: i16, corr: i32, body: &T) -> Vec<u8> {
    let header_version = ApiKey::try_from(api_key)
        .unwrap()
        .response_header_version(version);
    let mut buf = BytesMut::new();
    ResponseHeader::default()
        .with_correlation_id(corr)
        .encode(&mut buf, header_version)
        .unwrap();
    body.encode(&mut buf, version).unwrap();
    framed(buf)
}

/// A response frame with a verbatim body after a v0 header.
pub(crate) fn raw_response(corr: i32, body: &[u8]) -> Vec<u8> {
    let mut b = BytesMut::new();
    b.extend_from_slice(&corr.to_be_bytes());
    b.extend_from_slice(body);
    framed(b)
}

/// Plays stream events into a decoder.
pub(crate) struct Sim {
    pub dec: KafkaDecoder,
    pub diags: Diagnostics,
    pub out: Vec<Exchange>,
    pub closed: Vec<ClosedConnection>,
    frame: u64,
}

pub(crate) const CLIENT: &str = "10.0.0.1:50000";
pub(crate) const BROKER: &str = "10.0.0.2:9092";

impl Sim {
    pub(crate) fn new() -> Sim {
        Sim::with(KafkaConfig::default())
    }

    pub(crate) fn with(config: KafkaConfig) -> Sim {
        let dec = KafkaDecoder::new(config, crate::event::Source::from("test.pcap"));
        Sim {
            dec,
            diags: Diagnostics::default(),
            out: Vec::new(),
            closed: Vec::new(),
            frame: 0,
        }
    }

    fn next(&mut self) -> (Timestamp, u64) {
        self.frame += 1;
        (Timestamp(self.frame as i64 * 1_000_000), self.frame)
    }

    /// Opens connection `conn` between `client` and `server` (as TCP guessed).
    pub(crate) fn open_between(&mut self, conn: u64, client: &str, server: &str, syn_seen: bool) {
        let key = ConnectionKey {
            client: client.parse::<SocketAddr>().unwrap(),
            server: server.parse().unwrap(),
        };
        let (ts, frame) = self.next();
        let ev = StreamEvent::Opened {
            conn,
            key,
            ts,
            frame,
            syn_seen,
        };
        self.dec
            .on_stream_event(&ev, &mut self.diags, &mut self.out);
    }

    /// Opens connection `conn` from [`CLIENT`] to [`BROKER`].
    pub(crate) fn open(&mut self, conn: u64, syn_seen: bool) {
        self.open_between(conn, CLIENT, BROKER, syn_seen);
    }

    /// One packet's worth of bytes; returns its frame number.
    pub(crate) fn send(&mut self, conn: u64, dir: Direction, bytes: &[u8]) -> u64 {
        let (ts, frame) = self.next();
        let ev = StreamEvent::Data {
            conn,
            dir,
            ts,
            frame,
            bytes,
        };
        self.dec
            .on_stream_event(&ev, &mut self.diags, &mut self.out);
        frame
    }

    /// Bytes split into packets of `chunk` bytes; returns the last frame.
    pub(crate) fn send_chunked(
        &mut self,
        conn: u64,
        dir: Direction,
        bytes: &[u8],
        chunk: usize,
    ) -> u64 {
        bytes
            .chunks(chunk)
            .map(|c| self.send(conn, dir, c))
            .last()
            .unwrap_or(0)
    }

    pub(crate) fn gap(&mut self, conn: u64, dir: Direction, missing_bytes: u64) {
        let (ts, frame) = self.next();
        let ev = StreamEvent::Gap {
            conn,
            dir,
            ts,
            frame,
            missing_bytes,
            snapped: false,
        };
        self.dec
            .on_stream_event(&ev, &mut self.diags, &mut self.out);
    }

    pub(crate) fn close(&mut self, conn: u64, reset: bool) {
        let (ts, frame) = self.next();
        let ev = StreamEvent::Closed {
            conn,
            ts,
            frame,
            reset,
        };
        self.dec
            .on_stream_event(&ev, &mut self.diags, &mut self.out);
        self.closed.extend(self.dec.take_closed());
    }

    pub(crate) fn finish(&mut self) {
        self.dec.finish(&mut self.diags, &mut self.out);
    }

    pub(crate) fn count(&self, kind: DiagnosticKind) -> u64 {
        self.diags.count(kind)
    }

    /// The only exchange emitted so far.
    pub(crate) fn only(&self) -> &Exchange {
        assert_eq!(
            self.out.len(),
            1,
            "exchanges: {:#?}\ndiags: {:#?}",
            self.out,
            self.diags
        );
        &self.out[0]
    }
}

/// A JoinGroup v5 exchange of a new static member (`i-1`) of group `g`:
/// the request has no member id; the broker assigns `m-9` in generation 4.
pub(crate) fn join_group_v5_frames(corr: i32) -> (Vec<u8>, Vec<u8>) {
    use kafka_protocol::messages::{GroupId, JoinGroupRequest, JoinGroupResponse};
    let req = JoinGroupRequest::default()
        .with_group_id(GroupId(s("g")))
        .with_session_timeout_ms(45_000)
        .with_rebalance_timeout_ms(300_000)
        .with_group_instance_id(Some(s("i-1")))
        .with_protocol_type(s("consumer"));
    let resp = JoinGroupResponse::default()
        .with_generation_id(4)
        .with_leader(s("m-9"))
        .with_member_id(s("m-9"));
    (
        request(11, 5, corr, "app", &req),
        response(11, 5, corr, &resp),
    )
}

/// A ListGroups v4 exchange listing groups `a` (Stable) and `b` (Empty).
pub(crate) fn list_groups_v4_frames(corr: i32) -> (Vec<u8>, Vec<u8>) {
    use kafka_protocol::messages::list_groups_response::ListedGroup;
    use kafka_protocol::messages::{GroupId, ListGroupsRequest, ListGroupsResponse};
    let listed = |g: &str, state: &str| {
        ListedGroup::default()
            .with_group_id(GroupId(s(g)))
            .with_protocol_type(s("consumer"))
            .with_group_state(s(state))
    };
    let resp = ListGroupsResponse::default()
        .with_groups(vec![listed("a", "Stable"), listed("b", "Empty")]);
    (
        request(16, 4, corr, "admin", &ListGroupsRequest::default()),
        response(16, 4, corr, &resp),
    )
}
