//! The paired request/response, as kgtrace hands it on.
//!
//! Takes: a request's header and decoded body (if captured) and its
//! response's (if captured). Gives: [`Exchange`], one row of `kgtrace
//! decode` and the input of [`crate::normalize`]; and [`ClosedConnection`],
//! what is known about a group member's connection when it ends.

use std::net::SocketAddr;
use std::sync::Arc;

use serde::Serialize;

use crate::diagnostic::Diagnostics;
use crate::event::{DataKind, EventKind};
use crate::fast_hash::FastMap;
use crate::time::Timestamp;

use super::decode::Decoded;
use super::errors::error_name;

/// One Kafka request and its response, either of which may be missing.
///
/// Serialised as one NDJSON object per line by `kgtrace decode --format
/// ndjson`; fields marked `skip` are for the pipeline only.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Exchange {
    /// Request time, or response time when the request was not captured.
    pub ts: Timestamp,
    /// `request_api_key` (-1 when only an unrecognisable response was seen).
    pub api_key: i16,
    /// Kafka's name for the API (`JoinGroup`), `Unknown` if not known.
    pub api: &'static str,
    /// `request_api_version` (-1 when the request was not captured).
    pub api_version: i16,
    /// `correlation_id`.
    pub correlation_id: i32,
    /// The request header's `client_id` (shared by a connection's
    /// exchanges).
    pub client_id: Option<Arc<str>>,
    /// `"ip:port -> ip:port"`, client first.
    pub connection: Arc<str>,
    /// Frame that completed the request (1-based, as Wireshark counts).
    pub request_frame: Option<u64>,
    /// Frame that completed the response.
    pub response_frame: Option<u64>,
    /// Response time minus request time.
    pub latency_ms: Option<f64>,
    /// The group named by the request (or response).
    pub group_id: Option<String>,
    /// The member named by the request, else the one the response assigns.
    pub member_id: Option<String>,
    /// Generation (or KIP-848 member epoch) of the request, else response.
    pub generation_id: Option<i32>,
    /// Response error code: top level, or the first partition/member error
    /// where the top level has none.
    pub error_code: Option<i16>,
    /// Kafka's name for `error_code` (`NONE` for 0).
    pub error: Option<&'static str>,
    /// KIP-511 `name/version` from this connection's ApiVersions (shared
    /// by the connection's exchanges).
    pub client_software: Option<Arc<str>>,
    /// Connection id (the reassembler's).
    #[serde(skip)]
    pub conn: u64,
    /// Client end.
    #[serde(skip)]
    pub client: SocketAddr,
    /// Server (broker) end.
    #[serde(skip)]
    pub server: SocketAddr,
    /// When the request was completed.
    #[serde(skip)]
    pub request_ts: Option<Timestamp>,
    /// When the response was completed.
    #[serde(skip)]
    pub response_ts: Option<Timestamp>,
    /// The request's wire event (group APIs only).
    #[serde(skip)]
    pub request: Option<EventKind>,
    /// The response's wire event (group APIs only; for responses about
    /// several groups, the first group's).
    #[serde(skip)]
    pub response: Option<EventKind>,
    /// KIP-345 static id named by the request.
    #[serde(skip)]
    pub group_instance_id: Option<String>,
    /// Member id as the request states it (`member_id` falls back to the
    /// response's when the request has none).
    #[serde(skip)]
    pub request_member_id: Option<String>,
    /// Generation or epoch as the request states it.
    #[serde(skip)]
    pub request_generation_id: Option<i32>,
    /// Member id as the response states it (JoinGroup assigns one;
    /// ConsumerGroupHeartbeat returns it).
    #[serde(skip)]
    pub response_member_id: Option<String>,
    /// Generation or epoch as the response states it.
    #[serde(skip)]
    pub response_generation_id: Option<i32>,
    /// Responses about several groups (DescribeGroups, ListGroups,
    /// ConsumerGroupDescribe): one `(group, event)` per group, first included.
    #[serde(skip)]
    pub response_groups: Vec<(String, EventKind)>,
    /// The request's data-path event (Fetch, ListOffsets).
    #[serde(skip)]
    pub request_data: Option<DataKind>,
    /// The response's data-path event (Fetch headers, ListOffsets,
    /// Metadata topic ids).
    #[serde(skip)]
    pub response_data: Option<DataKind>,
    /// The request was cut short (snaplen, lost bytes): decoded only as far
    /// as its captured bytes go.
    #[serde(skip)]
    pub request_truncated: bool,
    /// The response was cut short, likewise.
    #[serde(skip)]
    pub response_truncated: bool,
}

