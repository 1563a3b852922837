"""Faults during mutating commands, on the real control plane.

The API server is killed and restarted mid-drain; API priority-and-fairness (APF) rejects
evictions; a PDB is tightened mid-drain; a pod is replaced under the same name; two drains
share one PDB. Invariants: nothing is evicted that the plan did not list (audit log and pod
UIDs), no direct DELETE bypasses a budget, the healthy count never drops below what the PDB
requires, and a rerun finishes the job. SIGINT/SIGTERM are in test_reliability.py.

Every test confines its pods to its own nodes (label ``pool=<namespace>``).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import threading
import time

import pytest
from cluster_helpers import (place_on, pool_nodes, pool_web, pods_by_uid, RawApi, create, deployment, get_json, pdb, pod, wait_pdb_settled, wait_pods_running,
                             wait_until)

from kubectl_safety.cluster.executor import Executor
from kubectl_safety.cluster.live import Connection
from tests.unit.cli_helpers import run_cli

UA = "kubectl-safety/"


# -- workloads ----------------------------------------------------------------------------------


def agent(namespace):
    """A DaemonSet on the pool's nodes: skipped by a drain with --ignore-daemonsets."""
    labels = {"app": "agent"}
    spec = pod("agent", labels, node_selector={"pool": namespace})["spec"]
    return {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "agent"},
            "spec": {"selector": {"matchLabels": labels}, "template": {"metadata": {"labels": labels}, "spec": spec}}}


def on_node(cluster, namespace, node) -> dict:
    return {uid: p for uid, p in pods_by_uid(cluster, namespace).items() if p["spec"].get("nodeName") == node}


# -- running drains -----------------------------------------------------------------------------
def drain(cluster, *args):
    """``kubectl safety drain ARGS -o json`` in-process: (exit code, report or None, stderr)."""
    code, out, err = run_cli(["drain", *args, "--kubeconfig", str(cluster.kubeconfig), "-o", "json"])
    return code, (json.loads(out) if out.strip() else None), err


class Drain:
    """``kubectl-safety drain ARGS --yes -o json`` in the background; stderr lines collected as they come."""

    def __init__(self, cluster, *args):
        cmd = ["kubectl-safety", "drain", *args, "--kubeconfig", str(cluster.kubeconfig), "--yes", "-o", "json"]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                     env=dict(os.environ))
        self.lines: list[str] = []
        self.out: list[str] = []
        self.readers = [threading.Thread(target=lambda: self.lines.extend(self.proc.stderr), daemon=True),
                        threading.Thread(target=lambda: self.out.append(self.proc.stdout.read()), daemon=True)]
        for reader in self.readers:
            reader.start()

    def saw(self, text) -> bool:
        return any(text in line for line in list(self.lines))

    def finish(self, timeout=120):
        """(exit code, report or None, stderr text); fails if the drain outlives ``timeout``."""
        try:
            code = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            raise AssertionError(f"the drain still ran after {timeout}s: {''.join(self.lines)[-2000:]}") from None
        for reader in self.readers:
            reader.join(10)
        out = "".join(self.out)
        return code, (json.loads(out) if out.strip() else None), "".join(self.lines)


@pytest.fixture
def start_drain(cluster):
    """Factory ``start_drain(*args) -> Drain``; drains still running after the test are killed."""
    runs = []

    def start(*args) -> Drain:
        runs.append(Drain(cluster, *args))
        return runs[-1]

    yield start
    for run in runs:
        if run.proc.poll() is None:
            run.proc.kill()


def evictions(audit, since, names=None) -> list:
    """Our eviction requests (audit log) since ``since``, optionally only for ``names``."""
    return [e for e in audit.mutating_requests(since, user_agent_contains=UA)
            if e.resource == "pods/eviction" and (names is None or e.name in names)]


def deletes(audit, since) -> list:
    return [e for e in audit.mutating_requests(since, user_agent_contains=UA) if e.verb == "delete"]


