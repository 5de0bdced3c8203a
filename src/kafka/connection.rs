//! One Kafka connection: two frame splitters, the requests in flight, and
//! what the client told us about itself.
//!
//! Takes: the bytes (and gaps) of a connection already known to carry
//! Kafka, oriented so that requests flow client → server. Gives:
//! [`Exchange`]s as responses pair with requests (by correlation id, which
//! Kafka clients number per connection), plus diagnostics. The decoding is
//! in [`super::decode`]; this file is the bookkeeping.

use crate::event::Source;
use std::collections::BTreeMap;
use std::sync::Arc;

use crate::diagnostic::DiagnosticKind;
use crate::event::EventKind;
use crate::time::Timestamp;

use super::apis;
use super::consumer_protocol;
use super::data_path;
use super::data_path::TopicNames;
use super::decode::{self, Decoded};
use super::decode_data;
use super::decode_response;
use super::exchange::{self, ClosedConnection, Ends, RequestSide, ResponseSide};
use super::fetch_memory::FetchMemory;
use super::framing::{FrameSplitter, Piece, SplitFrame};
use super::guess;
use super::header::{self, Read};
use super::partial;
use super::rules::{RequestRules, ResponseRules};
use super::Ctx;

/// Requests kept waiting for an answer per connection; beyond this the
/// oldest is given up as unanswered (a broken stream must not grow memory).
const MAX_IN_FLIGHT: usize = 1024;

/// Responses without a request whose API is guessed, per connection; past
/// this (a capture that lost one direction) they are only counted, so that
/// guessing cannot dominate the run time.
const MAX_GUESSES: u32 = 32;

/// A request waiting for its response (boxed: a map node holds eleven, and
/// every connection with one request in flight keeps a node; unboxed, a
/// coordinator's thousands of connections held 4.8 kB each).
pub(crate) type InFlight = BTreeMap<i32, Box<RequestSide>>;

/// The last things a connection said about its group member.
#[derive(Clone, Debug, Default)]
struct Attribution {
    client_id: Option<Arc<str>>,
    group_id: Option<String>,
    member_id: Option<String>,
    group_instance_id: Option<String>,
    carried_group_traffic: bool,
}

/// A connection known to carry Kafka.
pub(crate) struct Connection {
    ends: Ends,
    /// `"client -> server"`, as exchanges and diagnostics name it.
    label: Arc<str>,
    requests: FrameSplitter,
    responses: FrameSplitter,
    in_flight: InFlight,
    /// KIP-511 software from the connection's ApiVersions, shared by every
    /// request after it (copied per request, it was an allocation each).
    software: Option<Arc<str>>,
    /// What the broker's last ApiVersions answer on this connection offered.
    offered: Option<super::decode::OfferedApis>,
    last: Attribution,
    /// Responses seen without their request.
    unmatched: u32,
    source: Source,
    fetch_memory: FetchMemory,
    /// The topics its Fetch requests named.
    topic_names: TopicNames,
}

impl Connection {
    /// A connection between `ends`; `in_sync` when its start was captured.
    pub(crate) fn new(ends: Ends, in_sync: bool, max_frame_len: usize, source: Source) -> Self {
        Connection {
            ends,
            label: Arc::from(format!("{} -> {}", ends.client, ends.server)),
            requests: FrameSplitter::new(in_sync, max_frame_len),
            responses: FrameSplitter::new(in_sync, max_frame_len),
            in_flight: InFlight::new(),
            software: None,
            offered: None,
            last: Attribution::default(),
            unmatched: 0,
            source,
            fetch_memory: FetchMemory::default(),
            topic_names: TopicNames::default(),
        }
    }

    /// The earliest time and frame of a request still waiting for its
    /// answer: its exchange is still to come.
    pub(crate) fn oldest_waiting(&self) -> Option<(Timestamp, u64)> {
        self.in_flight.values().map(|r| (r.ts, r.frame)).min()
    }

    /// Each request still waiting for its answer: its time and frame, and
    /// the group its exchange's events will name where that is one group
    /// known now ([`one_group`]); `None` where it may be any.
    pub(crate) fn waiting(&self) -> impl Iterator<Item = ((Timestamp, u64), Option<&str>)> {
        self.in_flight
            .values()
            .map(|r| ((r.ts, r.frame), one_group(r)))
    }