/// What is known about a connection that carried group traffic, when it
/// closes; [`crate::normalize::events_from_close`] turns it into a
/// `ConnectionClosed` event.
#[derive(Clone, Debug, PartialEq)]
pub struct ClosedConnection {
    /// When the FIN or RST was seen.
    pub ts: Timestamp,
    /// Its frame.
    pub frame: u64,
    /// RST rather than FIN.
    pub reset: bool,
    /// Connection id.
    pub conn: u64,
    /// Client end.
    pub client: SocketAddr,
    /// Broker end.
    pub server: SocketAddr,
    /// Last `client_id` seen on it.
    pub client_id: Option<Arc<str>>,
    /// Last group named on it.
    pub group_id: Option<String>,
    /// Last member id used on it.
    pub member_id: Option<String>,
    /// Last static id used on it.
    pub group_instance_id: Option<String>,
    /// KIP-511 software.
    pub software: Option<Arc<str>>,
}

/// The request side of an exchange being built.
#[derive(Clone, Debug)]
pub(crate) struct RequestSide {
    pub api_key: i16,
    pub api_version: i16,
    pub correlation_id: i32,
    pub client_id: Option<Arc<str>>,
    pub ts: Timestamp,
    pub frame: u64,
    pub exchange: u64,
    pub decoded: Decoded,
    pub software: Option<Arc<str>>,
}

/// The response side of an exchange being built.
#[derive(Clone, Debug)]
pub(crate) struct ResponseSide {
    pub ts: Timestamp,
    pub frame: u64,
    pub decoded: Decoded,
}

/// The ends of a connection, client first.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Ends {
    pub conn: u64,
    pub client: SocketAddr,
    pub server: SocketAddr,
}

/// Builds an exchange from what was seen of it. `label` is the
/// connection's `"client -> server"`, written once per connection;
/// `unmatched` gives the api key, version and correlation id of a response
/// seen without its request.
pub(crate) fn build(
    ends: Ends,
    label: &Arc<str>,
    req: Option<RequestSide>,
    resp: Option<ResponseSide>,
    unmatched: (i16, i16, i32),
) -> Exchange {
    let (api_key, api_version, correlation_id) = req
        .as_ref()
        .map_or(unmatched, |r| (r.api_key, r.api_version, r.correlation_id));
    let latency_ms = match (&req, &resp) {
        (Some(q), Some(r)) => Some(r.ts.millis_since(q.ts)),
        _ => None,
    };
    let (request_ts, request_frame) = (req.as_ref().map(|r| r.ts), req.as_ref().map(|r| r.frame));
    let (response_ts, response_frame) =
        (resp.as_ref().map(|r| r.ts), resp.as_ref().map(|r| r.frame));
    // Both sides are owned: their fields are moved into the exchange, not
    // copied (a dense capture builds tens of thousands a second).
    let (client_id, client_software, q) = match req {
        Some(r) => (r.client_id, r.software, Some(r.decoded)),
        None => (None, None, None),
    };
    let r = resp.map(|r| r.decoded);
    let error_code = r.as_ref().and_then(|d| d.error_code);
    // FindCoordinator v4+ answers name their keys; they are groups only
    // when the request asked for group coordinators (key type 0).
    let keys_are_groups = !matches!(
        q.as_ref().and_then(|d| d.kind.as_ref()),
        Some(EventKind::FindCoordinatorRequest { key_type, .. }) if *key_type != 0
    );
    let (q_group, q_member, q_generation, q_instance, q_truncated, request, request_data) = match q
    {
        Some(d) => (
            d.group_id,
            d.member_id,
            d.generation_id,
            d.group_instance_id,
            d.truncated,
            d.kind,
            d.data,
        ),
        None => (None, None, None, None, false, None, None),
    };
    let (r_group, r_member, r_generation, r_groups, r_truncated, mut response, response_data) =
        match r {
            Some(d) => (
                d.group_id,
                d.member_id,
                d.generation_id,
                keys_are_groups.then_some(d.groups),
                d.truncated,
                d.kind,
                d.data,
            ),
            None => (None, None, None, None, false, None, None),
        };
    if let Some(EventKind::JoinGroupResponse { parked_ms, .. }) = response.as_mut() {
        *parked_ms = latency_ms;
    }
    Exchange {
        ts: request_ts.or(response_ts).unwrap_or_default(),
        api_key,
        api: super::api_name(api_key),
        api_version,
        correlation_id,
        client_id,
        connection: label.clone(),
        request_frame,
        response_frame,
        latency_ms,
        group_id: q_group.or(r_group.filter(|_| keys_are_groups)),
        member_id: q_member.clone().or(r_member.clone()),
        generation_id: q_generation.or(r_generation),
        error_code,
        error: error_code.map(error_name),
        client_software,
        conn: ends.conn,
        client: ends.client,
        server: ends.server,
        request_ts,
        response_ts,
        request,
        response,
        group_instance_id: q_instance,
        request_member_id: q_member,
        request_generation_id: q_generation,
        response_member_id: r_member,
        response_generation_id: r_generation,
        response_groups: r_groups.unwrap_or_default(),
        request_truncated: q_truncated,
        response_truncated: r_truncated,
        request_data,
        response_data,
    }
}

