//! Data-path and topic-id messages → [`DataKind`]s.
//!
//! Takes: a Fetch request body (by hand, [`super::data_path`]), a Fetch
//! response's skimmed partition headers, or a whole ListOffsets request or
//! response or Metadata response body. Gives: the [`DataKind`] kgtrace keeps
//! of it. ListOffsets and Metadata are rare and small next to Fetch, so they
//! go through kafka-protocol (and [`super::guard`]); Fetch, the bulk of a
//! consumer's traffic, is read by hand so that its records are never
//! buffered.

use bytes::Bytes;
use kafka_protocol::messages::{
    ApiKey, ListOffsetsRequest, ListOffsetsResponse, MetadataResponse, RequestHeader,
    ResponseHeader,
};
use kafka_protocol::protocol::Decodable;

use crate::event::{DataKind, ErrorCode, Id, PartitionOffset, PartitionWatermark, MAX_OFFSETS};

use super::apis;
use super::decode::{decode, text};

/// API keys of the data-path messages kgtrace reads.
pub(crate) mod key {
    pub const FETCH: i16 = 1;
    pub const LIST_OFFSETS: i16 = 2;
    pub const METADATA: i16 = 3;
}

/// Fetch requests larger than this are skipped (a consumer's are a few
/// hundred bytes; a follower's can be large and are of no interest).
pub(crate) const FETCH_REQUEST_CAP: usize = 64 * 1024;

/// Metadata answers larger than this are skipped (a cluster of tens of
/// thousands of partitions).
pub(crate) const METADATA_RESPONSE_CAP: usize = 4 * 1024 * 1024;

/// Whether kafka-protocol decodes this version of `api_key`.
fn known(api_key: i16, version: i16) -> bool {
    ApiKey::try_from(api_key).is_ok_and(|k| {
        let r = k.valid_versions();
        (r.min..=r.max).contains(&version)
    })
}

/// The data-path event of a request, if it is one kgtrace reads (Fetch
/// requests go through [`super::data_path::fetch_request`] and the connection's
/// fetch session instead).
pub(crate) fn request(body: &[u8], api_key: i16, version: i16, exchange: u64) -> Option<DataKind> {
    match api_key {
        key::LIST_OFFSETS if known(api_key, version) => {
            list_offsets_request(body, version, exchange)
        }
        _ => None,
    }
}

/// The data-path event of a whole response, if it is one kgtrace reads.
pub(crate) fn response(body: &[u8], api_key: i16, version: i16, exchange: u64) -> Option<DataKind> {
    if !known(api_key, version) {
        return None;
    }
    let mut buf = Bytes::copy_from_slice(body);
    let header_version = apis::response_header_version(api_key, version)?;
    ResponseHeader::decode(&mut buf, header_version).ok()?;
    match api_key {
        key::LIST_OFFSETS => {
            let r: ListOffsetsResponse = decode(&mut buf, version).ok()?;
            let partitions = r
                .topics
                .iter()
                .flat_map(|t| {
                    let topic: Id = text(&t.name.0).into();
                    t.partitions.iter().map(move |p| PartitionOffset {
                        topic: topic.clone(),
                        partition: p.partition_index,
                        offset: p.offset,
                        error: ErrorCode::from_code(p.error_code),
                    })
                })
                .take(MAX_OFFSETS)
                .collect();
            Some(DataKind::ListOffsetsResponse {
                exchange,
                partitions,
            })
        }
        key::METADATA => {
            let r: MetadataResponse = decode(&mut buf, version).ok()?;
            let topics: Vec<(String, String)> = r
                .topics
                .iter()
                .filter(|t| version >= 10 && !t.topic_id.is_nil())
                .filter_map(|t| Some((text(&t.name.as_ref()?.0), t.topic_id.to_string())))
                .take(MAX_OFFSETS)
                .collect();
            (!topics.is_empty()).then_some(DataKind::TopicIds { topics })
        }
        _ => None,
    }
}