    /// Bytes held by both splitters.
    pub(crate) fn buffered_bytes(&self) -> usize {
        self.requests.buffered_bytes() + self.responses.buffered_bytes()
    }

    /// Bytes from the client.
    pub(crate) fn on_request_bytes(&mut self, b: &[u8], ts: Timestamp, frame: u64, ctx: &mut Ctx) {
        let mut pieces = std::mem::take(ctx.pieces);
        self.requests.push(b, ts, frame, &RequestRules, &mut pieces);
        self.on_pieces(pieces, true, ctx);
    }

    /// Bytes from the broker.
    pub(crate) fn on_response_bytes(&mut self, b: &[u8], ts: Timestamp, frame: u64, ctx: &mut Ctx) {
        let mut pieces = std::mem::take(ctx.pieces);
        self.responses.push(
            b,
            ts,
            frame,
            &ResponseRules(&self.in_flight, self.unmatched < MAX_GUESSES),
            &mut pieces,
        );
        self.on_pieces(pieces, false, ctx);
    }

    /// Lost bytes in one direction.
    pub(crate) fn on_gap(
        &mut self,
        requests: bool,
        missing: u64,
        ts: Timestamp,
        frame: u64,
        ctx: &mut Ctx,
    ) {
        let mut pieces = std::mem::take(ctx.pieces);
        let splitter = if requests {
            &mut self.requests
        } else {
            &mut self.responses
        };
        splitter.gap(missing, ts, frame, &mut pieces);
        self.on_pieces(pieces, requests, ctx);
    }

    /// Handles the pieces a splitter made, then gives their (emptied)
    /// vector back to `ctx` for the next segment.
    fn on_pieces(&mut self, mut pieces: Vec<Piece>, requests: bool, ctx: &mut Ctx) {
        let side = if requests { "requests" } else { "responses" };
        for piece in pieces.drain(..) {
            if matches!(&piece, Piece::Frame(f) if f.cut) {
                *ctx.cut_frames += 1;
            }
            match piece {
                Piece::Frame(f) if requests => self.on_request(f, ctx),
                Piece::Frame(f) => self.on_response(f, ctx),
                Piece::Resynced { skipped, after_gap } => {
                    let why = if after_gap {
                        "after a gap"
                    } else {
                        "mid-stream"
                    };
                    self.diag(
                        ctx,
                        DiagnosticKind::Resynced,
                        None,
                        format!("{side}: found a frame {why} after skipping {skipped} bytes"),
                    );
                }
                Piece::LostSync { size } => {
                    let detail =
                        format!("{side}: implausible frame size {size}; searching for a header");
                    self.diag(ctx, DiagnosticKind::Resynced, None, detail);
                }
                Piece::Oversized { size } => {
                    self.diag(
                        ctx,
                        DiagnosticKind::UndecodableMessage,
                        None,
                        format!(
                            "{side}: frame of {size} bytes exceeds the buffering cap; body skipped"
                        ),
                    );
                }
            }
        }
        *ctx.pieces = pieces;
    }

    fn diag(&self, ctx: &mut Ctx, kind: DiagnosticKind, frame: Option<u64>, detail: String) {
        let at = match frame {
            Some(f) => format!("frame {f} ({})", self.label),
            None => self.label.to_string(),
        };
        ctx.diags.add(kind, &self.source, at, detail);
    }

