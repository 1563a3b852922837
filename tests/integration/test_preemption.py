"""`preemption` against the real kube-scheduler: the preview taken just before must match what it does.

Each scenario builds a few kwok nodes labelled for the test (the preemptor selects them, so
nodes of other tests never matter), fills them with pods bound by the scheduler, previews a
preemptor manifest with `kubectl safety preemption -f`, then creates that pod and compares
the node it lands on and the pods the scheduler marked DisruptionTarget/PreemptionByScheduler
(read from the API server's audit log) with the preview.
"""

from __future__ import annotations

import json
import time
import uuid

import pytest
from cluster_helpers import create, get_json, pdb, pod, wait_pdb_settled, wait_pods_running, wait_until

from tests.unit.cli_helpers import run_cli

LEVELS = (10, 20, 100, 1000)


@pytest.fixture(scope="module")
def classes(cluster):
    """PriorityClasses for this module: {value: name} plus "never" (1000, preemptionPolicy Never)."""
    suffix = uuid.uuid4().hex[:6]
    names = {v: f"pt-{v}-{suffix}" for v in LEVELS}
    names["never"] = f"pt-never-{suffix}"
    objects = [{"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": n},
                "value": v} for v, n in names.items() if v != "never"]
    objects.append({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                    "metadata": {"name": names["never"]}, "value": 1000, "preemptionPolicy": "Never"})
    create(cluster, None, *objects)
    yield names
    cluster.kubectl("delete", "priorityclass", *names.values(), "--wait=false", check=False)


class Scenario:
    """Nodes and victim pods for one test, then preview + act + compare."""

    def __init__(self, cluster, namespace, make_node, classes, tmp_path, audit):
        self.cluster, self.ns, self.make_node, self.classes, self.tmp = cluster, namespace, make_node, classes, tmp_path
        self.audit = audit
        self.group = uuid.uuid4().hex[:8]
        self.nodes = {}

    def node(self, short, cpu="2", labels=None, taints=None):
        name = f"{short}-{self.group}"
        self.make_node(name, cpu=cpu, labels={"preempt-test": self.group, **(labels or {})}, taints=taints)
        self.nodes[name] = short
        return name

    def victim(self, name, node_short, priority, cpu="1", labels=None, tolerations=None):
        node = f"{node_short}-{self.group}"
        manifest = pod(name, labels or {"app": name}, node_selector={"kubernetes.io/hostname": node},
                       priority_class=self.classes[priority], requests={"cpu": cpu}, tolerations=tolerations)
        create(self.cluster, self.ns, manifest)
        wait_pods_running(self.cluster, self.ns, f"app={(labels or {'app': name})['app']}", timeout=90)

    def preemptor(self, priority=1000, cpu="2", **extra):
        spec = {"containers": [{"name": "main", "image": "registry.example/app:1",
                                "resources": {"requests": {"cpu": cpu}}}],
                "terminationGracePeriodSeconds": 0, "priorityClassName": self.classes[priority],
                "nodeSelector": {"preempt-test": self.group, **extra.pop("node_selector", {})}, **extra}
        return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "hi", "namespace": self.ns,
                                                               "labels": {"app": "hi"}}, "spec": spec}

    def preview(self, manifest):
        """Run the preview; it must send no mutating request (checked in the audit log)."""
        path = self.tmp / "preemptor.json"
        path.write_text(json.dumps(manifest))
        since = self.audit.now()
        code, out, err = run_cli(["preemption", "-f", str(path), "-n", self.ns, "-o", "json",
                                  "--kubeconfig", str(self.cluster.kubeconfig)])
        assert out, err
        ours = wait_until(lambda: [e for e in self.audit.entries(since) if "kubectl-safety/" in e.user_agent],
                          15, "the preview's reads in the audit log")
        assert {e.verb for e in ours} <= {"get", "list"}, ours
        return code, json.loads(out)

    def act(self, manifest, expect_bound=True):
        """Create the preemptor; return (node it landed on or None, names the scheduler preempted)."""
        since = _now()
        create(self.cluster, self.ns, manifest)
        if expect_bound:
            node = wait_until(lambda: get_json(self.cluster, "pod", "hi", "-n", self.ns)["spec"].get("nodeName"),
                              90, "the preemptor to be bound")
        else:
            time.sleep(8)  # several scheduling attempts
            node = get_json(self.cluster, "pod", "hi", "-n", self.ns)["spec"].get("nodeName")
        return node, preempted_by_scheduler(self.cluster, self.ns, since)

    def nominated(self):
        return get_json(self.cluster, "pod", "hi", "-n", self.ns)["status"].get("nominatedNodeName")


