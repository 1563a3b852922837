"""A surge an earlier run left (its record on the workload, its taint on the nodes): planned to be
finished by the next drain of those nodes, with or without --surge, and named by ``check``."""

import json

from kubectl_safety.analysis.drain import DrainOptions
from kubectl_safety.analysis.surge import ANNOTATION
from tests.builders import NOW, make_node, make_pod, make_workload, snapshot
from tests.published import plan_drain

APP = {"app": "web"}
CORDON = {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"}


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
