//! Kafka framing and every group-API decoder: the input is the client's
//! bytes and the server's bytes of one TCP connection to port 9092 (split
//! at the first byte's value), reassembled and decoded.
#![no_main]
use kgtrace::capture::synth::{Link, PcapOptions, PcapWriter, Side, TcpConversation};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&split, rest)) = data.split_first() else {
        return;
    };
    let at = (usize::from(split) * rest.len()) / 256;
    let (client, server) = rest.split_at(at);
    let mut conv = TcpConversation::new("10.0.0.1:50000", "10.0.0.2:9092").segment_size(1400);
    conv.handshake();
    if !client.is_empty() {
        conv.client_sends(client);
    }
    if !server.is_empty() {
        conv.server_sends(server);
    }
    conv.fin(Side::Client).fin(Side::Server);
    let mut pcap = PcapWriter::new(Vec::new(), Link::Ethernet, PcapOptions::default()).unwrap();
    conv.write_to(&mut pcap).unwrap();
    let bytes = pcap.into_inner();
    let opts = kgtrace::options::ReadOptions::default();
    let _ = kgtrace::input::read_stream(&bytes[..], "fuzz", &opts);
});
