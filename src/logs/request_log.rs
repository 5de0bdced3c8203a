//! The broker's request log (`kafka-request.log`, logger
//! `kafka.request.logger` at DEBUG): "Completed request:{JSON}" lines
//! (KIP-673 JSON since 2.8, `RequestConvertToJson`) for the classic group
//! APIs.
//!
//! Takes: the JSON after "Completed request:". Gives: a
//! `BrokerLine::RequestCompleted` event for JoinGroup (11), Heartbeat (12),
//! LeaveGroup (13) and SyncGroup (14) — with `remoteTimeMs`, the time a
//! JoinGroup was parked in purgatory, which survives TLS — and
//! [`Outcome::Ignored`] for every other API. Only group-API lines are handed
//! to serde_json: the API key is read first with a byte search.

use serde_json::Value;

use crate::event::{BrokerLine, ErrorCode, EventKind, RequestCompleted};
use crate::logs::parsed::{number, regex, text, Outcome, Parsed};

/// The API key in `"requestApiKey":N`, read without parsing the JSON.
fn api_key(json: &[u8]) -> Option<i16> {
    const KEY: &[u8] = b"\"requestApiKey\":";
    let at = memchr::memmem::find(json, KEY)? + KEY.len();
    let digits = json[at..].iter().take_while(|b| b.is_ascii_digit()).count();
    std::str::from_utf8(&json[at..at + digits])
        .ok()?
        .parse()
        .ok()
}

fn api_name(key: i16) -> Option<&'static str> {
    match key {
        11 => Some("JoinGroup"),
        12 => Some("Heartbeat"),
        13 => Some("LeaveGroup"),
        14 => Some("SyncGroup"),
        _ => None,
    }
}

/// Reads one "Completed request:" JSON document (or, before 2.8, the
/// `RequestHeader(apiKey=…) -- {…},response:… ;totalTime:…` text form).
pub(crate) fn parse(json: &[u8]) -> Outcome {
    if json.starts_with(b"RequestHeader(") {
        return text_form(json).map_or(Outcome::Ignored, Outcome::event);
    }
    let Some(api) = api_key(json).and_then(api_name) else {
        return Outcome::Ignored;
    };
    match serde_json::from_slice::<Value>(json) {
        Ok(v) => Outcome::event(parsed(api, &v)),
        Err(_) => Outcome::Unknown,
    }
}

fn string(v: &Value) -> Option<String> {
    v.as_str().filter(|s| !s.is_empty()).map(str::to_string)
}

fn float(v: &Value) -> f64 {
    v.as_f64().unwrap_or(0.0)
}

fn parsed(api: &str, v: &Value) -> Parsed {
    let (header, request, response) = (&v["requestHeader"], &v["request"], &v["response"]);
    let leaving = request["members"].as_array().and_then(|m| m.first());
    let reason = string(&request["reason"]).or_else(|| leaving.and_then(|m| string(&m["reason"])));
    let error = response["errorCode"]
        .as_i64()
        .and_then(|c| ErrorCode::from_code(c as i16))
        .map(|e| e.name().to_string());
    let line = BrokerLine::RequestCompleted(Box::new(RequestCompleted {
        api: api.to_string(),
        api_version: header["requestApiVersion"].as_i64().unwrap_or(-1) as i16,
        correlation_id: header["correlationId"].as_i64().unwrap_or(-1) as i32,
        error,
        total_time_ms: float(&v["totalTimeMs"]),
        remote_time_ms: float(&v["remoteTimeMs"]),
        request_queue_time_ms: float(&v["requestQueueTimeMs"]),
        local_time_ms: float(&v["localTimeMs"]),
        reason,
        leader: string(&response["leader"]),
    }));
    let member_id = string(&response["memberId"])
        .or_else(|| string(&request["memberId"]))
        .or_else(|| leaving.and_then(|m| string(&m["memberId"])));
    let generation = [&response["generationId"], &request["generationId"]]
        .iter()
        .find_map(|g| g.as_i64().filter(|g| *g >= 0))
        .map(|g| g as i32);
    let mut p = Parsed::new(EventKind::Broker(line))
        .group(string(&request["groupId"]))
        .member(member_id)
        .instance(string(&request["groupInstanceId"]))
        .generation(generation);
    p.client_id = string(&header["clientId"]);
    p
}

