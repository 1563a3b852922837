"""`rebalance` on the real control plane: the real scheduler re-places the evicted pods.

Isolation: every test spreads over its own zone label key and pins its pods to its own nodes
(nodeSelector, honoured by default), so nodes of other tests are neither domains nor targets.
"""

from __future__ import annotations

import json
import signal
import subprocess
import uuid

from cluster_helpers import create, deployment, get_json, pdb, wait_pdb_settled, wait_pods_running, wait_until

from tests.unit.cli_helpers import run_cli

HOSTNAME = "kubernetes.io/hostname"


class Setup:
    """One test's zone key, node pool and helpers."""

    def __init__(self, cluster, namespace, make_node, audit):
        self.cluster, self.ns, self.make_node, self.audit = cluster, namespace, make_node, audit
        self.key = f"rebalance.test/zone-{uuid.uuid4().hex[:6]}"
        self.pool = {"rebalance-pool": namespace}

    def node(self, zone, labels=None, **kwargs) -> str:
        name = f"rb-{zone}-{uuid.uuid4().hex[:6]}"
        self.make_node(name, labels={self.key: zone, **self.pool, **(labels or {})}, **kwargs)
        return name

    def spread(self, key=None, max_skew=1, **extra) -> dict:
        return {"maxSkew": max_skew, "topologyKey": key or self.key, "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchLabels": {"app": "web"}}, **extra}

    def deploy(self, replicas, constraints, node_selector=None):
        d = deployment("web", replicas, node_selector={**self.pool, **(node_selector or {})})
        d["spec"]["template"]["spec"]["topologySpreadConstraints"] = constraints
        create(self.cluster, self.ns, d)
        return wait_pods_running(self.cluster, self.ns, "app=web", count=replicas, timeout=90)

    def pdb(self, **kwargs):
        create(self.cluster, self.ns, pdb("web", {"app": "web"}, **kwargs))

    def counts(self, key=None) -> dict:
        """Running, non-terminating web pods per domain, straight from the API."""
        key = key or self.key
        nodes = {n["metadata"]["name"]: n["metadata"]["labels"] for n in get_json(self.cluster, "nodes")["items"]}
        out = {}
        for p in get_json(self.cluster, "pods", "-n", self.ns, "-l", "app=web")["items"]:
            node = p["spec"].get("nodeName")
            if p["metadata"].get("deletionTimestamp") or not node or key not in nodes.get(node, {}):
                continue
            out[nodes[node][key]] = out.get(nodes[node][key], 0) + 1
        return out

    def uids(self) -> set:
        return {p["metadata"]["uid"] for p in get_json(self.cluster, "pods", "-n", self.ns, "-l", "app=web")["items"]}

    def rebalance(self, *args):
        code, out, err = run_cli(["rebalance", "deployment/web", "-n", self.ns, *args,
                                  "--kubeconfig", str(self.cluster.kubeconfig), "-o", "json"])
        return code, (json.loads(out) if out.strip() else None), err

    def evictions(self, since) -> list:
        """(pod, HTTP code) of kubectl-safety's eviction requests in this namespace since ``since``."""
        return [(e.name, e.code) for e in self.audit.mutating_requests(since, user_agent_contains="kubectl-safety/")
                if e.namespace == self.ns and e.resource == "pods/eviction"]

    def mutations(self, since) -> list:
        return [e for e in self.audit.mutating_requests(since, user_agent_contains="kubectl-safety/")
                if e.namespace == self.ns]


def setup(cluster, namespace, make_node, audit) -> Setup:
    return Setup(cluster, namespace, make_node, audit)


def skew(counts: dict, domains) -> int:
    values = [counts.get(d, 0) for d in domains]
    return max(values) - min(values)


def accepted(evictions) -> list:
    return [name for name, code in evictions if code in (200, 201)]