def _now():
    from datetime import datetime, timezone

    return datetime.now(timezone.utc)


def preempted_by_scheduler(cluster, namespace, since) -> list:
    """Pods the scheduler marked DisruptionTarget=PreemptionByScheduler, from the audit log."""
    from datetime import datetime

    found = set()
    for line in cluster.audit_log.read_text().splitlines():
        event = json.loads(line)
        ref = event.get("objectRef") or {}
        if (event.get("stage") != "ResponseComplete" or ref.get("namespace") != namespace
                or ref.get("resource") != "pods" or ref.get("subresource") != "status"
                or event.get("verb") not in ("patch", "update", "apply")):
            continue
        if datetime.fromisoformat(event["requestReceivedTimestamp"].replace("Z", "+00:00")) < since:
            continue
        if "PreemptionByScheduler" in json.dumps(event.get("requestObject") or {}):
            found.add(ref.get("name"))
    return sorted(found)


@pytest.fixture
def scenario(cluster, namespace, make_node, classes, tmp_path, audit):
    return Scenario(cluster, namespace, make_node, classes, tmp_path, audit)


def names(report):
    return sorted(v["name"] for v in report["victims"])


def check(scenario, manifest, *, node, victims):
    """Preview, then act; both must agree with the expectation and with each other."""
    code, report = scenario.preview(manifest)
    assert (code, report["outcome"], report["sampling"]["mayDiffer"]) == (0, "preempt", False), report
    assert (report["node"], names(report)) == (node, victims)
    landed, preempted = scenario.act(manifest)
    assert preempted == names(report)
    assert landed == report["node"]
    return report


def test_lowest_priority_node_chosen(scenario):
    _, b = scenario.node("a"), scenario.node("b")
    scenario.victim("va", "a", 100, cpu="2")
    scenario.victim("vb", "b", 10, cpu="2")
    check(scenario, scenario.preemptor(), node=b, victims=["vb"])


def test_pdb_protected_victim_pushes_to_other_node(scenario):
    _, b = scenario.node("a"), scenario.node("b")
    scenario.victim("guarded", "a", 10, cpu="2")
    scenario.victim("plain", "b", 100, cpu="2")
    create(scenario.cluster, scenario.ns, pdb("guard", {"app": "guarded"}, min_available=1))
    wait_pdb_settled(scenario.cluster, scenario.ns, "guard", disruptions_allowed=0, current_healthy=1)
    report = check(scenario, scenario.preemptor(), node=b, victims=["plain"])
    assert [c["pdbViolations"] for c in report["candidates"]] == [0, 1]


def test_pdb_violated_when_nothing_else_works(scenario):
    a = scenario.node("a")
    scenario.victim("guarded", "a", 10, cpu="2")
    create(scenario.cluster, scenario.ns, pdb("guard", {"app": "guarded"}, min_available=1))
    wait_pdb_settled(scenario.cluster, scenario.ns, "guard", disruptions_allowed=0, current_healthy=1)
    report = check(scenario, scenario.preemptor(), node=a, victims=["guarded"])
    assert report["victims"][0]["pdbViolation"] is True
    assert "PDB_VIOLATED_BY_PREEMPTION" in [f["code"] for f in report["findings"]]


def test_reprieve_keeps_the_older_pod(scenario):
    a = scenario.node("a")
    scenario.victim("older", "a", 10)
    time.sleep(1.5)  # startTime has one-second resolution
    scenario.victim("newer", "a", 10)
    check(scenario, scenario.preemptor(cpu="1"), node=a, victims=["newer"])


