"""A node's heartbeat: its Lease's renewTime, as the node lifecycle controller reads it; without the
Lease (a dump that has none), the Ready condition's lastHeartbeatTime, and the message says which."""

import pytest

from kubectl_safety.analysis.explain import explain_node
from tests.builders import NOW, make_node, snapshot


def lease(name, renewed, namespace="kube-node-lease"):
    return {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": name, "namespace": namespace},
            "spec": {"holderIdentity": name, "leaseDurationSeconds": 40, "renewTime": renewed}}


CONDITION_106S = "2026-11-22T08:58:14Z"  # the kubelet updates it when the status changes, else every 5 minutes


@pytest.mark.parametrize("scenario, leases, age, message", [
    ("the node's Lease, renewed 4 s ago", [lease("n1", "2026-11-22T08:59:56.000000Z")], 4,
     "Ready, heartbeat 4s ago (node Lease)"),
    ("no Lease in the dump: the Ready condition's", [], 106, "Ready, heartbeat 106s ago (Ready condition)"),
    ("a Lease of that name elsewhere is not the node's", [lease("n1", "2026-11-22T08:59:56Z", namespace="default")],
     106, "Ready, heartbeat 106s ago (Ready condition)"),
    ("another node's Lease", [lease("n2", "2026-11-22T08:59:56Z")], 106, "Ready, heartbeat 106s ago (Ready condition)"),
])
def test_a_ready_node_s_heartbeat_is_its_lease_renewal(scenario, leases, age, message):
    snap = snapshot(make_node("n1", heartbeat=CONDITION_106S), make_node("n2"), *leases)
    state = explain_node(snap.node("n1"), snap, NOW).state
    assert (state.heartbeat_age_seconds, state.message) == (age, message), scenario