    fn on_request(&mut self, f: SplitFrame, ctx: &mut Ctx) {
        let Read::Done(peek) = header::peek_request(&f.bytes) else {
            let why = if f.complete {
                "truncated"
            } else {
                "lost in a capture gap"
            };
            let detail = format!("request header {why}");
            self.diag(
                ctx,
                DiagnosticKind::UndecodableMessage,
                Some(f.frame),
                detail,
            );
            return;
        };
        let (api_key, version) = (peek.api_key, peek.api_version);
        let no_answer = api_key == 0 && header::produce_acks(&f.bytes, version) == Read::Done(0);
        let exchange = ctx.next_exchange();
        let named = peek.client_id.map(|raw| self.client_id_text(raw));
        let client_id = named.as_deref().or(self.last.client_id.as_deref());
        let assigned = ctx.assigned(client_id);
        let mut decoded = self.decode_request(f, (api_key, version), exchange, assigned, ctx);
        if let Some(EventKind::ConsumerGroupHeartbeatRequest { broker_offers, .. }) =
            &mut decoded.decoded.kind
        {
            *broker_offers = self
                .offered
                .as_ref()
                .map(|o| o.offers(apis::key::CONSUMER_GROUP_HEARTBEAT));
        }
        if let Some(s) = &decoded.decoded.software {
            self.software = Some(Arc::from(s.as_str()));
        }
        self.remember(&named, &decoded.decoded, api_key);
        let req = RequestSide {
            client_id: named,
            software: self.software.clone(),
            ..decoded
        };
        if no_answer {
            // acks=0: the broker never answers; nothing to wait for.
            self.push_unanswered(ctx, req);
            return;
        }
        if let Some(old) = self.in_flight.insert(req.correlation_id, Box::new(req)) {
            self.unanswered(*old, ctx);
        }
        while self.in_flight.len() > MAX_IN_FLIGHT {
            if let Some((_, oldest)) = self.in_flight.pop_first() {
                self.unanswered(*oldest, ctx);
            }
        }
    }

    /// A request's `client_id` as text (lossy UTF-8), shared with the
    /// connection's last one when the bytes are the same: a connection
    /// names one client id on every request, and reading it afresh was an
    /// allocation and a UTF-8 pass per request.
    fn client_id_text(&self, raw: &[u8]) -> Arc<str> {
        match &self.last.client_id {
            Some(last) if last.as_bytes() == raw => last.clone(),
            _ => Arc::from(String::from_utf8_lossy(raw)),
        }
    }

    fn decode_request(
        &mut self,
        f: SplitFrame,
        (api_key, version): (i16, i16),
        exchange: u64,
        assigned: u64,
        ctx: &mut Ctx,
    ) -> RequestSide {
        let correlation_id =
            header::peek_correlation_id(f.bytes.get(4..).unwrap_or_default()).unwrap_or_default();
        let (ts, frame) = (f.ts, f.frame);
        let decoded = if let Some(why) = apis::why_undecodable(api_key, version) {
            self.diag(ctx, DiagnosticKind::UndecodableMessage, Some(frame), why);
            Decoded::default()
        } else if apis::is_group_api(api_key) && f.complete {
            let limit = consumer_protocol::MAX_KEPT_PER_MESSAGE.min(*ctx.kept_left);
            let r = decode::request_within(f.bytes, api_key, version, exchange, limit);
            self.decoded_or_diag(r, api_key, version, frame, "request", ctx)
        } else if apis::is_group_api(api_key) && f.cut {
            partial::request(&f.bytes, api_key, version, exchange).unwrap_or_default()
        } else if f.complete && api_key == decode_data::key::FETCH {
            let ask = data_path::fetch_request(&f.bytes, version, &mut self.topic_names);
            Decoded {
                data: self.fetch_memory.asked(ask, exchange, ts, assigned),
                ..Decoded::default()
            }
        } else if f.complete {
            Decoded {
                data: decode_data::request(&f.bytes, api_key, version, exchange),
                ..Decoded::default()
            }
        } else {
            Decoded::default()
        };
        RequestSide {
            api_key,
            api_version: version,
            correlation_id,
            client_id: None,
            ts,
            frame,
            exchange,
            decoded,
            software: None,
        }
    }

    fn decoded_or_diag(
        &self,
        r: Result<Decoded, String>,
        api_key: i16,
        version: i16,
        frame: u64,
        side: &str,
        ctx: &mut Ctx,
    ) -> Decoded {
        let d = r.unwrap_or_else(|e| {
            let name = apis::api_name(api_key);
            self.diag(
                ctx,
                DiagnosticKind::UndecodableMessage,
                Some(frame),
                format!("{name} v{version} {side}: {e}"),
            );
            Decoded::default()
        });
        *ctx.kept_left = ctx.kept_left.saturating_sub(d.kept_bytes);
        if d.over_cap > 0 {
            let name = apis::api_name(api_key);
            let whose = if *ctx.kept_left < consumer_protocol::MAX_KEPT_PER_MESSAGE {
                "the run's cap on decoded lists (128 MiB) is reached"
            } else {
                "past the cap on one message's decoded lists (32 MiB)"
            };
            self.diag(
                ctx,
                DiagnosticKind::UndecodableMessage,
                Some(frame),
                format!(
                    "{name} v{version} {side}: {} list entries (members, protocols, topics, partitions) left out: {whose}; the rest is kept",
                    d.over_cap
                ),
            );
        }
        if d.bad_metadata {
            let name = apis::api_name(api_key);
            self.diag(
                ctx,
                DiagnosticKind::UndecodableMessage,
                Some(frame),
                format!(
                    "{name} v{version} {side}: embedded consumer protocol bytes did not decode"
                ),
            );
        }
        d
    }

