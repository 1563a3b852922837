"""A surge an earlier run left (its record on the workload, its taint on the nodes): planned to be
finished by the next drain of those nodes, with or without --surge, and named by ``check``."""

import json

import pytest

from kubectl_safety.analysis.drain import DrainOptions
from kubectl_safety.analysis.surge import ANNOTATION, TAINT
from tests.builders import NOW, make_node, make_pdb, make_pod, make_workload, snapshot
from tests.published import check, plan_drain

APP = {"app": "web"}
CORDON = {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"}
RECORD = {"replicas": 3, "to": 4, "nodes": ["n1"]}


def left_surge(n1_taints=None):
    """web surged 3 -> 4 by a drain of n1 that did not finish: its old pod on n1, three on n2, and a
    PDB that refuses the old pod's eviction without the surge (minAvailable 4 of 4)."""
    d = make_workload("Deployment", "web", replicas=4, labels=APP)
    d["metadata"].update(generation=1, annotations={ANNOTATION: json.dumps(RECORD)})
    d["status"] = {"observedGeneration": 1, "replicas": 4, "updatedReplicas": 4, "readyReplicas": 4}
    rs = make_workload("ReplicaSet", "web-rs", replicas=4, labels=APP, owner=("Deployment", "web"))
    rs["status"] = {"replicas": 4, "readyReplicas": 4}
    pods = [make_pod(name, node=node, labels=APP, cpu="100m", owner=("ReplicaSet", "web-rs"))
            for name, node in (("a", "n1"), ("b", "n2"), ("c", "n2"), ("d", "n2"))]
    return [make_node("n1", taints=n1_taints), make_node("n2"), make_node("n3"), d, rs, *pods,
            make_pdb("web", selector=APP, min_available=4, allowed=0, healthy=4, desired=4, expected=4)]


@pytest.mark.parametrize("surge", [False, True], ids=["without-surge", "with-surge"])
def test_a_drain_of_the_nodes_of_a_left_surge_finishes_it(surge):
    plan = plan_drain(snapshot(*left_surge()), ["n1"], DrainOptions(surge=surge), NOW)
    assert plan["safe"], plan["risks"]
    assert [(w["from"], w["to"], w["resumed"]) for w in plan["surge"]["workloads"]] == [(3, 4, True)]
    assert [p["action"] for p in plan["pods"]] == ["evict"]


def test_a_drain_of_other_nodes_does_not_finish_a_left_surge():
    plan = plan_drain(snapshot(*left_surge()), ["n3"], DrainOptions(), NOW)
    assert "surge" not in plan


def test_a_resumed_surge_of_a_pod_tolerating_the_cordon_is_not_refused_as_returning_to_the_node():
    """One replica surged 1 -> 2, its surge pod Ready on n2, the old one on n1 tolerating the cordon (n1
    scores best for its replacement): the drained nodes are tainted again before the resumed surge
    waits, so no replacement comes back."""
    d = make_workload("Deployment", "web", replicas=2, labels=APP)
    d["metadata"].update(generation=1, annotations={ANNOTATION: json.dumps({"replicas": 1, "to": 2,
                                                                             "nodes": ["n1"]})})
    d["status"] = {"observedGeneration": 1, "replicas": 2, "updatedReplicas": 2, "readyReplicas": 2}
    rs = make_workload("ReplicaSet", "web-rs", replicas=2, labels=APP, owner=("Deployment", "web"))
    old, new = (make_pod(name, node=node, labels=APP, cpu="100m", owner=("ReplicaSet", "web-rs"))
                for name, node in (("a", "n1"), ("b", "n2")))
    old["spec"]["tolerations"] = [CORDON]
    plan = plan_drain(snapshot(make_node("n1"), make_node("n2"), d, rs, old, new), ["n1"],
                      DrainOptions(surge=True), NOW)
    assert plan["safe"], plan["risks"]
    assert "REPLACEMENT_RETURNS_TO_NODE" not in {r["code"] for r in plan["risks"]}


SURGE_TAINT = [{"key": TAINT, "effect": "NoSchedule"}]


@pytest.mark.parametrize("objects, messages", [
    ("record-and-taint", ["Deployment default/web was surged from 3 to 4 replicas by a drain of n1 that did not "
                          f"finish: run it again (the same command) to finish and restore the count and lift the "
                          f"taint {TAINT}:NoSchedule from n1",
                          f"node n1 carries the taint {TAINT}:NoSchedule of a --surge drain that did not finish (no "
                          "pod starts there; `kubectl uncordon` does not lift it): run the same drain again to finish "
                          f"the surge and lift it, or lift it with `kubectl taint node n1 {TAINT}:NoSchedule-`"]),
    ("taint-alone", [f"node n3 carries the taint {TAINT}:NoSchedule of a --surge drain that did not finish (no pod "
                     "starts there; `kubectl uncordon` does not lift it): run the same drain again to finish the "
                     f"surge and lift it, or lift it with `kubectl taint node n3 {TAINT}:NoSchedule-`"]),
], ids=["record-and-taint", "taint-alone"])
def test_check_names_a_surge_left_and_its_taint_with_how_to_clear_them(objects, messages):
    if objects == "record-and-taint":
        objs = left_surge(n1_taints=SURGE_TAINT)
    else:
        objs = [make_node("n1"), make_node("n2"), make_node("n3", taints=SURGE_TAINT)]
    found = [f["message"] for f in check(snapshot(*objs), None, NOW)["findings"] if f["code"] == "SURGE_LEFT"]
    assert found == messages