/// Where a connection puts its results.
pub(crate) struct Ctx<'a> {
    /// Diagnostics.
    pub diags: &'a mut Diagnostics,
    /// Finished exchanges.
    pub out: &'a mut Vec<Exchange>,
    /// The decoder-wide exchange counter.
    pub exchange_ids: &'a mut u64,
    /// Frames a stream hole cut short, decoder-wide.
    pub cut_frames: &'a mut u64,
    /// Per client id, a stamp bumped by every assignment answered to it
    /// (SyncGroup, ConsumerGroupHeartbeat): its Fetch connections tell
    /// their whole fetch session on their next request.
    pub assignments: &'a mut FastMap<String, u64>,
    /// Bytes the decoded lists of the rest of the run may still keep
    /// (see [`super::MAX_KEPT_PER_RUN`]).
    pub kept_left: &'a mut usize,
    /// Reused room for a frame splitter's pieces (empty between uses).
    pub pieces: &'a mut Vec<super::framing::Piece>,
}

impl Ctx<'_> {
    pub(crate) fn next_exchange(&mut self) -> u64 {
        *self.exchange_ids += 1;
        *self.exchange_ids
    }

    /// The assignment stamp of `client_id`.
    pub(crate) fn assigned(&self, client_id: Option<&str>) -> u64 {
        client_id
            .and_then(|c| self.assignments.get(c))
            .copied()
            .unwrap_or(0)
    }

    /// Notes an assignment answered to `client_id`.
    pub(crate) fn note_assignment(&mut self, client_id: Option<&str>) {
        let Some(c) = client_id else { return };
        if self.assignments.len() >= MAX_CLIENTS && !self.assignments.contains_key(c) {
            return;
        }
        *self.assignments.entry(c.to_string()).or_default() += 1;
    }
}

/// Client ids whose assignments are stamped (a hostile capture must not
/// grow the map without bound).
const MAX_CLIENTS: usize = 64 * 1024;

#[cfg(test)]
mod tests {
    use crate::kafka::testkit::{join_group_v5_frames, Sim};
    use crate::tcp::Direction::{ToClient, ToServer};

    #[test]
    fn serialises_exactly_the_documented_ndjson_fields() {
        let mut sim = Sim::new();
        sim.open(1, true);
        let (q, r) = join_group_v5_frames(3);
        sim.send(1, ToServer, &q);
        sim.send(1, ToClient, &r);
        let json = serde_json::to_value(sim.only()).unwrap();
        let keys: Vec<&str> = json
            .as_object()
            .unwrap()
            .keys()
            .map(|k| k.as_str())
            .collect();
        let mut want = vec![
            "ts",
            "api_key",
            "api",
            "api_version",
            "correlation_id",
            "client_id",
            "connection",
            "request_frame",
            "response_frame",
            "latency_ms",
            "group_id",
            "member_id",
            "generation_id",
            "error_code",
            "error",
            "client_software",
        ];
        want.sort_unstable();
        let mut got = keys.clone();
        got.sort_unstable();
        assert_eq!(got, want);
        assert_eq!(json["ts"], "1970-01-01T00:00:00.002000Z");
        assert_eq!(json["api"], "JoinGroup");
        assert_eq!(json["member_id"], "m-9");
        assert_eq!(json["error"], "NONE");
        assert_eq!(json["connection"], "10.0.0.1:50000 -> 10.0.0.2:9092");
    }
}
