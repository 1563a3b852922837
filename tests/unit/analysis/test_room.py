"""Room's shortcut for the node filters: an open node admits any pod without node rules."""

import pytest

from kubectl_safety.analysis.drain import PodIndex
from kubectl_safety.analysis.room import Room
from kubectl_safety.analysis.scheduling.plugins import node_failures
from kubectl_safety.analysis.scheduling.replacement import unscheduled_copy
from tests.builders import make_node, make_pod, snapshot

NODES = [make_node("open"), make_node("tainted", taints=[{"key": "gpu", "effect": "NoSchedule"}]),
         make_node("cordoned", unschedulable=True), make_node("not-ready", ready="False"),
         make_node("labelled", labels={"disk": "ssd"})]
PODS = [make_pod("plain", node="open"), make_pod("selector", node="open", nodeSelector={"disk": "ssd"}),
        make_pod("tolerant", tolerations=[{"operator": "Exists"}]),
        make_pod("gated", schedulingGates=[{"name": "wait"}]),
        make_pod("affinity", affinity={"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [{"key": "disk", "operator": "In", "values": ["ssd"]}]}]}}})]


@pytest.mark.parametrize("pod", [p["metadata"]["name"] for p in PODS])
def test_room_admits_a_replacement_where_the_node_filters_do(pod):
    snap = snapshot(*NODES, *PODS)
    room = Room(snap, PodIndex(snap))
    p = snap.pod("default", pod)
    for node in snap.nodes:
        assert room._admits(p, node) == (not node_failures(unscheduled_copy(p), node)), node.name