def test_reprieve_keeps_the_higher_priority_pod(scenario):
    a = scenario.node("a", cpu="4")
    for name, prio in (("p10", 10), ("p20", 20), ("p100", 100)):
        scenario.victim(name, "a", prio)
    scenario.victim("p10b", "a", 10)
    check(scenario, scenario.preemptor(cpu="2"), node=a, victims=["p10", "p10b"])


def test_preemption_policy_never(scenario):
    scenario.node("a")
    scenario.victim("va", "a", 10, cpu="2")
    manifest = scenario.preemptor(priority="never")
    code, report = scenario.preview(manifest)
    assert (code, report["outcome"], report["eligible"]) == (3, "not-eligible", False)
    landed, preempted = scenario.act(manifest, expect_bound=False)
    assert (landed, preempted, scenario.nominated()) == (None, [], None)


def test_node_affinity_excludes_cheaper_node(scenario):
    a, b = scenario.node("a", labels={"disk": "hdd"}), scenario.node("b", labels={"disk": "ssd"})
    scenario.victim("va", "a", 10, cpu="2")
    scenario.victim("vb", "b", 100, cpu="2")
    manifest = scenario.preemptor(node_selector={"disk": "ssd"})
    report = check(scenario, manifest, node=b, victims=["vb"])
    assert "node affinity" in {e["node"]: e["reason"] for e in report["excluded"]}[a]


def test_taint_excludes_cheaper_node(scenario):
    taint = {"key": "dedicated", "value": "batch", "effect": "NoSchedule"}
    a, b = scenario.node("a", taints=[taint]), scenario.node("b")
    scenario.victim("va", "a", 10, cpu="2", tolerations=[{"key": "dedicated", "operator": "Exists"}])
    scenario.victim("vb", "b", 100, cpu="2")
    report = check(scenario, scenario.preemptor(), node=b, victims=["vb"])
    assert "untolerated taint" in {e["node"]: e["reason"] for e in report["excluded"]}[a]


def test_fits_without_preemption(scenario):
    _, b = scenario.node("a"), scenario.node("b")
    scenario.victim("va", "a", 10, cpu="2")
    manifest = scenario.preemptor()
    code, report = scenario.preview(manifest)
    assert (code, report["outcome"], report["feasibleNodes"], report["victims"]) == (0, "fits", [b], [])
    landed, preempted = scenario.act(manifest)
    assert (landed, preempted) == (b, [])


def test_preview_by_pod_name_after_preemption(scenario):
    """`preemption POD` reads the live pod; a bound pod is previewed as if pending (its room is its own)."""
    a = scenario.node("a")
    scenario.victim("va", "a", 10, cpu="2")
    code, report = scenario.preview(scenario.preemptor())
    assert report["node"] == a
    landed, preempted = scenario.act(scenario.preemptor())
    assert (landed, preempted) == (a, ["va"])
    code, out, err = run_cli(["preemption", "hi", "-n", scenario.ns, "-o", "json",
                              "--kubeconfig", str(scenario.cluster.kubeconfig)])
    after = json.loads(out)
    assert (code, after["outcome"], after["notes"][0].startswith("the pod is already bound")) == (0, "fits", True)


def test_anti_affinity_target_becomes_the_victim(scenario):
    a, b = scenario.node("a"), scenario.node("b")
    scenario.victim("foe", "a", 10, cpu="500m")
    scenario.victim("vb", "b", 100, cpu="2")
    anti = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "foe"}}, "topologyKey": "kubernetes.io/hostname"}]}}
    report = check(scenario, scenario.preemptor(cpu="1", affinity=anti), node=a, victims=["foe"])
    assert [c["node"] for c in report["candidates"]] == [a, b]


