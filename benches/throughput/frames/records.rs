//! Fetch and Produce frames: the bulk around the group traffic, whose
//! record bytes the decoder skips without buffering.
//!
//! Takes: the record bytes to carry. Gives: request and response frames,
//! encoded like the rest of [`super`].

use bytes::Bytes;
use kafka_protocol::messages::fetch_request::{FetchPartition, FetchTopic};
use kafka_protocol::messages::fetch_response::{FetchableTopicResponse, PartitionData};
use kafka_protocol::messages::produce_request::{PartitionProduceData, TopicProduceData};
use kafka_protocol::messages::produce_response::{PartitionProduceResponse, TopicProduceResponse};
use kafka_protocol::messages::{
    ApiKey, BrokerId, FetchRequest, FetchResponse, ProduceRequest, ProduceResponse, TopicName,
};

use super::{request, response, s, Versions};

/// A Fetch of `partitions` of `topic`, answered with `records` (record
/// batch bytes the decoder must skip) spread over those partitions.
pub fn fetch(
    v: &Versions,
    corr: i32,
    client: &str,
    topic: &str,
    partitions: &[i32],
    records: &[u8],
) -> (Vec<u8>, Vec<u8>) {
    let req = FetchRequest::default()
        .with_replica_id(BrokerId(-1))
        .with_max_wait_ms(500)
        .with_min_bytes(1)
        .with_max_bytes(52_428_800)
        .with_session_id(corr & 0xffff)
        .with_topics(vec![FetchTopic::default()
            .with_topic(TopicName(s(topic)))
            .with_partitions(
                partitions
                    .iter()
                    .map(|&p| {
                        FetchPartition::default()
                            .with_partition(p)
                            .with_fetch_offset(i64::from(corr) * 100)
                            .with_partition_max_bytes(1_048_576)
                    })
                    .collect(),
            )]);
    let share = records.len() / partitions.len().max(1);
    let data = partitions
        .iter()
        .enumerate()
        .map(|(i, &p)| {
            let chunk = &records[i * share..(i + 1) * share];
            PartitionData::default()
                .with_partition_index(p)
                .with_high_watermark(i64::from(corr) * 100 + 5_000)
                .with_records((!chunk.is_empty()).then(|| Bytes::copy_from_slice(chunk)))
        })
        .collect();
    let resp = FetchResponse::default().with_responses(vec![FetchableTopicResponse::default()
        .with_topic(TopicName(s(topic)))
        .with_partitions(data)]);
    (
        request(ApiKey::Fetch, v.fetch, corr, client, &req),
        response(ApiKey::Fetch, v.fetch, corr, &resp),
    )
}

/// A Produce (acks=all) of `records` to one partition, and its answer.
pub fn produce(
    v: &Versions,
    corr: i32,
    client: &str,
    topic: &str,
    partition: i32,
    records: &[u8],
) -> (Vec<u8>, Vec<u8>) {
    let req = ProduceRequest::default()
        .with_acks(-1)
        .with_timeout_ms(30_000)
        .with_topic_data(vec![TopicProduceData::default()
            .with_name(TopicName(s(topic)))
            .with_partition_data(vec![PartitionProduceData::default()
                .with_index(partition)
                .with_records(Some(Bytes::copy_from_slice(records)))])]);
    let resp = ProduceResponse::default().with_responses(vec![TopicProduceResponse::default()
        .with_name(TopicName(s(topic)))
        .with_partition_responses(vec![PartitionProduceResponse::default()
            .with_index(partition)
            .with_base_offset(i64::from(corr) * 10)])]);
    (
        request(ApiKey::Produce, v.produce, corr, client, &req),
        response(ApiKey::Produce, v.produce, corr, &resp),
    )
}
