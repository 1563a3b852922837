"""A drain's replacements are the pods their controllers create from their templates
(``GetPodFromTemplate``), not copies of the running pods."""

import pytest

from kubectl_safety.analysis.drain import DrainOptions
from tests.builders import NOW, container, make_node, make_pod, make_workload, snapshot
from tests.published import plan_drain

APP = {"app": "web"}


def replica_set(cpu="500m", **spec):
    template = {"metadata": {"labels": APP},
                "spec": {"containers": [container("web", requests={"cpu": cpu})], **spec}}
    return make_workload("ReplicaSet", "rs", replicas=1, labels=APP, template=template)


def pod(cpu="500m"):
    return make_pod("web-0", node="n1", labels=APP, containers=[container("web", requests={"cpu": cpu})])


CASES = [
    # the template binds its pods to n1: the replacement skips the scheduler and the kubelet of the
    # cordoned n1 admits it, so n1 is not emptied
    ("template-sets-the-drained-node", [make_node("n1"), make_node("n2"), replica_set(nodeName="n1"), pod()],
     (False, ["REPLACEMENT_RETURNS_TO_NODE"], "n1"), "sets nodeName n1"),
    # resized in place to 3 cpu; the template asks 500m, which n2 (1 cpu) holds
    ("resized-pod-replacement-gets-the-template-requests", [make_node("n1"), make_node("n2", cpu="1"),
                                                             replica_set(), pod(cpu="3")],
     (True, [], "n2"), None),
    # the template binds its pods to a node whose kubelet has no room: the replacement fails there
    ("template-sets-a-full-node", [make_node("n1"), make_node("n2", cpu="1"),
                                   replica_set(cpu="2", nodeName="n2"), pod(cpu="2")],
     (False, ["REPLACEMENT_UNPLACEABLE"], None), "sets nodeName n2"),
]


@pytest.mark.parametrize("name, objects, expected, message", CASES, ids=[c[0] for c in CASES])
def test_drain_replacement_is_built_from_the_controllers_template(name, objects, expected, message):
    report = plan_drain(snapshot(*objects), ["n1"], DrainOptions(), NOW)
    entry = report["pods"][0]
    risks = [r["code"] for r in report["risks"]]
    assert (report["safe"], risks, entry.get("replacementNode")) == expected, (report["safe"], risks, entry)
    if message:
        assert message in report["risks"][0]["message"]
    assert "REPLACEMENT_FROM_POD" not in [r["code"] for r in entry["reasons"]]


def test_drain_replacement_falls_back_to_the_pod_when_its_controller_is_not_in_the_snapshot():
    report = plan_drain(snapshot(make_node("n1"), make_node("n2"), pod()), ["n1"], DrainOptions(), NOW)
    reasons = [r["code"] for r in report["pods"][0]["reasons"]]
    assert "REPLACEMENT_FROM_POD" in reasons and report["safe"]
