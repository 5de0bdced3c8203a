// A lab group member using Apache Kafka's own Java consumer (kafka-clients 3.9 or 4.x).
//
// Takes the lab's member arguments (see lab/common.py: --client-id, --group, --bootstrap,
// --session-ms, --max-poll-ms, --heartbeat-ms, --instance-id, --assignor, --run-seconds,
// --stall-seconds) plus --group-protocol classic|consumer, --auto-commit true|false,
// --commit-interval-ms and --revoke-ms (sleep that long in onPartitionsRevoked); gives
// JSON-line events on stdout (started, joined with generation / member epoch and member id,
// assigned/revoked/lost with generation and member id, consumed with partition and offset,
// commit with offsets and result, stall_start/stall_end, closing/closed) and the client's
// own log on stderr.
//
// Signals: SIGTERM = close cleanly (commit, then LeaveGroup unless static) and exit;
// SIGUSR2 = exit at once without close; SIGWINCH = stop polling for --stall-seconds (not
// SIGHUP: nohup makes the JVM ignore it). SIGSTOP/SIGCONT/SIGKILL come from the driver.
// Loopback only.

import java.time.Duration;
import java.time.Instant;
import java.util.*;
import java.util.concurrent.atomic.AtomicBoolean;

import org.apache.kafka.clients.consumer.*;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import sun.misc.Signal;

public class LabMember {
    static String clientId = "", group = "";
    static final Map<String, String> opt = new HashMap<>();

    static synchronized void emit(String event, String... kv) {
        StringBuilder sb = new StringBuilder();
        sb.append("{\"ts\": \"").append(Instant.now().toString().replaceAll("(\\.\\d{3})\\d*Z", "$1Z"))
          .append("\", \"client_id\": \"").append(clientId).append("\", \"group\": \"")
          .append(group).append("\", \"event\": \"").append(event).append('"');
        for (int i = 0; i + 1 < kv.length; i += 2) {
            sb.append(", \"").append(kv[i]).append("\": ").append(kv[i + 1]);
        }
        System.out.println(sb.append('}'));
        System.out.flush();
    }

    static String q(String s) { return s == null ? "null" : "\"" + s.replace("\"", "'") + "\""; }

    static String parts(Collection<TopicPartition> ps) {
        List<String> l = new ArrayList<>();
        for (TopicPartition p : ps) l.add(p.topic() + "-" + p.partition());
        Collections.sort(l);
        StringBuilder sb = new StringBuilder("[");
        for (int i = 0; i < l.size(); i++) sb.append(i > 0 ? ", " : "").append(q(l.get(i)));
        return sb.append(']').toString();
    }

    static String arg(String k, String dflt) { return opt.getOrDefault(k, dflt); }

    static volatile boolean stop = false, stallRequested = false, quit = false;
    static int lastGeneration = -1;
    static String lastMember = null;

    /** Emits `joined` when the consumer's generation (classic) or member epoch (KIP-848)
     *  changed since last seen; a classic leader's member list rides along (LabAssignor). */
    static void noteGeneration(Consumer<?, ?> c, String via) {
        ConsumerGroupMetadata m;
        try { m = c.groupMetadata(); } catch (RuntimeException e) { return; }
        int gen = m.generationId();
        String mid = m.memberId();
        if (gen < 0 || (gen == lastGeneration && Objects.equals(mid, lastMember))) return;
        lastGeneration = gen;
        lastMember = mid;
        List<String> members = LabAssignor.takeMembers(clientId);
        String protocol = arg("group-protocol", "classic");
        if (members != null) {
            StringBuilder sb = new StringBuilder("[");
            for (int i = 0; i < members.size(); i++) sb.append(i > 0 ? ", " : "").append(q(members.get(i)));
            emit("joined", "generation", "" + gen, "member_id", q(mid), "leader_id", q(mid),
                 "members", sb.append(']').toString(), "protocol", q(protocol), "via", q(via));
        } else {
            emit("joined", "generation", "" + gen, "member_id", q(mid), "protocol", q(protocol),
                 "via", q(via));
        }
    }