/// A Fetch response's skimmed headers.
pub(crate) fn fetch_response(exchange: u64, partitions: Vec<PartitionWatermark>) -> DataKind {
    DataKind::FetchResponse {
        exchange,
        partitions,
    }
}

fn list_offsets_request(body: &[u8], version: i16, exchange: u64) -> Option<DataKind> {
    let mut buf = Bytes::copy_from_slice(body);
    let header_version = apis::request_header_version(key::LIST_OFFSETS, version)?;
    RequestHeader::decode(&mut buf, header_version).ok()?;
    let r: ListOffsetsRequest = decode(&mut buf, version).ok()?;
    let partitions = r
        .topics
        .iter()
        .flat_map(|t| {
            let topic: Id = text(&t.name.0).into();
            t.partitions.iter().map(move |p| PartitionOffset {
                topic: topic.clone(),
                partition: p.partition_index,
                offset: p.timestamp,
                error: None,
            })
        })
        .take(MAX_OFFSETS)
        .collect();
    Some(DataKind::ListOffsetsRequest {
        exchange,
        partitions,
    })
}

#[cfg(test)]
mod tests {
    use kafka_protocol::messages::list_offsets_request::{ListOffsetsPartition, ListOffsetsTopic};
    use kafka_protocol::messages::list_offsets_response::{
        ListOffsetsPartitionResponse, ListOffsetsTopicResponse,
    };
    use kafka_protocol::messages::metadata_response::MetadataResponseTopic;
    use kafka_protocol::messages::TopicName;

    use super::*;
    use crate::kafka::testkit::{request as req_frame, response as resp_frame, s};

    #[test]
    fn reads_the_timestamps_asked_and_the_offsets_found_by_list_offsets() {
        let req = ListOffsetsRequest::default().with_topics(vec![ListOffsetsTopic::default()
            .with_name(TopicName(s("t")))
            .with_partitions(vec![ListOffsetsPartition::default()
                .with_partition_index(2)
                .with_timestamp(-2)])]);
        let f = req_frame(key::LIST_OFFSETS, 7, 1, "c", &req);
        let Some(DataKind::ListOffsetsRequest { partitions, .. }) =
            request(&f[4..], key::LIST_OFFSETS, 7, 1)
        else {
            panic!()
        };
        assert_eq!((partitions[0].partition, partitions[0].offset), (2, -2));
        let resp =
            ListOffsetsResponse::default().with_topics(vec![ListOffsetsTopicResponse::default()
                .with_name(TopicName(s("t")))
                .with_partitions(vec![ListOffsetsPartitionResponse::default()
                    .with_partition_index(2)
                    .with_offset(1234)])]);
        let f = resp_frame(key::LIST_OFFSETS, 7, 1, &resp);
        let Some(DataKind::ListOffsetsResponse { partitions, .. }) =
            response(&f[4..], key::LIST_OFFSETS, 7, 1)
        else {
            panic!()
        };
        assert_eq!((&*partitions[0].topic, partitions[0].offset), ("t", 1234));
    }

    #[test]
    fn maps_topic_ids_to_names_from_metadata_v10_on() {
        let id = uuid::Uuid::from_u128(0x1234);
        let resp = MetadataResponse::default().with_topics(vec![MetadataResponseTopic::default()
            .with_name(Some(TopicName(s("orders"))))
            .with_topic_id(id)]);
        let f = resp_frame(key::METADATA, 12, 1, &resp);
        let Some(DataKind::TopicIds { topics }) = response(&f[4..], key::METADATA, 12, 1) else {
            panic!()
        };
        assert_eq!(topics, vec![("orders".to_string(), id.to_string())]);
        let f = resp_frame(key::METADATA, 9, 1, &resp);
        assert_eq!(response(&f[4..], key::METADATA, 9, 1), None);
    }
}