    /// Keeps the last ids the connection named (copied only when they
    /// change: a member's connection names the same ones every request).
    fn remember(&mut self, client_id: &Option<Arc<str>>, d: &Decoded, api_key: i16) {
        fn keep<T: PartialEq + Clone>(last: &mut Option<T>, new: &Option<T>) {
            if new.is_some() && last != new {
                last.clone_from(new);
            }
        }
        keep(&mut self.last.client_id, client_id);
        if apis::is_membership(api_key, d.member_id.is_some()) && d.group_id.is_some() {
            self.last.carried_group_traffic = true;
            keep(&mut self.last.group_id, &d.group_id);
        }
        keep(&mut self.last.member_id, &d.member_id);
        keep(&mut self.last.group_instance_id, &d.group_instance_id);
    }

    fn on_response(&mut self, f: SplitFrame, ctx: &mut Ctx) {
        let Some(corr) = header::peek_correlation_id(&f.bytes) else {
            let why = if f.complete {
                "truncated"
            } else {
                "lost in a capture gap"
            };
            let detail = format!("response header {why}");
            self.diag(
                ctx,
                DiagnosticKind::UndecodableMessage,
                Some(f.frame),
                detail,
            );
            return;
        };
        let Some(req) = self.in_flight.remove(&corr) else {
            return self.on_unmatched(f, corr, ctx);
        };
        let req = *req;
        self.give_up_before(req.exchange, ctx);
        if matches!(
            req.api_key,
            apis::key::SYNC_GROUP | apis::key::CONSUMER_GROUP_HEARTBEAT
        ) {
            let client_id = req.client_id.as_deref().or(self.last.client_id.as_deref());
            ctx.note_assignment(client_id);
        }
        // A request that could not be decoded was reported once already.
        let decoded = if apis::decodable(req.api_key, req.api_version) && f.complete {
            let limit = consumer_protocol::MAX_KEPT_PER_MESSAGE.min(*ctx.kept_left);
            let (key, v, e) = (req.api_key, req.api_version, req.exchange);
            let r = decode_response::response_within(f.bytes, key, v, e, limit);
            self.decoded_or_diag(r, req.api_key, req.api_version, f.frame, "response", ctx)
        } else if apis::decodable(req.api_key, req.api_version) && f.cut {
            partial::response(&f.bytes, req.api_key, req.api_version, req.exchange)
                .unwrap_or_default()
        } else if let Some(partitions) = f.skimmed {
            let partitions = self.fetch_memory.answered(partitions, f.ts);
            Decoded {
                data: (!partitions.is_empty())
                    .then(|| decode_data::fetch_response(req.exchange, partitions)),
                ..Decoded::default()
            }
        } else if f.complete {
            Decoded {
                data: decode_data::response(&f.bytes, req.api_key, req.api_version, req.exchange),
                ..Decoded::default()
            }
        } else {
            Decoded::default()
        };
        if let Some(m) = &decoded.member_id {
            self.last.member_id = Some(m.clone());
        }
        if decoded.offered.is_some() {
            self.offered.clone_from(&decoded.offered);
        }
        let resp = ResponseSide {
            ts: f.ts,
            frame: f.frame,
            decoded,
        };
        ctx.out.push(exchange::build(
            self.ends,
            &self.label,
            Some(req),
            Some(resp),
            (-1, -1, corr),
        ));
    }

