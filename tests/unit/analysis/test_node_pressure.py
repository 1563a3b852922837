"""oom_score_adj and the kubelet memory-pressure eviction order."""

import pytest

from kubectl_safety.analysis.node_pressure import memory_pressure_order, oom_scores
from kubectl_safety.model.nodes import Node
from kubectl_safety.model.pods import Pod
from tests.builders import container, make_node, make_pod, snapshot

NODE = make_node("n1", memory="10000")


@pytest.mark.parametrize("containers,kwargs,expected", [
    ([container("c", {"cpu": "1", "memory": "1000"}, {"cpu": "1", "memory": "1000"})], {}, -997),
    ([container("c")], {}, 1000),
    ([container("c", {"memory": "1000"}, {"memory": "2000"})], {}, 900),
    ([container("c", {"memory": "9990"})], {}, 3),
    ([container("c", {"cpu": "100m"})], {}, 999),
    ([container("c", {"memory": "1"})], dict(priority=2000001000, priority_class="system-node-critical", meta={"annotations": {"kubernetes.io/config.mirror": "x"}}), -997),
], ids=["guaranteed", "best effort", "burstable 10% request", "burstable floor 3", "no memory request 999", "node critical"])
def test_oom_score_adj(containers, kwargs, expected):
    pod = Pod(make_pod("p", containers=containers, **kwargs))
    assert oom_scores(pod, Node(NODE)).max == expected


def test_memory_pressure_order_usage_before_priority():
    snap = snapshot(NODE,
                    make_pod("high-over", containers=[container("c", {"memory": "100"})], priority=1000),
                    make_pod("low-within", containers=[container("c", {"memory": "100"})], priority=1),
                    make_pod("critical", containers=[container("c")], priority=2000000000))
    usage = {("default", "high-over"): 500, ("default", "low-within"): 50, ("default", "critical"): 900}
    order = [r["pod"].name for r in memory_pressure_order(snap.pods, snap, usage)]
    assert order == ["high-over", "low-within", "critical"]


def test_unknown_usage_assumes_request_and_ranks_best_effort_first():
    snap = snapshot(NODE,
                    make_pod("guaranteed-low", containers=[container("c", {"memory": "100"}, {"memory": "100"})], priority=0),
                    make_pod("besteffort-high", containers=[container("c")], priority=1000))
    rows = memory_pressure_order(snap.pods, snap)
    assert [r["pod"].name for r in rows] == ["besteffort-high", "guaranteed-low"]
    assert "assumed" in rows[1]["reason"]


SIDECAR_POD = dict(containers=[container("app", {"memory": "1000"})],
                   initContainers=[container("init", {"memory": "4000"}),
                                   container("proxy", {"memory": "500"}, restartPolicy="Always")])


def test_memory_pressure_rank_counts_init_containers_sidecars_and_overhead():
    """GetResourceRequestQuantity: max(init peak, containers + sidecars) plus overhead."""
    snap = snapshot(NODE, make_pod("side", overhead={"memory": "100"}, priority=0, **SIDECAR_POD))
    assert memory_pressure_order(snap.pods, snap, {("default", "side"): 4200})[0]["memoryRequest"] == 4100  # init 4000 runs before the sidecar starts


def test_memory_pressure_rank_uses_pod_level_resources():
    snap = snapshot(NODE, make_pod("level", containers=[container("c", {"memory": "100"})],
                                   resources={"requests": {"memory": "3000"}}, priority=0))
    row = memory_pressure_order(snap.pods, snap, {("default", "level"): 2000})[0]
    assert (row["memoryRequest"], row["exceedsRequest"]) == (3000, False)


def test_memory_pressure_rank_pods_without_usage_statistics_first():
    snap = snapshot(NODE, make_pod("over", containers=[container("c")], priority=0),
                    make_pod("no-stats", containers=[container("c", {"memory": "100"})], priority=1000))
    order = [r["pod"].name for r in memory_pressure_order(snap.pods, snap, {("default", "over"): 900})]
    assert order == ["no-stats", "over"]


def test_oom_score_adj_spreads_pod_level_memory_over_init_containers_and_sidecars():
    """remainingPodMemReqPerContainer: (pod request - effective container request) / all containers."""
    pod = Pod(make_pod("p", containers=[container("app", {"memory": "1000"})],
                       initContainers=[container("proxy", {"memory": "1000"}, restartPolicy="Always")],
                       resources={"requests": {"memory": "6000"}}))
    # spare (6000 - 2000) / 2 containers = 2000 each: 1000 - 1000 * 3000 / 10000 = 700
    assert {c.name: c.oom_score_adj for c in oom_scores(pod, Node(NODE)).containers} == {"proxy": 700, "app": 700}
