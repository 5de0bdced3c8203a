"""Apache Kafka brokers for the lab, started from Maven Central jars (no distribution tarball).

Takes a Kafka line ("3.9" or "4", each a Maven project under lab/kafka-<line>/), a node count
(1, or 3 for coordinator failover) and group settings; gives running KRaft brokers on
127.0.0.1 whose server.log / kafka-request.log use Kafka's default layout `[%d] %p %m (%c)%n`,
and start/stop/kill/freeze by node id. Every process started here is ended by its pid.

Ports: clients talk to 9092 (node 1), 9093 (node 2), 9094 (node 3); the controllers use
19091..19093 and replication 29091..29093, so a capture of `tcp portrange 9092-9094` holds
client traffic only.
"""

import os
import shutil
import signal
import subprocess
import time

HERE = os.path.dirname(os.path.abspath(__file__))
JAVA_OPTS = ["-Xms128m", "-Xmx384m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
             "-Djava.awt.headless=true"]
CLUSTER_ID = "a2d0Z3RyYWNlLWxhYi0wMQ"  # fixed: 22 base64 chars (16 bytes)


def client_port(node):
    return 9091 + node


def project(line):
    return os.path.join(HERE, f"kafka-{line}")


def classpath(line):
    """The Maven dependency classpath of lab/kafka-<line>/pom.xml (resolved once, cached)."""
    d = project(line)
    cp = os.path.join(d, "cp.txt")
    if not os.path.exists(cp):
        subprocess.run(["mvn", "-q", "dependency:build-classpath", "-Dmdep.outputFile=cp.txt"],
                       cwd=d, check=True, timeout=900)
    with open(cp) as f:
        return f.read().strip()


def version(line):
    for p in classpath(line).split(":"):
        b = os.path.basename(p)
        if b.startswith("kafka_2.13-") and b.endswith(".jar"):
            return b[len("kafka_2.13-"):-4]
    return "unknown"


def log_opts(line, logs_dir, request_level="WARN", coordinator_level="INFO"):
    if line == "3.9":
        conf = ["-Dlog4j.configuration=file:" + os.path.join(project(line), "log4j.properties")]
    else:
        conf = ["-Dlog4j2.configurationFile=" + os.path.join(project(line), "log4j2.properties")]
    return conf + [f"-Dkafka.logs.dir={logs_dir}", f"-Dkgtrace.request.level={request_level}",
                   f"-Dkgtrace.coordinator.level={coordinator_level}"]


def properties(node, nodes, data_dir, extra):
    voters = ",".join(f"{n}@127.0.0.1:{19090 + n}" for n in range(1, nodes + 1))
    rf = min(nodes, 3)
    p = {
        "process.roles": "broker,controller",
        "node.id": node,
        "controller.quorum.voters": voters,
        "listeners": f"PLAINTEXT://127.0.0.1:{client_port(node)},"
                     f"CONTROLLER://127.0.0.1:{19090 + node},"
                     f"REPLICATION://127.0.0.1:{29090 + node}",
        "advertised.listeners": f"PLAINTEXT://127.0.0.1:{client_port(node)},"
                                f"REPLICATION://127.0.0.1:{29090 + node}",
        "inter.broker.listener.name": "REPLICATION",
        "controller.listener.names": "CONTROLLER",
        "listener.security.protocol.map":
            "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT,REPLICATION:PLAINTEXT",
        "log.dirs": data_dir,
        "num.partitions": 1,
        "offsets.topic.replication.factor": rf,
        "offsets.topic.num.partitions": 3,
        "transaction.state.log.replication.factor": rf,
        "transaction.state.log.min.isr": 1,
        "min.insync.replicas": 1,
        "group.initial.rebalance.delay.ms": 3000,
        "group.min.session.timeout.ms": 2000,
        "group.consumer.min.session.timeout.ms": 2000,
        "group.consumer.session.timeout.ms": 6000,
        "group.consumer.min.heartbeat.interval.ms": 500,
        "group.consumer.heartbeat.interval.ms": 1000,
        "auto.create.topics.enable": "false",
        "log.retention.check.interval.ms": 300000,
    }
    p.update(extra or {})
    return "".join(f"{k}={v}\n" for k, v in p.items())


class Brokers:
    """The run's Apache Kafka node(s): node id -> Popen."""

    def __init__(self, line, run_dir, nodes=1, extra=None, request_level="WARN",
                 coordinator_level="INFO"):
        self.line, self.dir, self.nodes = line, run_dir, nodes
        self.extra = dict(extra or {})
        if line == "3.9":
            # 3.9 knows no group.consumer.* session bounds below its own defaults? keep only
            # what it accepts (unknown keys are only warned about)
            pass
        self.request_level, self.coordinator_level = request_level, coordinator_level
        self.procs = {}
        self.cp = classpath(line)

    def node_dir(self, node):
        return os.path.join(self.dir, f"broker{node}" if self.nodes > 1 else "broker")

    def bootstrap(self):
        return ",".join(f"127.0.0.1:{client_port(n)}" for n in range(1, self.nodes + 1))

    def format_all(self):
        for n in range(1, self.nodes + 1):
            d = self.node_dir(n)
            shutil.rmtree(d, ignore_errors=True)
            os.makedirs(os.path.join(d, "data"))
            conf = os.path.join(d, "server.properties")
            with open(conf, "w") as f:
                f.write(properties(n, self.nodes, os.path.join(d, "data"), self.extra))
            subprocess.run(["java", *JAVA_OPTS, "-cp", self.cp, *log_opts(self.line, d),
                            "kafka.tools.StorageTool", "format", "-t", CLUSTER_ID, "-c", conf],
                           check=True, timeout=120, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
            # StorageTool's own log lines are not the broker's: start server.log afresh
            for f in ("server.log", "kafka-request.log"):
                try:
                    os.remove(os.path.join(d, f))
                except FileNotFoundError:
                    pass

    def start(self, node):
        d = self.node_dir(node)
        out = open(os.path.join(d, "stdout.log"), "a")
        self.procs[node] = subprocess.Popen(
            ["java", *JAVA_OPTS, "-cp", self.cp,
             *log_opts(self.line, d, self.request_level, self.coordinator_level),
             "kafka.Kafka", os.path.join(d, "server.properties")],
            stdout=out, stderr=subprocess.STDOUT)
        return self.procs[node]

    def started(self, node):
        try:
            with open(os.path.join(self.node_dir(node), "server.log")) as f:
                return "started (kafka.server.KafkaRaftServer)" in f.read()
        except FileNotFoundError:
            return False

    def start_all(self, timeout=90):
        t0 = time.monotonic()
        for n in range(1, self.nodes + 1):
            self.start(n)
        while time.monotonic() - t0 < timeout:
            if all(self.started(n) for n in range(1, self.nodes + 1)):
                return time.monotonic() - t0
            for n, p in self.procs.items():
                if p.poll() is not None:
                    raise RuntimeError(f"broker {n} exited ({p.returncode}); see its stdout.log")
            time.sleep(0.25)
        raise RuntimeError(f"brokers not started in {timeout} s")

    def signal(self, node, sig):
        p = self.procs.get(node)
        if p and p.poll() is None:
            p.send_signal(sig)

    def stop(self, node, timeout=30):
        p = self.procs.get(node)
        if p and p.poll() is None:
            p.send_signal(signal.SIGCONT)
            p.terminate()
            try:
                p.wait(timeout)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(10)

    def shutdown(self):
        for n in list(self.procs):
            self.stop(n)