def wait_accepted(t, since, count) -> list:
    """The evictions once at least ``count`` accepted ones reached the audit log."""
    return wait_until(lambda: t.evictions(since) if len(accepted(t.evictions(since))) >= count else None, 15,
                      f"{count} accepted eviction(s) in the audit log")


def test_zones_added_later_are_filled_with_the_planned_evictions_within_the_pdb(cluster, namespace, make_node, audit):
    t = setup(cluster, namespace, make_node, audit)
    t.node("a"), t.node("a")
    t.deploy(6, [t.spread()])
    t.pdb(max_unavailable=1)
    wait_pdb_settled(cluster, namespace, "web", disruptions_allowed=1, current_healthy=6, expected_pods=6)
    t.node("b"), t.node("c")

    code, plan, err = t.rebalance("--dry-run")
    assert code == 0, err
    assert plan["constraints"][0]["domains"] == {"a": 6, "b": 0, "c": 0}
    assert len(plan["evictions"]) == 4 and plan["summary"]["rounds"] == 4  # one per round: maxUnavailable 1
    assert plan["expected"][0]["domains"] == {"a": 2, "b": 2, "c": 2}

    since = audit.now()
    code, report, err = t.rebalance("--wait", "--yes", "--timeout", "4m")
    assert code == 0, err
    assert report["execution"]["after"][0]["skew"] <= 1
    counts = t.counts()
    assert skew(counts, "abc") <= 1 and sum(counts.values()) == 6
    evictions = wait_accepted(t, since, 4)
    assert len(accepted(evictions)) == len(plan["evictions"])  # exactly as planned
    assert {code for _, code in evictions} <= {200, 201, 429}  # refusals by the PDB are retried, never bypassed
    assert not [e for e in t.mutations(since) if e.resource == "pods"]  # no plain DELETE around the PDB


def test_cordoned_zones_with_node_taints_policy_honor(cluster, namespace, make_node, audit):
    t = setup(cluster, namespace, make_node, audit)
    _, b, c = t.node("a"), t.node("b"), t.node("c")
    for name in (b, c):
        cluster.kubectl("cordon", name)
    wait_until(lambda: all(any(x["key"] == "node.kubernetes.io/unschedulable" for x in
                               get_json(cluster, f"node/{n}")["spec"].get("taints") or []) for n in (b, c)),
               30, "the unschedulable taint on the cordoned nodes")
    t.deploy(4, [t.spread(nodeTaintsPolicy="Honor")])  # cordoned zones are not domains: all 4 go to a
    assert t.counts() == {"a": 4}
    for name in (b, c):
        cluster.kubectl("uncordon", name)
    wait_until(lambda: not any(get_json(cluster, f"node/{n}")["spec"].get("taints") for n in (b, c)), 30,
               "the unschedulable taint to go")

    code, plan, err = t.rebalance("--dry-run")
    assert code == 0, err
    assert plan["constraints"][0]["skew"] == 4 and len(plan["evictions"]) == 2
    since = audit.now()
    code, report, err = t.rebalance("--wait", "--yes", "--timeout", "3m")
    assert code == 0, err
    assert skew(t.counts(), "abc") <= 1
    assert len(accepted(wait_accepted(t, since, 2))) == 2


def test_zone_and_hostname_constraints_together(cluster, namespace, make_node, audit):
    t = setup(cluster, namespace, make_node, audit)
    a1, b1 = t.node("a"), t.node("b")
    t.deploy(4, [t.spread(), t.spread(HOSTNAME)])  # [2, 2] on a1 and b1
    a2, b2 = t.node("a"), t.node("b")

    code, plan, err = t.rebalance("--dry-run")
    assert code == 0, err
    by_key = {c["topologyKey"]: c for c in plan["constraints"]}
    assert by_key[HOSTNAME]["skew"] == 2 and by_key[t.key]["skew"] == 0
    assert len(plan["evictions"]) == 2
    refused_at, uids = audit.now(), t.uids()
    code, _, err = t.rebalance("--wait")  # stdin is not a terminal: --yes is required
    assert code == 2 and "add --yes" in err and t.uids() == uids
    since = audit.now()
    code, report, err = t.rebalance("--wait", "--yes", "--timeout", "3m")
    assert code == 0, err
    hosts = t.counts(HOSTNAME)
    assert hosts == {a1: 1, a2: 1, b1: 1, b2: 1}
    assert t.counts() == {"a": 2, "b": 2}  # the zone constraint never got worse
    assert len(accepted(wait_accepted(t, since, 2))) == 2
    assert [e for e in t.mutations(refused_at) if e.received < since] == []


