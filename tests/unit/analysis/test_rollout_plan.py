"""The rollout planner on snapshots: batch sizes, the order of nodes and zones, per-batch drain plans
on the state each batch meets (pre-cordon), the blocked batch, resume."""

import pytest

from kubectl_safety.analysis.drain import DrainOptions
from kubectl_safety.analysis.rollout_plan import BadMaxUnavailable, RolloutOptions, batch_size, order_batches
from tests.builders import NOW, make_node, make_pdb, make_pod, make_workload, snapshot, web
from tests.published import plan_rollout

POOL = [make_node(f"{z}{i}", zone=f"zone-{z}", cpu="2") for z in "abc" for i in (1, 2)]
SPARE = [make_node(f"spare-{z}", zone=f"zone-{z}", cpu="2", labels={"spare": "yes"}) for z in "abc"]
NAMES = [n["metadata"]["name"] for n in POOL]


def plan(*objects, nodes=NAMES, **options):
    drain = DrainOptions(**options.pop("drain", {}))
    return plan_rollout(snapshot(*objects), nodes, RolloutOptions(drain=drain, **options), NOW)


@pytest.mark.parametrize("text, pool, size", [
    ("1", 6, 1), ("2", 6, 2), ("50%", 6, 3), ("10%", 6, 1), ("100%", 4, 4), ("33%", 10, 3),
])
def test_batch_size(text, pool, size):
    assert batch_size(text, pool) == size


@pytest.mark.parametrize("text", ["0", "-1", "x", "0%", "150%", "1.5"])
def test_batch_size_rejects(text):
    with pytest.raises(BadMaxUnavailable):
        batch_size(text, 6)


@pytest.mark.parametrize("by_zone, size, expected", [
    (False, 1, [["a1"], ["b1"], ["c1"], ["a2"], ["b2"], ["c2"]]),  # zones take turns
    (False, 3, [["a1", "b1", "c1"], ["a2", "b2", "c2"]]),  # a batch spans zones rather than emptying one
    (True, 2, [["a1", "a2"], ["b1", "b2"], ["c1", "c2"]]),  # one zone at a time
    (True, 4, [["a1", "a2"], ["b1", "b2"], ["c1", "c2"]]),  # never two zones in a batch
])
def test_order_of_batches(by_zone, size, expected):
    assert order_batches(snapshot(*POOL), NAMES, size, by_zone) == expected


def test_nodes_whose_pods_a_budget_holds_go_last_in_their_zone():
    objects = [*POOL, web("w1", "a1"), web("w2", "a1"), make_pdb("web", selector={"app": "web"}, min_available=1,
                                                               allowed=1, healthy=2, desired=1, expected=2)]
    batches = order_batches(snapshot(*objects), NAMES, 1, True)
    assert batches[:2] == [["a2"], ["a1"]]


EVERYWHERE = [web(f"w-{n}", n) for n in NAMES]  # a pod on every node of the pool


def test_pre_cordoned_pool_sends_the_first_batch_to_spare_nodes():
    report = plan(*POOL, *SPARE, *EVERYWHERE)
    assert report["safe"] and report["stopsAtBatch"] is None
    first = report["batches"][0]
    assert first["nodes"] == ["a1"] and first["drain"]["pods"][0]["replacementNode"].startswith("spare-")
    assert first["capacity"]["schedulableNodes"] == 3  # the spares: the rest of the pool is cordoned


def test_without_spares_a_pre_cordoned_pool_has_nowhere_to_go_and_says_which_batch_stops():
    report = plan(*POOL, *EVERYWHERE)
    assert not report["safe"] and report["stopsAtBatch"] == 1
    stop = report["batches"][0]
    assert stop["nodes"] == ["a1"] and stop["blockedNodes"] == ["a1"] and not stop["safe"]
    assert {r["code"] for r in report["risks"]} == {"REPLACEMENT_UNPLACEABLE"}
    assert all(r["batch"] == 1 for r in report["risks"])  # later batches meet earlier nodes back
    relaxed = plan(*POOL, *EVERYWHERE, precordon=False)  # the rest of the pool takes it
    assert relaxed["safe"]


