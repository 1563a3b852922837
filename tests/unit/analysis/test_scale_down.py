"""Which pods a ReplicaSet controller removes first when scaled down: upstream's ActivePodsWithRanks.Less."""

import pytest

from kubectl_safety.analysis.scale_down import ahead_of, deletion_cost, restarts
from kubectl_safety.model.pods import Pod
from tests.builders import NOW, make_pod

OLD, NEWER = "2026-01-01T00:00:00Z", "2026-11-21T00:00:00Z"  # log2 ranks of the time since NOW differ


def pod(name, node="n2", phase="Running", ready=True, cost=None, ready_at=OLD, created=OLD, restarts=0):
    p = make_pod(name, node=node, phase=phase, ready=ready, owner=("ReplicaSet", "web-rs"))
    p["metadata"]["creationTimestamp"] = created
    if cost is not None:
        p["metadata"].setdefault("annotations", {})["controller.kubernetes.io/pod-deletion-cost"] = cost
    p["status"]["conditions"][0]["lastTransitionTime"] = ready_at
    p["status"]["containerStatuses"] = [{"name": "c", "restartCount": restarts}]
    return Pod(p)


MARKED = dict(node="n1", cost="-2147483648")

# (id, the marked pod, a sibling, whether the sibling may go first, its reason)
RANKS = [
    ("unscheduled-sibling-goes-first", pod("old", **MARKED), pod("s", node="", phase="Pending", ready=False),
     True, "not scheduled"),
    ("pending-sibling-goes-first", pod("old", **MARKED), pod("s", phase="Pending", ready=False), True, "Pending"),
    ("unknown-phase-sibling-goes-first", pod("old", **MARKED), pod("s", phase="Unknown"), True, "Unknown"),
    ("not-ready-sibling-goes-first-whatever-its-cost", pod("old", **MARKED), pod("s", ready=False, cost="1000"),
     True, "not Ready"),
    ("ready-sibling-stays-the-lowest-cost-goes", pod("old", **MARKED), pod("s"), False, None),
    ("a-sibling-marked-as-low-goes-alike", pod("old", **MARKED), pod("s", cost="-2147483648"), True,
     "controller.kubernetes.io/pod-deletion-cost -2147483648"),
    ("an-invalid-cost-counts-as-zero", pod("old", **MARKED), pod("s", cost="+5"), False, None),
]


@pytest.mark.parametrize("marked, sibling, first, why", [r[1:] for r in RANKS], ids=[r[0] for r in RANKS])
def test_which_pods_the_controller_removes_before_the_marked_ones(marked, sibling, first, why):
    got = ahead_of([marked], [sibling], [marked, sibling], NOW)
    assert got == ([(sibling, why)] if first else [])


def test_ties_on_cost_are_broken_by_colocated_pods_then_ready_time_then_restarts_then_age():
    a = pod("a", cost="0", node="n1")
    crowded = [pod("x", node="n1"), pod("y", node="n1")]
    alone = pod("b", cost="0", node="n3")
    assert ahead_of([a], [alone], [a, alone, *crowded], NOW) == []  # a shares its node: it goes first
    recent = pod("r", ready_at=NEWER)
    assert ahead_of([pod("o")], [recent], [], NOW) != []  # Ready more recently (another log2 rank): first
    assert ahead_of([pod("o", ready_at=NEWER)], [pod("s")], [], NOW) == []
    assert ahead_of([pod("o", restarts=3)], [pod("s", restarts=1)], [], NOW) == []
    assert ahead_of([pod("o", created=NEWER)], [pod("s")], [], NOW) == []


def test_deletion_cost_and_restarts_are_read_as_upstream():
    assert [deletion_cost(pod("p", cost=c)) for c in ("-5", "008", "2147483648", "x", None)] == [-5, 0, 0, 0, 0]
    raw = pod("p", restarts=2).raw
    raw["spec"]["initContainers"] = [{"name": "side", "restartPolicy": "Always"}, {"name": "init"}]
    raw["status"]["initContainerStatuses"] = [{"name": "side", "restartCount": 4}, {"name": "init", "restartCount": 9}]
    assert restarts(Pod(raw)) == (2, 4)
