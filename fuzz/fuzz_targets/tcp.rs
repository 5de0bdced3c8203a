//! TCP reassembly fed arbitrary segments: each 4-byte record is (side and
//! flags, sequence offset, payload length), the payload taken from the rest.
#![no_main]
use kgtrace::capture::synth::{Link, PcapOptions, PcapWriter, Side, TcpConversation};
use kgtrace::capture::TcpFlags;
use libfuzzer_sys::fuzz_target;

#[path = "whole.rs"]
mod whole;

fuzz_target!(|data: &[u8]| {
    let mut conv = TcpConversation::new("10.0.0.1:50000", "10.0.0.2:9092");
    let mut rest = data;
    let mut segments = 0;
    while rest.len() >= 4 && segments < 256 {
        let (head, tail) = rest.split_at(4);
        let side = if head[0] & 1 == 0 {
            Side::Client
        } else {
            Side::Server
        };
        let flags = TcpFlags {
            syn: head[0] & 2 != 0,
            ack: head[0] & 4 == 0,
            fin: head[0] & 8 != 0,
            rst: head[0] & 16 != 0,
        };
        let base = if side == Side::Client { 1001u32 } else { 5001 };
        let seq = base.wrapping_add(u32::from(u16::from_be_bytes([head[1], head[2]])));
        let len = usize::from(head[3]).min(tail.len());
        conv.push(side, seq, flags, &tail[..len]);
        rest = &tail[len..];
        segments += 1;
    }
    let mut pcap = PcapWriter::new(Vec::new(), Link::Ethernet, PcapOptions::default()).unwrap();
    conv.write_to(&mut pcap).unwrap();
    let bytes = pcap.into_inner();
    let opts = kgtrace::options::ReadOptions::default();
    if let Ok(collected) = kgtrace::input::read_stream(&bytes[..], "fuzz", &opts) {
        whole::analyse_and_render(collected);
    }
});
