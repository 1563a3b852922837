"""rebalance follows drain's SAFE contract: the same risk codes, ``safe``, --accept-risk, exit 3."""

import json

from kubectl_safety.analysis.rebalance import RebalanceOptions, find_workloads
from kubectl_safety.cli.risks import accepted_risks
from tests.builders import NOW, make_node, make_pdb, make_pod, make_workload, snapshot
from tests.published import plan_rebalance
from tests.unit.cli_helpers import run_cli

ZONE = "topology.kubernetes.io/zone"
LABELS = {"app": "web", "pod-template-hash": "abc"}
SPREAD = [{"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule",
           "labelSelector": {"matchLabels": {"app": "web"}}}]


def skewed(ready="True"):
    """Three web pods on a1 (zone a, Ready ``ready``), none in zone b."""
    dep = make_workload("Deployment", "web", replicas=3, labels={"app": "web"})
    return ([make_node("a1", zone="a", ready=ready, heartbeat="2026-11-22T08:40:00Z"), make_node("b1", zone="b"), dep,
             make_workload("ReplicaSet", "web-abc", replicas=3, labels=LABELS, owner=dep)]
            + [make_pod(f"web-{i}", node="a1", labels=LABELS, owner=("ReplicaSet", "web-abc"), cpu="100m",
                        topologySpreadConstraints=SPREAD) for i in range(3)])


def plan(objects, **options):
    snap = snapshot(*objects)
    return plan_rebalance(snap, find_workloads(snap, "default"), RebalanceOptions(**options), NOW)


def test_evicting_from_an_unreachable_node_is_a_risk():
    report = plan(skewed(ready="Unknown"))
    assert report["evictions"] and report["safe"] is False
    [risk] = report["risks"]
    assert risk["code"] == "NODE_UNREACHABLE" and {"kind": "Node", "namespace": "", "name": "a1"} in risk["objects"]
    accepted = plan(skewed(ready="Unknown"), accept_risks=accepted_risks(["unreachable"]))
    assert accepted["safe"] is True and accepted["risks"][0]["accepted"] is True


def test_a_ready_cluster_is_safe():
    report = plan(skewed())
    assert report["evictions"] and report["safe"] is True and report["risks"] == []


def test_cli_exit_code_and_accept_risk(tmp_path):
    dump = tmp_path / "cluster.json"
    budget = make_pdb("other", selector={"app": "other"}, max_unavailable=1, allowed=1)  # a dump that holds PDBs
    dump.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": skewed(ready="Unknown") + [budget]}))
    base = ["rebalance", "deployment/web", "-n", "default", "--dry-run", "--snapshot", str(dump),
            "--as-of", "2026-11-22T09:00:00Z", "-o", "json"]
    code, out, err = run_cli(base)
    assert code == 3 and json.loads(out)["safe"] is False, err
    code, out, err = run_cli(base + ["--accept-risk=NODE_UNREACHABLE"])
    assert code == 0 and json.loads(out)["safe"] is True, err
    code, _, err = run_cli(base + ["--accept-risk=nonsense"])
    assert code == 2 and "unknown risk" in err
