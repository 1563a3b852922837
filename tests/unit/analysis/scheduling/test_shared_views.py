"""Drained views of one snapshot (``capacity.SharedBase.view``) filter pods as a snapshot rebuilt
without the leaving pods does: shared node states, seeded PreFilter states (``filters`` public API)."""

import pytest

from kubectl_safety.analysis.capacity import SharedBase
from kubectl_safety.analysis.scheduling.filters import filter_node
from kubectl_safety.analysis.scheduling.node_state import NodeState
from kubectl_safety.analysis.scheduling.prefilter import prefilter_state, seed_prefilter
from kubectl_safety.analysis.scheduling.replacement import cordoned, unscheduled_copy
from tests.builders import make_node, make_pod, snapshot, spread

ZONE = "topology.kubernetes.io/zone"


def anti(app, key=ZONE):
    return {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": app}}, "topologyKey": key}]}}


def nodes():
    return [make_node(f"n{i}", cpu="2", zone=f"z{i % 2}") for i in range(4)]


def spread_leaves():
    """Two web pods in z1 (n1, n3), none in z0: the skew forbids z1 until n1's leaves."""
    return [*nodes(), make_pod("web-1", node="n1", cpu="100m", labels={"app": "web"}, topologySpreadConstraints=[spread("web")]),
            make_pod("web-3", node="n3", cpu="100m", labels={"app": "web"}, topologySpreadConstraints=[spread("web")]),
            make_pod("web-0", node="n0", cpu="100m", labels={"app": "web"}, topologySpreadConstraints=[spread("web")])], "web-0"


def repelled_pod_leaves():
    """The incoming pod repels app=db, which runs on n1 only (zone z1)."""
    return [*nodes(), make_pod("db", node="n1", cpu="100m", labels={"app": "db"}),
            make_pod("api", node="n2", cpu="100m", labels={"app": "api"}, affinity=anti("db"))], "api"


def repelling_pod_leaves():
    """A pod on n1 repels app=api from zone z1 (an existing pod's anti-affinity)."""
    return [*nodes(), make_pod("guard", node="n1", cpu="100m", labels={"app": "guard"}, affinity=anti("api")),
            make_pod("api", node="n2", cpu="100m", labels={"app": "api"})], "api"


def full_node_empties():
    """n1 is full until its pod leaves (node states: the drained node's, the others' shared)."""
    return [*nodes(), make_pod("big", node="n1", cpu="1900m", labels={"app": "big"}),
            make_pod("mid", node="n0", cpu="1500m", labels={"app": "mid"},
                     tolerations=[{"key": "node.kubernetes.io/unschedulable", "operator": "Exists"}])], "mid"


def cordon_changes_domains():
    """nodeTaintsPolicy Honor: cordoning n1 takes it out of the spread's domains."""
    constraint = [spread("web", nodeTaintsPolicy="Honor")]
    return [*nodes(), make_pod("web-1", node="n1", cpu="100m", labels={"app": "web"}, topologySpreadConstraints=constraint),
            make_pod("web-0", node="n0", cpu="100m", labels={"app": "web"}, topologySpreadConstraints=constraint)], "web-0"


@pytest.mark.parametrize("scenario, seeded", [(spread_leaves, True), (repelled_pod_leaves, True),
                                              (repelling_pod_leaves, True), (full_node_empties, True),
                                              (cordon_changes_domains, False)])
def test_a_drained_view_filters_as_the_cluster_rebuilt_without_the_leaving_pods(scenario, seeded):
    objects, incoming = scenario()
    snap = snapshot(*objects)
    leaving = {p.key for p in snap.pods_on("n1")}
    rebuilt = snap.replace(nodes=[cordoned(n) if n.name == "n1" else n for n in snap.nodes],
                           pods=[p for p in snap.pods if p.key not in leaving])
    base = SharedBase(snap)
    view, in_order = base.view({"n1"}, leaving)
    pod = snap.pod("default", incoming)
    new, fresh = unscheduled_copy(pod), unscheduled_copy(pod)
    for n in snap.nodes:  # the parent's states exist before the view asks for them
        NodeState.from_snapshot(n, snap)
    assert seed_prefilter(new, view, prefilter_state(new, snap), view.removed) is seeded
    before = {n.name: [f.message for f in filter_node(unscheduled_copy(pod), n, snap)] for n in snap.nodes}
    after = {n.name: [f.message for f in filter_node(fresh, n, rebuilt)] for n in rebuilt.nodes}
    assert {n.name: [f.message for f in filter_node(new, n, view)] for n in in_order} == after
    assert before != after  # the leaving pods matter: a view that kept them would fail above