def test_min_domains_with_a_mistyped_zone_label_evicts_nothing(cluster, namespace, make_node, audit):
    t = setup(cluster, namespace, make_node, audit)
    t.node("a"), t.node("b")
    c = t.node("c")
    t.deploy(6, [t.spread(minDomains=3)])
    assert t.counts() == {"a": 2, "b": 2, "c": 2}
    typo = t.key.replace("zone-", "zones-")
    cluster.kubectl("label", "node", c, f"{t.key}-", f"{typo}=c")  # the zone disappears for the scheduler

    code, plan, err = t.rebalance("--dry-run")
    assert code == 3, err
    row = plan["constraints"][0]
    assert row["domains"] == {"a": 2, "b": 2} and row["skew"] == 2  # 2 domains < minDomains 3: minimum 0
    assert plan["evictions"] == [] and any("minDomains" in b["reason"] for b in plan["blocked"])
    codes = {f["code"]: f["message"] for f in plan["findings"]}
    assert "TOPOLOGY_FEW_DOMAINS" in codes and typo in codes["TOPOLOGY_KEY_MISSING"]

    uids = t.uids()
    code, _, err = t.rebalance("--yes")
    assert code == 3, err
    assert t.uids() == uids


def test_node_affinity_policy_ignore_counts_a_domain_the_pods_cannot_use(cluster, namespace, make_node, audit):
    t = setup(cluster, namespace, make_node, audit)
    t.node("a", {"pool": "main"}), t.node("b", {"pool": "main"})
    t.deploy(4, [t.spread(nodeAffinityPolicy="Ignore")], node_selector={"pool": "main"})
    t.node("c", {"pool": "spot"})  # excluded by the nodeSelector, but with Ignore it is a domain at 0

    code, plan, err = t.rebalance("--dry-run")
    assert code == 3, err
    assert plan["constraints"][0]["domains"] == {"a": 2, "b": 2, "c": 0}
    assert plan["evictions"] == []  # a replacement could go nowhere: it would stay Pending
    assert any("node-affinity" in b["reason"] for b in plan["blocked"])
    uids = t.uids()
    assert t.rebalance("--yes")[0] == 3 and t.uids() == uids


def test_pdb_limits_the_plan_then_rounds_finish_it(cluster, namespace, make_node, audit):
    t = setup(cluster, namespace, make_node, audit)
    t.node("a")
    t.deploy(4, [t.spread()])
    t.pdb(min_available=4)
    wait_pdb_settled(cluster, namespace, "web", disruptions_allowed=0, current_healthy=4)
    t.node("b")

    code, plan, err = t.rebalance("--dry-run")
    assert code == 3, err
    assert plan["evictions"] == [] and any("PDB web" in b["reason"] for b in plan["blocked"])
    refused_at, uids = audit.now(), t.uids()
    assert t.rebalance("--yes")[0] == 3 and t.uids() == uids

    cluster.kubectl("patch", "pdb", "web", "-n", namespace, "--type=json",
                    "-p", '[{"op":"remove","path":"/spec/minAvailable"},{"op":"add","path":"/spec/maxUnavailable","value":1}]')
    wait_pdb_settled(cluster, namespace, "web", disruptions_allowed=1, current_healthy=4)
    code, plan, err = t.rebalance("--dry-run")
    assert code == 0 and [e["round"] for e in plan["evictions"]] == [1, 2], err

    since = audit.now()
    code, report, err = t.rebalance("--yes")  # without --wait: one round only
    assert code == 4, err
    assert len(accepted(wait_accepted(t, since, 1))) == 1
    assert [e for e in t.mutations(refused_at) if e.received < since] == []  # nothing while the PDB blocked
    wait_pods_running(cluster, namespace, "app=web", count=4, timeout=60)
    wait_pdb_settled(cluster, namespace, "web", disruptions_allowed=1, current_healthy=4)
    code, report, err = t.rebalance("--wait", "--yes", "--timeout", "2m")
    assert code == 0, err
    assert t.counts() == {"a": 2, "b": 2}