def planned(cluster, *args) -> dict:
    """The dry-run plan's pods that a drain may evict: {name: uid} (actions evict/wait)."""
    code, plan, err = drain(cluster, *args, "--dry-run")
    assert code == 0 and plan["safe"], err
    return {p["name"]: p["uid"] for p in plan["pods"] if p["action"] in ("evict", "wait")}


class BudgetWatch:
    """Samples every 20 ms (plus request time) the Ready, non-terminating pods of a selector and the PDB's status."""

    def __init__(self, cluster, namespace, selector, pdb_name):
        self.connection = Connection(kubeconfig=str(cluster.kubeconfig))
        self.namespace, self.selector, self.pdb_name = namespace, selector, pdb_name
        self.samples: list[tuple[int, dict]] = []  # (ready pods, PDB status)
        self.error = None
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)

    def sample(self):
        items = self.connection.list("pods", self.namespace, label_selector=self.selector)["items"]
        ready = sum(1 for p in items if not p["metadata"].get("deletionTimestamp") and any(
            c["type"] == "Ready" and c["status"] == "True" for c in p["status"].get("conditions", [])))
        status = self.connection.get("poddisruptionbudgets", self.pdb_name, self.namespace).get("status", {})
        return ready, status

    def run(self):
        try:
            while not self.stop.is_set():
                self.samples.append(self.sample())
                time.sleep(0.02)
        except Exception as e:  # noqa: BLE001 - reported by __exit__
            self.error = e

    @property
    def min_ready(self) -> int:
        return min(ready for ready, _ in self.samples)

    @property
    def min_status_margin(self) -> int:
        """Smallest currentHealthy - desiredHealthy the disruption controller reported."""
        return min(s["currentHealthy"] - s["desiredHealthy"] for _, s in self.samples if "desiredHealthy" in s)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, exc_type, *exc):
        self.stop.set()
        self.thread.join()
        if self.error is not None and exc_type is None:
            raise AssertionError(f"sampling stopped: {self.error}")


