//! Kafka framing and every group-API decoder: the input is a list of
//! exchanges, each `[api][version][request length: u16][response length:
//! u16]` then the request body and the response body (bytes after the
//! header). The target writes a well-formed header for the chosen API
//! (JoinGroup, SyncGroup, Heartbeat, LeaveGroup, OffsetCommit, OffsetFetch,
//! FindCoordinator, DescribeGroups, ListGroups, ApiVersions,
//! ConsumerGroupHeartbeat, ConsumerGroupDescribe, and the data-path
//! Produce, Fetch, ListOffsets, Metadata) so that libFuzzer spends its time
//! in the body decoders, frames both, and plays them as one TCP connection
//! to port 9092 through the whole pipeline. A set high bit of `api` sends the
//! request bytes unframed (raw framing and resync).
#![no_main]
use kafka_protocol::messages::ApiKey;
use kgtrace::capture::synth::{Link, PcapOptions, PcapWriter, Side, TcpConversation};
use libfuzzer_sys::fuzz_target;

#[path = "whole.rs"]
mod whole;

/// The APIs kgtrace buffers and decodes (group APIs) or skims (data path).
const APIS: [i16; 16] = [11, 14, 12, 13, 8, 9, 10, 15, 16, 18, 68, 69, 0, 1, 2, 3];

fn header(api_key: i16, version: i16, corr: i32, request: bool) -> Vec<u8> {
    let k = ApiKey::try_from(api_key).expect("listed APIs exist");
    let mut h = Vec::new();
    if request {
        h.extend_from_slice(&api_key.to_be_bytes());
        h.extend_from_slice(&version.to_be_bytes());
        h.extend_from_slice(&corr.to_be_bytes());
        h.extend_from_slice(&(4i16).to_be_bytes());
        h.extend_from_slice(b"fuzz");
        if k.request_header_version(version) >= 2 {
            h.push(0); // no tagged fields
        }
    } else {
        h.extend_from_slice(&corr.to_be_bytes());
        if k.response_header_version(version) >= 1 {
            h.push(0);
        }
    }
    h
}

fn framed(mut head: Vec<u8>, body: &[u8]) -> Vec<u8> {
    head.extend_from_slice(body);
    let mut f = (head.len() as u32).to_be_bytes().to_vec();
    f.extend_from_slice(&head);
    f
}

fuzz_target!(|data: &[u8]| {
    let mut conv = TcpConversation::new("10.0.0.1:50000", "10.0.0.2:9092").segment_size(1400);
    conv.handshake();
    let mut rest = data;
    let mut corr = 0i32;
    while rest.len() >= 6 && corr < 64 {
        let (head, tail) = rest.split_at(6);
        let raw = head[0] & 0x80 != 0;
        let api = APIS[usize::from(head[0] & 0x7f) % APIS.len()];
        let max = ApiKey::try_from(api).unwrap().valid_versions().max;
        let version = i16::from(head[1]) % (max + 2); // one past the newest too
        let req_len = usize::from(u16::from_be_bytes([head[2], head[3]])).min(tail.len());
        let (req, tail) = tail.split_at(req_len);
        let resp_len = usize::from(u16::from_be_bytes([head[4], head[5]])).min(tail.len());
        let (resp, tail) = tail.split_at(resp_len);
        rest = tail;
        corr += 1;
        if raw {
            conv.client_sends(req);
        } else {
            conv.client_sends(&framed(header(api, version, corr, true), req));
        }
        if !resp.is_empty() || !raw {
            conv.server_sends(&framed(header(api, version, corr, false), resp));
        }
    }
    conv.fin(Side::Client).fin(Side::Server);
    let mut pcap = PcapWriter::new(Vec::new(), Link::Ethernet, PcapOptions::default()).unwrap();
    conv.write_to(&mut pcap).unwrap();
    let bytes = pcap.into_inner();
    let opts = kgtrace::options::ReadOptions::default();
    if let Ok(collected) = kgtrace::input::read_stream(&bytes[..], "fuzz", &opts) {
        whole::analyse_and_render(collected);
    }
});