def test_topology_spread_counts_follow_removed_victims(scenario):
    a = scenario.node("a", labels={"topology.kubernetes.io/zone": "za"})
    b = scenario.node("b", labels={"topology.kubernetes.io/zone": "zb"})
    scenario.victim("w1", "a", 10, labels={"app": "web"})
    scenario.victim("vb", "b", 100, cpu="2")
    spread = [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "DoNotSchedule",
               "labelSelector": {"matchLabels": {"app": "web"}}}]
    manifest = scenario.preemptor(cpu="1", topologySpreadConstraints=spread)
    manifest["metadata"]["labels"] = {"app": "web"}
    report = check(scenario, manifest, node=a, victims=["w1"])
    assert [c["node"] for c in report["candidates"]] == [a, b]


def test_manifest_with_node_name_preempts_nobody(scenario):
    """A pod created with spec.nodeName never enters the scheduler's queue: the preview that once
    showed a preemption now says the scheduler is bypassed, and the scheduler indeed preempts nobody.
    (The kubelet's admission itself needs a real kubelet; kwok runs whatever is bound to it.)"""
    a = scenario.node("a")
    scenario.victim("va", "a", 10, cpu="2")
    manifest = scenario.preemptor(nodeName=a)
    code, report = scenario.preview(manifest)
    assert (code, report["outcome"], report["node"], names(report), report["candidates"]) == \
        (3, "rejected", None, [], []), report
    assert "bypasses the scheduler" in report["eligibility"]
    landed, preempted = scenario.act(manifest, expect_bound=False)
    assert (landed, preempted, scenario.nominated()) == (a, [], None)
    assert get_json(scenario.cluster, "pod", "va", "-n", scenario.ns)["metadata"].get("deletionTimestamp") is None


def test_statefulset_manifest_goes_where_its_new_claims_can_be_provisioned(cluster, namespace, make_node, tmp_path):
    """A StatefulSet's pod carries its volumeClaimTemplates' claim, which the controller creates
    unbound: its WaitForFirstConsumer class provisions only in one zone, so the scheduler picks a node
    there (it writes it on the claim, ``volume.kubernetes.io/selected-node``), as the preview says,
    although the roomier node is in the other zone."""
    group = namespace[-6:]
    small = make_node(f"za-{group}", cpu="4", zone=f"a-{group}", labels={"pool": namespace})["metadata"]["name"]
    make_node(f"zb-{group}", cpu="32", zone=f"b-{group}", labels={"pool": namespace})
    klass = f"zonal-{group}"
    create(cluster, None, {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": klass},
                           "provisioner": "example.com/never", "volumeBindingMode": "WaitForFirstConsumer",
                           "allowedTopologies": [{"matchLabelExpressions": [
                               {"key": "topology.kubernetes.io/zone", "values": [f"a-{group}"]}]}]})
    try:
        labels = {"app": "db"}
        sts = {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db", "namespace": namespace},
               "spec": {"replicas": 1, "serviceName": "db", "selector": {"matchLabels": labels},
                        "template": {"metadata": {"labels": labels},
                                     "spec": pod("db", labels, node_selector={"pool": namespace},
                                                 requests={"cpu": "1"})["spec"]},
                        "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {
                            "accessModes": ["ReadWriteOnce"], "storageClassName": klass,
                            "resources": {"requests": {"storage": "1Gi"}}}}]}}
        path = tmp_path / "sts.json"
        path.write_text(json.dumps(sts))
        code, out, err = run_cli(["preemption", "-f", str(path), "-n", namespace, "-o", "json",
                                  "--kubeconfig", str(cluster.kubeconfig)])
        report = json.loads(out)
        assert (code, report["outcome"], report["node"]) == (0, "fits", small), (err, report)
        create(cluster, namespace, sts)
        def selected_node():
            claims = [c for c in get_json(cluster, "pvc", "-n", namespace)["items"]
                      if c["metadata"]["name"] == "data-db-0"]
            return claims and (claims[0]["metadata"].get("annotations") or {}).get("volume.kubernetes.io/selected-node")

        selected = wait_until(selected_node, 60, "the scheduler to select a node for the claim")
        assert selected == small
    finally:
        cluster.kubectl("delete", "storageclass", klass, "--wait=false", check=False)