# -- faults -------------------------------------------------------------------------------------
class ControlPlane:
    """The cluster's component processes (started by kwokctl): kill the API server, bring all back.

    An outage of more than ~8 s makes kube-controller-manager and kube-scheduler lose their
    leader lease and exit (kubelet/systemd would restart them); ``restore`` restarts any dead
    component as kwokctl started it, so later tests get a whole control plane.
    """

    def __init__(self, cluster):
        self.cluster = cluster
        self.pid_files = sorted((cluster.cluster_dir / "pids").glob("*.pid"))
        self.argv = {f.stem: _cmdline(int(f.read_text().strip())) for f in self.pid_files}

    def pid(self, component) -> int:
        return int((self.cluster.cluster_dir / "pids" / f"{component}.pid").read_text().strip())

    def kill_apiserver(self):
        pid = self.pid("kube-apiserver")
        os.kill(pid, signal.SIGKILL)
        wait_until(lambda: not _alive(pid), 10, "kube-apiserver to exit", interval=0.05)

    def restore(self, timeout=60):
        """Start every component that is not running (API server first); wait for /readyz."""
        for name in sorted(self.argv, key=lambda n: n != "kube-apiserver"):
            if not _alive(self.pid(name)):
                self.start(name)
            if name == "kube-apiserver":
                wait_until(self.cluster.is_up, timeout, "the restarted kube-apiserver", interval=0.2)

    def start(self, component):
        with open(self.cluster.cluster_dir / "logs" / f"{component}.log", "ab") as log:
            proc = subprocess.Popen(self.argv[component], cwd=self.cluster.cluster_dir, stdin=subprocess.DEVNULL,
                                    stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        # kwokctl stops what its pid files name (`kwokctl delete cluster` at the end of the session)
        (self.cluster.cluster_dir / "pids" / f"{component}.pid").write_text(str(proc.pid))


def _cmdline(pid) -> list:
    with open(f"/proc/{pid}/cmdline", "rb") as f:
        return [a.decode() for a in f.read().split(b"\0") if a]


def _alive(pid) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.fixture
def control_plane(cluster):
    """The session cluster's processes; whatever a test killed is running again afterwards."""
    processes = ControlPlane(cluster)
    yield processes
    processes.restore()


@pytest.fixture
def throttled_user(cluster, namespace):
    """A cluster-admin user whose evictions go to an APF priority level with zero seats.

    With nominalConcurrencyShares 0 the level runs one request at a time (APF never starves a
    level completely); ``SeatHolder`` keeps that one seat busy, so every other eviction by the
    user is rejected at once with 429 (limitResponse Reject): throttling with no PDB involved.
    """
    user = f"throttled-{namespace[-6:]}"
    name = f"test-{user}"
    level = {"apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "PriorityLevelConfiguration",
             "metadata": {"name": name},
             "spec": {"type": "Limited", "limited": {"nominalConcurrencyShares": 0, "lendablePercent": 0,
                                                     "borrowingLimitPercent": 0,
                                                     "limitResponse": {"type": "Reject"}}}}
    schema = {"apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "FlowSchema", "metadata": {"name": name},
              "spec": {"priorityLevelConfiguration": {"name": name}, "matchingPrecedence": 100,
                       "distinguisherMethod": {"type": "ByUser"},
                       "rules": [{"subjects": [{"kind": "User", "user": {"name": user}}],
                                  "resourceRules": [{"verbs": ["create"], "apiGroups": [""],
                                                     "resources": ["pods/eviction"], "namespaces": ["*"]}]}]}}
    binding = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": {"name": name},
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"},
               "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}]}
    create(cluster, None, level, schema, binding)
    wait_until(lambda: name in cluster.kubectl("get", "--raw", "/debug/api_priority_and_fairness/"
                                               "dump_priority_levels").stdout, 10, "the priority level")
    yield user
    cluster.kubectl("delete", "flowschema,prioritylevelconfiguration,clusterrolebinding", name,
                    "--wait=false", check=False)


class SeatHolder:
    """Holds the user's only APF seat: an eviction POST whose body never arrives."""

    def __init__(self, cluster, user, namespace):
        self.api, self.user, self.namespace = RawApi(cluster), user, namespace
        self.executor = Executor(Connection(kubeconfig=str(cluster.kubeconfig), as_user=user))
        self.sock = None

    def __enter__(self):
        raw = socket.create_connection((self.api.host, self.api.port), timeout=10)
        self.sock = self.api.context.wrap_socket(raw, server_hostname=self.api.host)
        self.sock.sendall((f"POST /api/v1/namespaces/{self.namespace}/pods/seat-holder/eviction HTTP/1.1\r\n"
                           f"Host: {self.api.host}\r\nImpersonate-User: {self.user}\r\n"
                           "Content-Type: application/json\r\nUser-Agent: seat-holder\r\n"
                           "Content-Length: 1000\r\n\r\n").encode())
        wait_until(self.throttles, 10, "APF to reject the user's evictions", interval=0.2)
        return self

    def throttles(self) -> bool:
        return self.executor.evict((self.namespace, "no-such-pod", "")).result == "throttled"

    def release(self):
        if self.sock is not None:
            self.sock.close()
            self.sock = None

    def __exit__(self, *exc):
        self.release()


# -- 1. the API server dies and comes back in the middle of a drain --------------------------------
def set_ready(cluster, namespace, name, ready: bool):
    patch = json.dumps({"status": {"conditions": [{"type": "Ready", "status": "True" if ready else "False"}]}})
    cluster.kubectl("patch", "pod", name, "-n", namespace, "--subresource=status", "--type=strategic", "-p", patch)


def half_stuck(cluster, namespace, nodes) -> str:
    """On nodes[0]: 2 ``fast`` pods (no PDB) and 2 ``web`` pods whose PDB (minAvailable 2) waits
    for a third, NotReady web pod on nodes[1]; an ``agent`` DaemonSet pod on each node. Returns
    the NotReady pod: once it is Ready the web pods may go one at a time."""
    fast = deployment("fast", 2, node_selector={"pool": namespace}, requests={"cpu": "100m"})
    place_on(cluster, namespace, nodes[1:], [pool_web(2, namespace), fast, agent(namespace)], 6)
    cluster.kubectl("cordon", nodes[0])
    cluster.kubectl("scale", "deployment/web", "--replicas=3", "-n", namespace)
    wait_pods_running(cluster, namespace, "app=web", count=3)
    cluster.kubectl("uncordon", nodes[0])
    elsewhere = [p["metadata"]["name"] for p in on_node(cluster, namespace, nodes[1]).values()
                 if p["metadata"]["labels"]["app"] == "web"]
    set_ready(cluster, namespace, elsewhere[0], False)
    create(cluster, namespace, pdb("web", {"app": "web"}, min_available=2))
    wait_pdb_settled(cluster, namespace, "web", disruptions_allowed=0, current_healthy=2)
    return elsewhere[0]


# id, drain --timeout, seconds the API server stays down, expected exit code of the drain
OUTAGES = [
    ("back-within-the-timeout", "60s", 3, 0),  # the drain retries its re-plans and finishes
    ("down-past-the-timeout", "2s", 3, 4),  # a partial report, "final state unknown"
]


@pytest.mark.parametrize("timeout, down, expected", [o[1:] for o in OUTAGES], ids=[o[0] for o in OUTAGES])
def test_api_server_restart_mid_drain_loses_nothing_and_a_rerun_finishes(
        cluster, namespace, make_node, audit, control_plane, start_drain, timeout, down, expected):
    nodes = pool_nodes(make_node, namespace, 2, "flt")
    unready = half_stuck(cluster, namespace, nodes)
    flags = [nodes[0], "--ignore-daemonsets"]
    plan = planned(cluster, *flags)
    assert len(plan) == 4  # 2 fast (evict now), 2 web (wait for the PDB); the agents are skipped
    before = pods_by_uid(cluster, namespace)
    started = audit.now()
    run = start_drain(*flags, "--timeout", timeout)
    try:
        wait_until(lambda: run.saw("waiting:"), 60, "the drain to wait for the PDB", interval=0.05)
        control_plane.kill_apiserver()  # the drain's watches lose the API server while it waits
        time.sleep(down)
    finally:
        control_plane.restore()  # down for `down` s plus ~3 s to start
    set_ready(cluster, namespace, unready, True)
    code, report, err = run.finish(120)
    control_plane.restore()  # in case a controller lost its lease meanwhile

    assert code == expected, (code, err[-3000:])
    assert "Traceback" not in err and "error:" not in err, err
    assert report["kind"] == "DrainReport", report
    if expected == 0:
        assert report["drained"] and run.saw("lost the API server, watching again: unable to connect"), err
    else:
        assert report["status"] == "timeout" and "final state unknown: unable to connect" in report["message"]
        assert len(report["left"]) == 2 and len(report["evicted"]) == 2
    assert not deletes(audit, started)
    assert {e.name for e in evictions(audit, started)} <= set(plan)
    vanished = set(before) - set(pods_by_uid(cluster, namespace))
    assert vanished <= set(plan.values())  # nothing outside the plan (the agents, the other node) went

    # a second outage in a session costs ~25 s more: kube-controller-manager's watches back off
    code, report, err = drain(cluster, *flags, "--timeout", "90s", "--yes")
    assert code == 0 and report["drained"], err
    left = [p["metadata"]["name"] for p in on_node(cluster, namespace, nodes[0]).values()
            if p["metadata"]["labels"].get("app") != "agent"]
    assert left == []
    assert set(before) - set(pods_by_uid(cluster, namespace)) == set(plan.values())


# -- 2. API priority and fairness: a 429 without a PDB cause is throttling, not a PDB refusal ---------
def test_apf_throttling_is_told_apart_from_a_pdb_refusal(
        cluster, namespace, make_node, audit, throttled_user, start_drain):
    nodes = pool_nodes(make_node, namespace, 2, "flt")
    guarded = pod("guarded", node_name=nodes[1])
    place_on(cluster, namespace, nodes[1:], [pool_web(2, namespace), guarded,
                                             pdb("guarded", {"app": "guarded"}, min_available=1)], 3)
    wait_pdb_settled(cluster, namespace, "guarded", disruptions_allowed=0, current_healthy=1)
    admin = Executor(Connection(kubeconfig=str(cluster.kubeconfig)))
    throttled = Executor(Connection(kubeconfig=str(cluster.kubeconfig), as_user=throttled_user))
    target = get_json(cluster, "pod", "guarded", "-n", namespace)

    refused = admin.evict(target)  # the real server's PDB refusal: 429 with a DisruptionBudget cause
    assert (refused.result, refused.status) == ("pdb-blocked", 429) and "DisruptionBudget" in refused.causes

    drained = {p["metadata"]["name"]: p for p in on_node(cluster, namespace, nodes[0]).values()}
    with SeatHolder(cluster, throttled_user, namespace) as seat:
        for victim in (target, *drained.values()):  # the same 429 status, no PDB cause: throttled
            outcome = throttled.evict(victim)
            assert (outcome.result, outcome.status, outcome.causes) == ("throttled", 429, ()), outcome
        started = audit.now()
        run = start_drain(nodes[0], "--as", throttled_user, "--timeout", "60s")
        wait_until(lambda: len({line.split()[3] for line in run.lines if "(throttled)" in line}) == 2, 30,
                   "both evictions of the drain to be throttled")
        seat.release()
        released = audit.now()
    code, report, err = run.finish(90)

    assert code == 0 and report["drained"] and len(report["evicted"]) == 2, err
    assert "pdb-blocked" not in err and "Traceback" not in err
    assert run.saw("cannot evict pod") and run.saw("(throttled): Too many requests")
    sent = evictions(audit, started, set(drained))
    assert [e for e in sent if e.code == 429 and e.received < released]  # APF said no...
    assert all(e.received >= released for e in sent if e.code == 201)  # ...and nothing went meanwhile
    assert {e.code for e in sent} <= {201, 429}


# -- 3. a PDB tightened during the drain: the drain waits, then stops; it never bypasses it -----------
def test_pdb_tightened_mid_drain_is_never_bypassed(cluster, namespace, make_node, audit, start_drain):
    """After the first wave the drain waits for the web PDB; it is raised to minAvailable 3 before
    the NotReady web pod recovers, so the budget stays at 0 (without the change one web pod
    would go, as in the API server test)."""
    nodes = pool_nodes(make_node, namespace, 2, "flt")
    unready = half_stuck(cluster, namespace, nodes)
    fast = {p["metadata"]["name"] for p in on_node(cluster, namespace, nodes[0]).values()
            if p["metadata"]["labels"]["app"] == "fast"}
    started = audit.now()
    with BudgetWatch(cluster, namespace, "app=web", "web") as watch:
        run = start_drain(nodes[0], "--ignore-daemonsets", "--timeout", "10s")
        wait_until(lambda: run.saw("waiting:"), 60, "the drain to wait for the PDB", interval=0.05)
        cluster.kubectl("patch", "pdb", "web", "-n", namespace, "--type=merge", "-p", '{"spec":{"minAvailable":3}}')
        wait_pdb_settled(cluster, namespace, "web", disruptions_allowed=0)
        set_ready(cluster, namespace, unready, True)
        wait_pdb_settled(cluster, namespace, "web", disruptions_allowed=0, current_healthy=3)
        code, report, err = run.finish(60)

    assert code == 4, (code, err[-3000:])  # the timeout: a partial drain, the node stays cordoned
    assert report["status"] == "timeout" and "Traceback" not in err
    assert {p["name"] for p in report["left"]} == {p["metadata"]["name"] for p in on_node(
        cluster, namespace, nodes[0]).values() if p["metadata"]["labels"]["app"] == "web"}
    assert {e.name for e in evictions(audit, started) if e.code == 201} == fast  # the first wave only
    assert not deletes(audit, started)
    assert get_json(cluster, f"node/{nodes[0]}")["spec"].get("unschedulable") is True
    assert watch.min_ready >= 2, watch.min_ready
    # once the controller counts 3 healthy for minAvailable 3, no Ready web pod goes
    # (a sample reads the pods, then the PDB: the status may already count a pod the read saw unready)
    settled = next(i for i, (ready, s) in enumerate(watch.samples)
                   if ready == 3 and s.get("desiredHealthy") == 3 and s.get("currentHealthy") == 3)
    assert all(ready == 3 and s["disruptionsAllowed"] == 0 for ready, s in watch.samples[settled:]), \
        watch.samples[settled:]


# -- 4. a pod replaced under the same name on another node is not evicted by mistake ----------------
def test_pod_replaced_under_the_same_name_is_not_evicted(
        cluster, namespace, make_node, audit, throttled_user, start_drain):
    nodes = pool_nodes(make_node, namespace, 2, "flt")
    create(cluster, namespace, pod("solo", node_name=nodes[0]))
    wait_pods_running(cluster, namespace, count=1)
    old = get_json(cluster, "pod", "solo", "-n", namespace)
    started = audit.now()
    with SeatHolder(cluster, throttled_user, namespace):  # the drain retries solo's eviction...
        run = start_drain(nodes[0], "--force", "--as", throttled_user, "--timeout", "60s")
        wait_until(lambda: run.saw("(throttled)"), 30, "the drain to retry the eviction")
        cluster.kubectl("delete", "pod", "solo", "-n", namespace, "--grace-period=0", "--force")
        create(cluster, namespace, pod("solo", node_name=nodes[1]))  # ...while solo is replaced
        new = get_json(cluster, "pod", "solo", "-n", namespace)
    code, report, err = run.finish(90)

    assert code == 0 and report["drained"], err
    assert run.saw("already gone")
    current = get_json(cluster, "pod", "solo", "-n", namespace)
    assert (current["metadata"]["uid"], current["spec"]["nodeName"]) == (new["metadata"]["uid"], nodes[1])
    assert not [e for e in evictions(audit, started, {"solo"}) if e.code == 201]
    # and should an eviction of the old pod still be sent, the server refuses it (UID precondition)
    stale = Executor(Connection(kubeconfig=str(cluster.kubeconfig))).evict(old)
    assert (stale.result, stale.status) == ("gone", 409)
    assert get_json(cluster, "pod", "solo", "-n", namespace)["metadata"]["uid"] == new["metadata"]["uid"]


# -- 5. two drains at once over nodes that share one PDB ---------------------------------------------
def test_two_drains_at_once_keep_the_shared_budget(cluster, namespace, make_node, audit, start_drain):
    nodes = pool_nodes(make_node, namespace, 3, "flt")
    place_on(cluster, namespace, nodes[1:], [pool_web(3, namespace)], 3)  # 3 on nodes[0]...
    cluster.kubectl("cordon", nodes[0])
    cluster.kubectl("cordon", nodes[2])
    cluster.kubectl("scale", "deployment/web", "--replicas=6", "-n", namespace)
    wait_pods_running(cluster, namespace, "app=web", count=6)  # ...and 3 on nodes[1]
    for node in (nodes[0], nodes[2]):
        cluster.kubectl("uncordon", node)
    create(cluster, namespace, pdb("web", {"app": "web"}, max_unavailable=1))
    wait_pdb_settled(cluster, namespace, "web", disruptions_allowed=1, current_healthy=6)
    started = audit.now()
    with BudgetWatch(cluster, namespace, "app=web", "web") as watch:
        runs = [start_drain(node, "--timeout", "90s") for node in nodes[:2]]
        results = [r.finish(120) for r in runs]

    assert [code for code, _, _ in results] == [0, 0], [err[-2000:] for _, _, err in results]
    assert len(watch.samples) > 5  # sampled while both drains ran (they finish sooner with the watch engine)
    assert watch.min_ready >= 5, watch.min_ready  # desiredHealthy = 6 - maxUnavailable 1
    assert watch.min_status_margin >= 0, watch.min_status_margin
    assert {p["spec"]["nodeName"] for p in pods_by_uid(cluster, namespace).values()} == {nodes[2]}
    sent = evictions(audit, started)
    assert len([e for e in sent if e.code == 201]) == 6 and {e.code for e in sent} <= {201, 429}
    assert not deletes(audit, started)
    print(f"two drains: {len(watch.samples)} samples, min ready {watch.min_ready}, "
          f"{len([e for e in sent if e.code == 429])} PDB refusals")