    public static void main(String[] argv) throws Exception {
        for (int i = 0; i + 1 < argv.length; i += 2) opt.put(argv[i].replaceFirst("^--", ""), argv[i + 1]);
        clientId = arg("client-id", "java");
        group = arg("group", "g1");
        String bootstrap = arg("bootstrap", "127.0.0.1:9092");
        for (String b : bootstrap.split(","))
            if (!b.startsWith("127.0.0.1:")) throw new IllegalArgumentException("the lab only talks to 127.0.0.1");
        String protocol = arg("group-protocol", "classic");
        boolean autoCommit = Boolean.parseBoolean(arg("auto-commit", "true"));
        long commitIntervalMs = Long.parseLong(arg("commit-interval-ms", "2000"));

        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("group.id", group);
        p.put("client.id", clientId);
        p.put("key.deserializer", "org.apache.kafka.common.serialization.ByteArrayDeserializer");
        p.put("value.deserializer", "org.apache.kafka.common.serialization.ByteArrayDeserializer");
        p.put("auto.offset.reset", "earliest");
        p.put("enable.auto.commit", "false"); // the member commits itself, to log each result
        p.put("max.poll.interval.ms", arg("max-poll-ms", "10000"));
        if (protocol.equals("consumer")) {
            p.put("group.protocol", "consumer");
        } else {
            p.put("session.timeout.ms", arg("session-ms", "6000"));
            p.put("heartbeat.interval.ms", arg("heartbeat-ms", "1000"));
            String a = arg("assignor", "range");
            p.put("partition.assignment.strategy", a.equals("cooperative-sticky")
                  ? LabAssignor.CooperativeSticky.class.getName() : LabAssignor.Range.class.getName());
        }
        if (opt.containsKey("instance-id")) p.put("group.instance.id", opt.get("instance-id"));

        Signal.handle(new Signal("TERM"), s -> stop = true);
        Signal.handle(new Signal("WINCH"), s -> stallRequested = true);
        Signal.handle(new Signal("USR2"), s -> { emit("exit_without_close"); Runtime.getRuntime().halt(0); });

        KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(p);
        ConsumerRebalanceListener listener = new ConsumerRebalanceListener() {
            public void onPartitionsRevoked(Collection<TopicPartition> ps) {
                ConsumerGroupMetadata m = c.groupMetadata();
                emit("revoked", "partitions", parts(ps), "generation", "" + m.generationId(), "member_id", q(m.memberId()));
                long slow = Long.parseLong(arg("revoke-ms", "0"));
                if (slow > 0 && !ps.isEmpty()) {
                    // a slow member: its revocation (and so the others' new partitions) waits
                    emit("revoke_slow_start", "ms", "" + slow);
                    try { Thread.sleep(slow); } catch (InterruptedException e) { Thread.currentThread().interrupt(); }
                    emit("revoke_slow_end");
                }
                commit(c, "revoked");
            }
            public void onPartitionsAssigned(Collection<TopicPartition> ps) {
                noteGeneration(c, "assigned");
                ConsumerGroupMetadata m = c.groupMetadata();
                emit("assigned", "partitions", parts(ps), "generation", "" + m.generationId(), "member_id", q(m.memberId()));
            }
            public void onPartitionsLost(Collection<TopicPartition> ps) {
                ConsumerGroupMetadata m = c.groupMetadata();
                emit("lost", "partitions", parts(ps), "generation", "" + m.generationId(), "member_id", q(m.memberId()));
            }
        };
        c.subscribe(List.of(arg("topic", "lab")), listener);
        emit("started", "role", q("consumer"), "client", q("kafka-clients"), "group_protocol", q(protocol),
             "auto_commit", "" + autoCommit, "commit_interval_ms", "" + commitIntervalMs);
        long end = System.currentTimeMillis() + (long) (Double.parseDouble(arg("run-seconds", "110")) * 1000);
        long nextCommit = System.currentTimeMillis() + commitIntervalMs;
        long consumed = 0;
        while (!stop && System.currentTimeMillis() < end) {
            if (stallRequested) {
                stallRequested = false;
                double secs = Double.parseDouble(arg("stall-seconds", "15"));
                emit("stall_start", "seconds", "" + secs);
                long until = System.currentTimeMillis() + (long) (secs * 1000);
                while (!stop && System.currentTimeMillis() < until) Thread.sleep(100);
                emit("stall_end");
            }
            ConsumerRecords<byte[], byte[]> recs;
            try {
                recs = c.poll(Duration.ofMillis(200));
            } catch (RuntimeException e) {
                emit("poll_error", "error", q(e.toString()));
                continue;
            }
            noteGeneration(c, "poll");
            for (ConsumerRecord<byte[], byte[]> r : recs) {
                consumed++;
                emit("consumed", "partition", q(r.topic() + "-" + r.partition()), "offset", "" + r.offset(),
                     "generation", "" + lastGeneration);
                pending.put(new TopicPartition(r.topic(), r.partition()), r.offset() + 1);
            }
            if (autoCommit && System.currentTimeMillis() >= nextCommit) {
                commit(c, "interval");
                nextCommit = System.currentTimeMillis() + commitIntervalMs;
            }
        }
        emit("closing", "member_id", q(c.groupMetadata().memberId()), "consumed", "" + consumed);
        commit(c, "close");
        c.close(Duration.ofSeconds(10));
        emit("closed");
    }

    static final Map<TopicPartition, Long> pending = new HashMap<>();

    /** Commits what was consumed since the last commit (sync) and logs the result. */
    static void commit(Consumer<?, ?> c, String why) {
        Map<TopicPartition, OffsetAndMetadata> offs = new HashMap<>();
        Set<TopicPartition> owned = c.assignment();
        for (Map.Entry<TopicPartition, Long> e : pending.entrySet())
            if (owned.contains(e.getKey())) offs.put(e.getKey(), new OffsetAndMetadata(e.getValue()));
        if (offs.isEmpty()) return;
        StringBuilder sb = new StringBuilder("{");
        List<TopicPartition> keys = new ArrayList<>(offs.keySet());
        keys.sort(Comparator.comparing(TopicPartition::toString));
        for (int i = 0; i < keys.size(); i++)
            sb.append(i > 0 ? ", " : "").append(q(keys.get(i).topic() + "-" + keys.get(i).partition()))
              .append(": ").append(offs.get(keys.get(i)).offset());
        String offsets = sb.append('}').toString();
        ConsumerGroupMetadata m = c.groupMetadata();
        try {
            c.commitSync(offs, Duration.ofSeconds(5));
            emit("commit", "why", q(why), "offsets", offsets, "result", q("ok"),
                 "generation", "" + m.generationId(), "member_id", q(m.memberId()));
            for (TopicPartition tp : keys) pending.remove(tp);
        } catch (RuntimeException e) {
            emit("commit", "why", q(why), "offsets", offsets, "result", q(e.getClass().getSimpleName()),
                 "error", q(e.getMessage()), "generation", "" + m.generationId(), "member_id", q(m.memberId()));
        }
    }
}