def test_ctrl_c_while_waiting_for_replacements_stops_cleanly(cluster, namespace, make_node, audit):
    t = setup(cluster, namespace, make_node, audit)
    t.node("a")
    t.deploy(4, [t.spread()])
    t.node("b")
    # A quota already full: the ReplicaSet cannot create the replacement, so --wait waits until interrupted.
    create(cluster, namespace, {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "pods"},
                                "spec": {"hard": {"pods": "3"}}})
    wait_until(lambda: get_json(cluster, "resourcequota", "pods", "-n", namespace).get("status", {}).get("used", {})
               .get("pods") == "4", 30, "the quota usage")
    since = audit.now()
    proc = subprocess.Popen(["kubectl-safety", "rebalance", "deployment/web", "-n", namespace, "--wait", "--yes",
                             "--kubeconfig", str(cluster.kubeconfig), "-o", "json"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines = []
    for line in proc.stderr:
        lines.append(line)
        if line.startswith("waiting for"):
            break
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, "".join(lines) + err
    report = json.loads(out)
    assert report["execution"]["interrupted"] is True
    assert [e["result"] for r in report["execution"]["rounds"] for e in r["evictions"]] == ["done", "done"]
    assert len(accepted(wait_accepted(t, since, 2))) == 2  # one round (no PDB), then no second round after Ctrl-C


def test_rebalance_dry_run_server_sends_the_first_round_and_names_a_refusal(cluster, namespace, make_node, audit):
    from test_drain import _policy

    t = setup(cluster, namespace, make_node, audit)
    t.node("a"), t.node("a")
    t.deploy(4, [t.spread()])
    t.node("b")
    uids, since = t.uids(), audit.now()
    code, plan, err = t.rebalance("--dry-run=server")
    assert code == 0, err
    first = [e for e in plan["evictions"] if e["round"] == 1]
    assert first and [e["serverDryRun"]["result"] for e in first] == ["done"] * len(first)
    assert plan["serverDryRun"] == {"sent": len(first), "refused": 0}
    assert all("serverDryRun" not in e for e in plan["evictions"] if e["round"] > 1)
    assert accepted(wait_accepted(t, since, len(first))) and t.uids() == uids  # sent, and nothing changed

    name = f"freeze-rebalance-{namespace}"
    try:
        create(cluster, None, *_policy(name, ["pods/eviction"], ["CREATE"], "false", "evictions are frozen",
                                       namespace))
        plan = wait_until(lambda: (lambda r: r[1] if r[0] == 3 else None)(t.rebalance("--dry-run=server")), 60,
                          "the eviction policy in force")
        refused = [r for r in plan["risks"] if r["code"] == "SERVER_REFUSED"]
        assert not plan["safe"] and refused and all("evictions are frozen" in r["message"] for r in refused)
        assert plan["serverDryRun"]["refused"] == len(first) and t.uids() == uids
    finally:
        for kind in ("validatingadmissionpolicybinding", "validatingadmissionpolicy"):
            cluster.kubectl("delete", kind, name, "--ignore-not-found", check=False)