def test_earlier_batches_are_back_for_later_ones():
    report = plan(*POOL, web("w1", "c2"), max_unavailable="3")  # c2 is in batch 2: batch 1's nodes are back
    assert report["safe"] and report["batches"][1]["drain"]["pods"][0]["replacementNode"] in ("a1", "b1", "c1")


def test_a_budget_that_never_allows_blocks_its_batch():
    objects = [*POOL, *SPARE, web("w1", "a2"), make_pdb("web", selector={"app": "web"}, min_available=1,
                                                        allowed=0, healthy=1, desired=1, expected=1)]
    report = plan(*objects)
    assert not report["safe"] and report["batches"][report["stopsAtBatch"] - 1]["nodes"] == ["a2"]
    assert "PDB_NEVER_ALLOWS" in {r["code"] for r in report["risks"]}
    accepted = plan(*objects, drain={"accept_risks": frozenset({"PDB_NEVER_ALLOWS"})})
    assert accepted["safe"]


def test_resume_plans_only_the_nodes_not_done():
    report = plan(*POOL, *SPARE, done=frozenset({"a1", "b1"}))
    assert report["done"] == ["a1", "b1"]
    assert [n for b in report["batches"] for n in b["nodes"]] == ["a2", "b2", "c1", "c2"]


def test_estimates_add_up_with_maintenance():
    report = plan(*POOL, *SPARE, web("w1", "a1"), maintenance=True)
    assert report["estimatedSeconds"] == sum(b["estimatedSeconds"] for b in report["batches"])
    assert all(b["estimatedSeconds"] >= 70 for b in report["batches"])  # 60 s maintenance + 10 s gate


def test_rollout_cordon_adds_the_unschedulable_taint():
    """A later batch's pre-cordoned node carries node.kubernetes.io/unschedulable:NoSchedule, as a real
    cordon leaves it (the node lifecycle controller taints unschedulable nodes): a spread constraint with
    nodeTaintsPolicy: Honor leaves that node's zone out of its domains, so the replacement fits."""
    spread = [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "DoNotSchedule",
               "labelSelector": {"matchLabels": {"app": "web"}}, "nodeTaintsPolicy": "Honor"}]
    nodes = [make_node("a1", zone="zone-a"), make_node("b1", zone="zone-b"),
             make_node("spare-a", zone="zone-a", labels={"spare": "yes"})]
    pods = [web("w1", "a1", topologySpreadConstraints=spread), web("w0", "spare-a", topologySpreadConstraints=spread)]
    report = plan(*nodes, *pods, nodes=["a1", "b1"], max_unavailable="1")
    assert report["batches"][0]["nodes"] == ["a1"]
    assert report["safe"] and report["stopsAtBatch"] is None


@pytest.mark.parametrize("scenario, on_node, needed", [
    ("a DaemonSet pod stays: a batch moving nothing needs nothing",
     [make_pod("ds-a1", node="a1", cpu="100m", owner=("DaemonSet", "ds"))], 0),
    ("only the pods the drain moves count", [make_pod("ds-a1", node="a1", cpu="100m", owner=("DaemonSet", "ds")),
                                             web("web-a1", "a1")], 100),
    ("a finished pod stays", [web("done-a1", "a1", phase="Succeeded"), web("web-a1", "a1")], 100),
])
def test_rollout_needed_counts_only_the_pods_the_drain_moves(scenario, on_node, needed):
    r = plan(*POOL, *SPARE, make_workload("DaemonSet", "ds"), *on_node, nodes=["a1"],
             drain={"ignore_daemonsets": True})
    assert r["batches"][0]["capacity"]["cpuNeeded"] == needed, scenario
