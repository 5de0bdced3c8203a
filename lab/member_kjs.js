// A lab group member (or producer) using KafkaJS.
//
// Takes the same arguments as the Python members (see common.py); gives JSON-line events on
// stdout ("joined" with generation and member id, read from KafkaJS's own debug log of the
// JoinGroup response, plus "assigned" from its GROUP_JOIN event) and KafkaJS's group-related
// log lines on stderr. KafkaJS has no rebalance listener: "revoked" (every partition it held)
// is logged at its REBALANCING event (the runner stops fetching and rejoins: runner.js
// scheduleFetchManager) and when it closes, "lost" when it rejoins because the coordinator no
// longer knows its member id. KafkaJS 2.2.4 has no group.instance.id option, so no static members.
// SIGTERM disconnects cleanly (LeaveGroup); the run is bounded by --run-seconds.
'use strict'

const { Kafka, logLevel } = require('kafkajs')

function parseArgs(argv) {
  const a = {
    bootstrap: '127.0.0.1:9092', role: 'consumer', group: 'g1', clientId: null, topic: 'lab',
    sessionMs: 6000, maxPollMs: 10000, heartbeatMs: 1000, runSeconds: 110, produceInterval: 0.5,
  }
  const names = {
    '--bootstrap': 'bootstrap', '--role': 'role', '--group': 'group', '--client-id': 'clientId',
    '--topic': 'topic', '--session-ms': 'sessionMs', '--max-poll-ms': 'maxPollMs',
    '--heartbeat-ms': 'heartbeatMs', '--run-seconds': 'runSeconds',
    '--produce-interval': 'produceInterval', '--assignor': 'assignor',
  }
  for (let i = 0; i + 1 < argv.length; i += 2) {
    const key = names[argv[i]]
    if (!key) throw new Error(`unknown argument ${argv[i]}`)
    const v = argv[i + 1]
    a[key] = typeof a[key] === 'number' ? Number(v) : v
  }
  if (!a.clientId) throw new Error('--client-id is required')
  if (!a.bootstrap.startsWith('127.0.0.1:')) throw new Error('the lab only talks to 127.0.0.1')
  return a
}

const args = parseArgs(process.argv.slice(2))

function emit(event, fields) {
  const rec = Object.assign(
    { ts: new Date().toISOString(), client_id: args.clientId, group: args.group, event },
    fields || {}
  )
  process.stdout.write(JSON.stringify(rec) + '\n')
}

// Log lines worth keeping: everything at INFO or above, and the DEBUG lines about group APIs.
const GROUP_APIS = /JoinGroup|SyncGroup|LeaveGroup|Heartbeat|FindCoordinator|OffsetCommit/

// The partitions of the last GROUP_JOIN not revoked since (KafkaJS is eager: a new
// assignment replaces the whole previous one).
let held = []

function release(event, via) {
  if (held.length > 0) emit(event, { partitions: held, via })
  held = []
}

const logCreator = () => ({ namespace, level, label, log }) => {
  const { message, timestamp, ...extra } = log
  if (typeof message === 'string' && message.startsWith('The coordinator is not aware of this member')) {
    release('lost', 'unknown_member_id')
  }
  const isResp = typeof message === 'string' && message.startsWith('Response JoinGroup')
  if (isResp && extra.data && extra.data.generationId !== undefined) {
    emit('joined', { generation: extra.data.generationId, member_id: extra.data.memberId,
      leader_id: extra.data.leaderId, protocol: extra.data.groupProtocol,
      // only the leader gets the member list: the generation's real membership
      members: (extra.data.members || []).map(x => x.memberId).sort() })
  }
  if (level <= logLevel.INFO || GROUP_APIS.test(message || '')) {
    process.stderr.write(`${timestamp} ${label} [${namespace}] ${message} ${JSON.stringify(extra)}\n`)
  }
}

const kafka = new Kafka({
  clientId: args.clientId, brokers: [args.bootstrap], logLevel: logLevel.DEBUG, logCreator,
  retry: { retries: 5 },
})

const sleep = ms => new Promise(resolve => setTimeout(resolve, ms))

async function runConsumer() {
  const consumer = kafka.consumer({
    groupId: args.group, sessionTimeout: args.sessionMs, rebalanceTimeout: args.maxPollMs,
    heartbeatInterval: args.heartbeatMs,
  })
  consumer.on(consumer.events.GROUP_JOIN, e => {
    const p = e.payload
    const parts = []
    for (const [topic, ps] of Object.entries(p.memberAssignment || {})) {
      for (const n of ps) parts.push(`${topic}-${n}`)
    }
    parts.sort()
    // partitions dropped by a rejoin that no REBALANCING event announced
    const gone = held.filter(x => !parts.includes(x))
    if (gone.length > 0) emit('revoked', { partitions: gone, via: 'group_join' })
    held = parts
    emit('assigned', { member_id: p.memberId, leader_id: p.leaderId, is_leader: p.isLeader,
      partitions: parts })
  })
  consumer.on(consumer.events.REBALANCING, () => release('revoked', 'rebalancing'))
  consumer.on(consumer.events.CRASH, e => emit('crash', { error: String(e.payload.error) }))
  let consumed = 0
  let stopping = false
  const stop = async () => {
    if (stopping) return
    stopping = true
    release('revoked', 'close')
    emit('closing', { consumed })
    await consumer.disconnect()
    emit('closed')
    process.exit(0)
  }
  process.on('SIGTERM', stop)
  await consumer.connect()
  await consumer.subscribe({ topics: [args.topic], fromBeginning: true })
  emit('started', { role: 'consumer', client: 'kafkajs' })
  await consumer.run({ eachMessage: async () => { consumed += 1 } })
  await sleep(args.runSeconds * 1000)
  await stop()
}

async function runProducer() {
  const producer = kafka.producer()
  await producer.connect()
  emit('started', { role: 'producer', client: 'kafkajs' })
  let stopping = false
  process.on('SIGTERM', () => { stopping = true })
  const end = Date.now() + args.runSeconds * 1000
  let n = 0
  while (!stopping && Date.now() < end) {
    await producer.send({ topic: args.topic, messages: [{ key: String(n % 12), value: `msg-${n}` }] })
    n += 1
    await sleep(args.produceInterval * 1000)
  }
  await producer.disconnect()
  emit('closed', { produced: n })
  process.exit(0)
}

const main = args.role === 'producer' ? runProducer : runConsumer
main().catch(e => {
  emit('error', { error: String(e) })
  process.exit(1)
})