    fn on_unmatched(&mut self, f: SplitFrame, corr: i32, ctx: &mut Ctx) {
        self.unmatched = self.unmatched.saturating_add(1);
        let guess = (f.complete && self.unmatched <= MAX_GUESSES)
            .then(|| guess::guess(&f.bytes, ctx.next_exchange()))
            .flatten();
        let detail = match &guess {
            Some((api, _, _)) => format!(
                "correlation id {corr}: request not captured; looks like a {} response",
                apis::api_name(*api)
            ),
            None => format!("correlation id {corr}: request not captured"),
        };
        self.diag(
            ctx,
            DiagnosticKind::UnmatchedResponse,
            Some(f.frame),
            detail,
        );
        // The version is unknown without the request, even when a guess fits.
        let (api, _, decoded) = guess.unwrap_or((-1, -1, Decoded::default()));
        let resp = ResponseSide {
            ts: f.ts,
            frame: f.frame,
            decoded,
        };
        ctx.out.push(exchange::build(
            self.ends,
            &self.label,
            None,
            Some(resp),
            (api, -1, corr),
        ));
    }

    /// Gives up the requests still waiting that were sent before the one
    /// (exchange `answered`: exchanges are numbered as requests are read)
    /// just answered. "On a single TCP connection, requests will be
    /// processed in the order they are sent and responses will return in
    /// that order" (the protocol guide, kafka.apache.org/protocol; the
    /// broker mutes a channel from each request it reads until its
    /// response is sent: SocketServer.scala, KafkaChannel.java
    /// `MUTED_AND_RESPONSE_PENDING`), so their answers were lost in the
    /// capture. Waiting for them to the end of the connection held every
    /// row and event written in order behind them.
    fn give_up_before(&mut self, answered: u64, ctx: &mut Ctx) {
        let lost: Vec<i32> = self
            .in_flight
            .iter()
            .filter(|(_, r)| r.exchange < answered)
            .map(|(corr, _)| *corr)
            .collect();
        for corr in lost {
            if let Some(req) = self.in_flight.remove(&corr) {
                self.unanswered(*req, ctx);
            }
        }
    }

    fn unanswered(&self, req: RequestSide, ctx: &mut Ctx) {
        let name = apis::api_name(req.api_key);
        self.diag(
            ctx,
            DiagnosticKind::UnansweredRequest,
            Some(req.frame),
            format!(
                "{name} correlation id {} never answered",
                req.correlation_id
            ),
        );
        self.push_unanswered(ctx, req);
    }

    /// A request that gets no answer (acks=0, or never answered) as an
    /// exchange of its own.
    fn push_unanswered(&self, ctx: &mut Ctx, req: RequestSide) {
        ctx.out.push(exchange::build(
            self.ends,
            &self.label,
            Some(req),
            None,
            (-1, -1, -1),
        ));
    }

    /// Emits every request still waiting as unanswered.
    pub(crate) fn flush(&mut self, ctx: &mut Ctx) {
        for (_, req) in std::mem::take(&mut self.in_flight) {
            self.unanswered(*req, ctx);
        }
    }

    /// What to report when the connection closes, if it carried group traffic.
    pub(crate) fn closed(
        &self,
        ts: Timestamp,
        frame: u64,
        reset: bool,
    ) -> Option<ClosedConnection> {
        let l = &self.last;
        l.carried_group_traffic.then(|| ClosedConnection {
            ts,
            frame,
            reset,
            conn: self.ends.conn,
            client: self.ends.client,
            server: self.ends.server,
            client_id: l.client_id.clone(),
            group_id: l.group_id.clone(),
            member_id: l.member_id.clone(),
            group_instance_id: l.group_instance_id.clone(),
            software: self.software.clone(),
        })
    }
}

/// The one group every event of `r`'s exchange names: the APIs whose
/// request names exactly one group, and whose answer names no other
/// (`normalize::events_from_exchange` gives all of an exchange's events the
/// exchange's group, the request's). DescribeGroups, DeleteGroups,
/// OffsetFetch (v8 names several groups) and FindCoordinator (v4 several
/// keys) may name others: `None`, as for every API without a group.
fn one_group(r: &RequestSide) -> Option<&str> {
    use super::apis::key;
    match r.api_key {
        key::JOIN_GROUP
        | key::SYNC_GROUP
        | key::HEARTBEAT
        | key::LEAVE_GROUP
        | key::OFFSET_COMMIT
        | key::CONSUMER_GROUP_HEARTBEAT => r.decoded.group_id.as_deref(),
        _ => None,
    }
}
