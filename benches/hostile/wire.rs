//! Hand-written Kafka frames of the group APIs, in the non-flexible
//! versions (JoinGroup v5, SyncGroup v3, LeaveGroup v3), for the hostile
//! shapes.
//!
//! Takes: ids, generations, member lists. Gives: complete frames (4-byte
//! size, header, body) laid out as Kafka's JSON schemas say for those
//! versions, so that the shapes can be as big as wanted without building
//! every member as a typed message first.

/// Kafka API keys used here.
const JOIN_GROUP: i16 = 11;
const SYNC_GROUP: i16 = 14;
const LEAVE_GROUP: i16 = 13;

/// A frame being written.
#[derive(Default)]
pub struct Buf(Vec<u8>);

impl Buf {
    fn i16(&mut self, v: i16) -> &mut Self {
        self.0.extend_from_slice(&v.to_be_bytes());
        self
    }
    fn i32(&mut self, v: i32) -> &mut Self {
        self.0.extend_from_slice(&v.to_be_bytes());
        self
    }
    fn str(&mut self, s: &str) -> &mut Self {
        self.i16(s.len() as i16);
        self.0.extend_from_slice(s.as_bytes());
        self
    }
    fn null_str(&mut self) -> &mut Self {
        self.i16(-1)
    }
    fn bytes(&mut self, b: &[u8]) -> &mut Self {
        self.i32(b.len() as i32);
        self.0.extend_from_slice(b);
        self
    }
    fn framed(&self) -> Vec<u8> {
        let mut f = (self.0.len() as u32).to_be_bytes().to_vec();
        f.extend_from_slice(&self.0);
        f
    }
}

fn request(api: i16, version: i16, corr: i32, client: &str) -> Buf {
    let mut b = Buf::default();
    b.i16(api).i16(version).i32(corr).str(client);
    b
}

fn response(corr: i32) -> Buf {
    let mut b = Buf::default();
    b.i32(corr);
    b
}

/// ConsumerProtocolSubscription v0 of one topic.
pub fn subscription(topic: &str) -> Vec<u8> {
    let mut b = Buf::default();
    b.i16(0).i32(1).str(topic).i32(-1);
    b.0
}

/// ConsumerProtocolAssignment v0: `partitions` of one topic.
pub fn assignment(topic: &str, partitions: &[i32]) -> Vec<u8> {
    let mut b = Buf::default();
    b.i16(0).i32(1).str(topic).i32(partitions.len() as i32);
    for p in partitions {
        b.i32(*p);
    }
    b.i32(-1);
    b.0
}

/// A JoinGroup v5 request and its response naming `members` (the first is
/// the leader; each member's metadata subscribes to `topic`).
pub fn join_group(
    corr: i32,
    client: &str,
    group: &str,
    member_id: &str,
    generation: i32,
    members: &[String],
) -> (Vec<u8>, Vec<u8>) {
    let meta = subscription("orders");
    let mut req = request(JOIN_GROUP, 5, corr, client);
    req.str(group)
        .i32(10_000)
        .i32(300_000)
        .str("")
        .null_str()
        .str("consumer")
        .i32(1)
        .str("range")
        .bytes(&meta);
    let mut resp = response(corr);
    let leader = members.first().map_or(member_id, String::as_str);
    resp.i32(0)
        .i16(0)
        .i32(generation)
        .str("range")
        .str(leader)
        .str(member_id)
        .i32(members.len() as i32);
    for m in members {
        resp.str(m).null_str().bytes(&meta);
    }
    (req.framed(), resp.framed())
}

/// A SyncGroup v3 request from the leader assigning one partition to each
/// of `members`, and its answer.
pub fn sync_group(
    corr: i32,
    client: &str,
    group: &str,
    member_id: &str,
    generation: i32,
    members: &[String],
) -> (Vec<u8>, Vec<u8>) {
    let mut req = request(SYNC_GROUP, 3, corr, client);
    req.str(group)
        .i32(generation)
        .str(member_id)
        .null_str()
        .i32(members.len() as i32);
    for (i, m) in members.iter().enumerate() {
        req.str(m).bytes(&assignment("orders", &[i as i32]));
    }
    let mut resp = response(corr);
    resp.i32(0).i16(0).bytes(&assignment("orders", &[0]));
    (req.framed(), resp.framed())
}

/// A JoinGroup v5 request offering `protocols` protocols, each subscribing
/// to `topics` empty-named topics (issue 14: 16 MiB of tiny entries).
pub fn join_group_of_tiny_protocols(corr: i32, protocols: usize, topics: usize) -> Vec<u8> {
    let mut meta = Buf::default();
    meta.i16(0).i32(topics as i32);
    for _ in 0..topics {
        meta.str("");
    }
    meta.i32(-1);
    let mut req = request(JOIN_GROUP, 5, corr, "c");
    req.str("tiny")
        .i32(10_000)
        .i32(300_000)
        .str("")
        .null_str()
        .str("consumer")
        .i32(protocols as i32);
    for i in 0..protocols {
        req.str(&format!("p{i}")).bytes(&meta.0);
    }
    req.framed()
}

/// A SyncGroup v3 request from the leader assigning `partitions`
/// partitions (in topics of at most 131,072) to one member, and its answer
/// carrying the same assignment.
pub fn sync_group_of_partitions(corr: i32, partitions: usize) -> (Vec<u8>, Vec<u8>) {
    let per_topic = 131_072;
    let topics = partitions.div_ceil(per_topic);
    let mut a = Buf::default();
    a.i16(0).i32(topics as i32);
    for t in 0..topics {
        let n = per_topic.min(partitions - t * per_topic);
        a.str(&format!("t{t}")).i32(n as i32);
        for p in 0..n {
            a.i32(p as i32);
        }
    }
    a.i32(-1);
    let mut req = request(SYNC_GROUP, 3, corr, "c");
    req.str("wide")
        .i32(1)
        .str("m-0")
        .null_str()
        .i32(1)
        .str("m-0")
        .bytes(&a.0);
    let mut resp = response(corr);
    resp.i32(0).i16(0).bytes(&a.0);
    (req.framed(), resp.framed())
}

/// A LeaveGroup v3 request for `member_id` and its answer.
pub fn leave_group(corr: i32, client: &str, group: &str, member_id: &str) -> (Vec<u8>, Vec<u8>) {
    let mut req = request(LEAVE_GROUP, 3, corr, client);
    req.str(group).i32(1).str(member_id).null_str();
    let mut resp = response(corr);
    resp.i32(0).i16(0).i32(1).str(member_id).null_str().i16(0);
    (req.framed(), resp.framed())
}