/// The pre-2.8 text form: `RequestHeader(apiKey=JOIN_GROUP, apiVersion=2,
/// clientId=c, correlationId=5) -- {group_id=g,…},response:{…} from
/// connection a-b-0;totalTime:3001.2,requestQueueTime:0.1,localTime:0.3,remoteTime:3000.5,…`.
/// Only the header and the timings are read; the body's Struct dump differs
/// by version.
fn text_form(line: &[u8]) -> Option<Parsed> {
    let head = regex!(
        r"(?-u)^RequestHeader\(apiKey=(JOIN_GROUP|HEARTBEAT|LEAVE_GROUP|SYNC_GROUP), apiVersion=(\d+), clientId=([^,]*), correlationId=(-?\d+)\)"
    );
    let times = regex!(
        r"(?-u);totalTime:([\d.]+),requestQueueTime:([\d.]+),localTime:([\d.]+),remoteTime:([\d.]+)"
    );
    let group = regex!(r"(?-u) -- \{group_id=([^,}]*)");
    let (h, t) = (head.captures(line)?, times.captures(line)?);
    let api = match &h[1] {
        b"JOIN_GROUP" => "JoinGroup",
        b"HEARTBEAT" => "Heartbeat",
        b"LEAVE_GROUP" => "LeaveGroup",
        _ => "SyncGroup",
    };
    let ms = |i| number::<f64>(&t, i).unwrap_or(0.0);
    let line_kind = BrokerLine::RequestCompleted(Box::new(RequestCompleted {
        api: api.to_string(),
        api_version: number(&h, 2).unwrap_or(-1),
        correlation_id: number(&h, 4).unwrap_or(-1),
        error: None,
        total_time_ms: ms(1),
        request_queue_time_ms: ms(2),
        local_time_ms: ms(3),
        remote_time_ms: ms(4),
        reason: None,
        leader: None,
    }));
    let group_id = group
        .captures(line)
        .and_then(|c| text(&c, 1))
        .filter(|g| !g.is_empty());
    let mut p = Parsed::new(EventKind::Broker(line_kind)).group(group_id);
    p.client_id = text(&h, 3).filter(|c| !c.is_empty());
    Some(p)
}

