"""What finishes a deletion, against upstream's pod GC: one pass of its gc (pkg/controller/podgc)
over generated nodes and pods versus ``deletion.pod_gc_force_deletes``.

Nodes Ready, NotReady or Unknown, with or without the out-of-service taint (either effect, any
value); pods running or terminating, with or without finalizers, some already terminal. A pod is
force-deleted by the GC exactly when our rule says its node lets the GC do it and it is terminating.
"""

from hypothesis import given
from hypothesis import strategies as st

from kubectl_safety.analysis.deletion import pod_gc_force_deletes
from kubectl_safety.analysis.node_health import node_health
from tests.builders import NOW, make_node, make_pod, snapshot
from tests.differential.conftest import PROPERTY, count, tally

OUT_OF_SERVICE = "node.kubernetes.io/out-of-service"


@st.composite
def cluster(draw):
    nodes = []
    for i in range(draw(st.integers(1, 3))):
        taints = []
        if draw(st.booleans()):
            taints.append({"key": OUT_OF_SERVICE, "value": draw(st.sampled_from(["nodeshutdown", "x", ""])),
                           "effect": draw(st.sampled_from(["NoExecute", "NoSchedule"]))})
        nodes.append(make_node(f"n{i}", ready=draw(st.sampled_from(["True", "False", "Unknown"])), taints=taints))
    pods = []
    for i in range(draw(st.integers(1, 5))):
        meta = {}
        if draw(st.booleans()):
            meta["deletionTimestamp"] = "2026-11-22T08:59:00Z"
            meta["deletionGracePeriodSeconds"] = 30
        if draw(st.integers(0, 3)) == 0:
            meta["finalizers"] = ["example.com/hold"]
        pods.append(make_pod(f"p{i}", node=draw(st.sampled_from([n["metadata"]["name"] for n in nodes])), meta=meta,
                             phase=draw(st.sampled_from(["Running", "Running", "Succeeded", "Failed"]))))
    return nodes, pods


@PROPERTY
@given(case=cluster())
def test_pod_gc_out_of_service(oracle, case):
    """The pods one GC pass force-deletes are the terminating pods on nodes our rule names."""
    count("test_pod_gc_out_of_service")
    nodes, pods = case
    theirs = set(oracle.ask("podGC", nodes=nodes, pods=pods, terminatedPodThreshold=0)["forceDeleted"])
    snap = snapshot(*nodes, *pods, now=NOW)
    ours = {f"{p.namespace}/{p.name}" for p in snap.pods
            if p.is_terminating and pod_gc_force_deletes(snap.node(p.node_name), node_health(snap.node(p.node_name), NOW))}
    assert ours == theirs
    tally("test_pod_gc_out_of_service", "some force-deleted" if theirs else "none")