/// The client end of a request log `connection` id
/// (`brokerIp:port-clientIp:port-index`).
pub(crate) fn client_address(line: &[u8]) -> Option<String> {
    let (key, end): (&[u8], u8) = if line.starts_with(b"RequestHeader(") {
        (b" from connection ", b';')
    } else {
        (b"\"connection\":\"", b'"')
    };
    let at = memchr::memmem::find(line, key)? + key.len();
    let stop = at + memchr::memchr(end, &line[at..])?;
    let conn = std::str::from_utf8(&line[at..stop]).ok()?;
    let mut parts = conn.split('-');
    let (_broker, client) = (parts.next()?, parts.next()?);
    Some(client.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    const JOIN: &str = r#"{"isForwarded":false,"requestHeader":{"requestApiKey":11,"requestApiVersion":9,"correlationId":7,"clientId":"c-1","requestApiKeyName":"JOIN_GROUP"},"request":{"groupId":"g","sessionTimeoutMs":45000,"rebalanceTimeoutMs":300000,"memberId":"c-1-ab","groupInstanceId":null,"protocolType":"consumer","protocols":[],"reason":"rebalance failed due to MemberIdRequiredException"},"response":{"throttleTimeMs":0,"errorCode":0,"generationId":4,"protocolType":"consumer","protocolName":"range","leader":"c-1-ab","skipAssignment":false,"memberId":"c-1-ab","members":[]},"connection":"10.0.0.1:9092-10.0.0.9:51234-12","totalTimeMs":3001.2,"requestQueueTimeMs":0.1,"localTimeMs":0.3,"remoteTimeMs":3000.5,"throttleTimeMs":0,"responseQueueTimeMs":0.1,"sendTimeMs":0.2,"securityProtocol":"SSL","principal":"User:ANONYMOUS","listener":"SSL","clientInformation":{"softwareName":"apache-kafka-java","softwareVersion":"3.6.0"}}"#;

    #[test]
    fn join_group_gives_remote_time_reason_and_generation() {
        let Outcome::Event(p) = parse(JOIN.as_bytes()) else {
            panic!()
        };
        assert_eq!(
            (p.group.as_deref(), p.member_id.as_deref(), p.generation_id),
            (Some("g"), Some("c-1-ab"), Some(4))
        );
        assert_eq!(p.client_id.as_deref(), Some("c-1"));
        let EventKind::Broker(BrokerLine::RequestCompleted(rc)) = &p.kind else {
            panic!()
        };
        let RequestCompleted {
            api,
            remote_time_ms,
            reason,
            error,
            api_version,
            ..
        } = rc.as_ref();
        assert_eq!(
            (api.as_str(), *api_version, *remote_time_ms, error),
            ("JoinGroup", 9, 3000.5, &None)
        );
        assert_eq!(
            reason.as_deref(),
            Some("rebalance failed due to MemberIdRequiredException")
        );
        assert_eq!(
            client_address(JOIN.as_bytes()).as_deref(),
            Some("10.0.0.9:51234")
        );
    }

    #[test]
    fn heartbeat_error_is_named() {
        let json = r#"{"requestHeader":{"requestApiKey":12,"requestApiVersion":4,"correlationId":9,"clientId":"c"},"request":{"groupId":"g","generationId":3,"memberId":"m","groupInstanceId":null},"response":{"throttleTimeMs":0,"errorCode":27},"connection":"a:1-b:2-0","totalTimeMs":0.4,"requestQueueTimeMs":0.1,"localTimeMs":0.2,"remoteTimeMs":0.0}"#;
        let Outcome::Event(p) = parse(json.as_bytes()) else {
            panic!()
        };
        let EventKind::Broker(BrokerLine::RequestCompleted(rc)) = &p.kind else {
            panic!()
        };
        let error = &rc.error;
        assert_eq!(error.as_deref(), Some("REBALANCE_IN_PROGRESS"));
        assert_eq!(p.generation_id, Some(3));
    }

    #[test]
    fn leave_group_batch_gives_member_and_reason() {
        let json = r#"{"requestHeader":{"requestApiKey":13,"requestApiVersion":5,"correlationId":1,"clientId":"c"},"request":{"groupId":"g","members":[{"memberId":"m","groupInstanceId":null,"reason":"the consumer is being closed"}]},"response":{"errorCode":0,"members":[]},"totalTimeMs":1.0,"remoteTimeMs":0.0}"#;
        let Outcome::Event(p) = parse(json.as_bytes()) else {
            panic!()
        };
        assert_eq!(p.member_id.as_deref(), Some("m"));
        let EventKind::Broker(BrokerLine::RequestCompleted(rc)) = &p.kind else {
            panic!()
        };
        let reason = &rc.reason;
        assert_eq!(reason.as_deref(), Some("the consumer is being closed"));
    }

    #[test]
    fn other_apis_are_ignored_and_broken_json_is_unknown() {
        assert_eq!(
            parse(br#"{"requestHeader":{"requestApiKey":1,"requestApiVersion":13}}"#),
            Outcome::Ignored
        );
        assert_eq!(
            parse(br#"{"requestHeader":{"requestApiKey":14,"#),
            Outcome::Unknown
        );
    }

    #[test]
    fn pre_2_8_text_form_gives_api_group_and_remote_time() {
        let line = b"RequestHeader(apiKey=JOIN_GROUP, apiVersion=2, clientId=consumer-1, correlationId=5) -- {group_id=g,session_timeout_ms=10000,rebalance_timeout_ms=300000,member_id=,protocol_type=consumer,group_protocols=[]},response:{throttle_time_ms=0,error_code=0,generation_id=3} from connection 10.0.0.1:9092-10.0.0.9:5555-1;totalTime:3001.2,requestQueueTime:0.1,localTime:0.3,remoteTime:3000.5,throttleTime:0,responseQueueTime:0.1,sendTime:0.2,securityProtocol:PLAINTEXT,principal:User:ANONYMOUS,listener:PLAINTEXT";
        let Outcome::Event(p) = parse(line) else {
            panic!()
        };
        assert_eq!(
            (p.group.as_deref(), p.client_id.as_deref()),
            (Some("g"), Some("consumer-1"))
        );
        let EventKind::Broker(BrokerLine::RequestCompleted(rc)) = &p.kind else {
            panic!()
        };
        let RequestCompleted {
            api,
            remote_time_ms,
            correlation_id,
            ..
        } = rc.as_ref();
        assert_eq!(
            (api.as_str(), *remote_time_ms, *correlation_id),
            ("JoinGroup", 3000.5, 5)
        );
        assert_eq!(
            parse(b"RequestHeader(apiKey=FETCH, apiVersion=11, clientId=c, correlationId=1) -- {}"),
            Outcome::Ignored
        );
    }
}
