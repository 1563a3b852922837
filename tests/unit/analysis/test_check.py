"""``check``: every node's drain verdict, as `drain NODE --dry-run` alone, and the findings."""

import json

import pytest

from kubectl_safety.analysis.budgets import budget
from kubectl_safety.analysis.check import CheckOptions, runbook_drain_options
from kubectl_safety.analysis.drain import DrainOptions, SharedPlanning
from kubectl_safety.cluster.source import load_snapshot
from kubectl_safety.model.meta import parse_time
from tests.builders import make_class, make_node, make_pdb, make_pod, make_workload, snapshot, spread
from tests.unit.cli_helpers import DEMO, DEMO_NOW
from tests.published import check, plan_drain

ZONE = "topology.kubernetes.io/zone"


@pytest.fixture(scope="module")
def demo():
    snap = load_snapshot(snapshot_paths=[DEMO], now=parse_time(DEMO_NOW))
    return snap, check(snap, CheckOptions(), snap.taken_at)


def node(report, name):
    return next(n for n in report["nodes"] if n["name"] == name)


def codes(report) -> set:
    return {f["code"] for f in report["findings"]}


def found(report, code) -> list:
    return [f for f in report["findings"] if f["code"] == code]


# -- the demo dump (the proof) ---------------------------------------------------------------
def test_demo_node_a2_is_not_drainable_because_of_pdb_shop_db(demo):
    _, report = demo
    a2 = node(report, "node-a2")
    assert a2["drainable"] is False
    assert [r["code"] for r in a2["risks"]] == ["PDB_NEVER_ALLOWS"]
    assert {"kind": "PodDisruptionBudget", "namespace": "shop", "name": "db"} in a2["risks"][0]["objects"]
    top = report["blockers"][0]
    assert top["object"] == {"kind": "PodDisruptionBudget", "namespace": "shop", "name": "db"}
    assert "node-a2" in top["nodes"] and top["blocks"] == len(top["nodes"]) >= 2


def test_demo_pdb_shop_all_selects_nothing(demo):
    _, report = demo
    [f] = found(report, "PDB_SELECTS_NOTHING")
    assert f["objects"] == [{"kind": "PodDisruptionBudget", "namespace": "shop", "name": "shop-all"}]
    assert f["severity"] == "warning"


def test_demo_node_d1_is_unreachable_with_its_pods_named(demo):
    _, report = demo
    d1 = node(report, "node-d1")
    assert d1["state"] == "Unknown" and d1["drainable"] is False
    stuck = {f"{p['namespace']}/{p['name']}": p for p in d1["stuckPods"]}
    assert set(stuck) == {"shop/legacy-0", "monitoring/node-exporter-d1"}
    assert all(p["forceNeeded"] and "NODE_PARTITIONED" in p["risks"] for p in stuck.values())
    [f] = found(report, "NODE_UNREACHABLE")
    assert f["severity"] == "error"
    assert {"kind": "Pod", "namespace": "shop", "name": "legacy-0"} in f["objects"]


def test_demo_node_a1_is_drainable(demo):
    _, report = demo
    a1 = node(report, "node-a1")
    assert (a1["drainable"], a1["removable"], a1["risks"]) == (True, True, [])


def test_demo_every_node_says_what_drain_says_for_it_alone(demo):
    snap, report = demo
    for entry in report["nodes"]:
        plan = plan_drain(snap, [entry["name"]], runbook_drain_options(), snap.taken_at)
        assert (entry["drainable"], entry["risks"]) == (plan["safe"], plan["risks"]), entry["name"]


def test_demo_summary_and_shape(demo):
    _, report = demo
    assert report["kind"] == "ClusterCheck"
    s = report["summary"]
    assert (s["nodes"], s["drainable"], s["unreachable"], s["ready"]) == (7, 3, 1, False)
    assert all({"name", "drainable", "risks"} <= set(n) for n in report["nodes"])
    assert all({"code", "severity", "objects"} <= set(f) for f in report["findings"])
    assert all(f["code"].isupper() and f["severity"] in ("error", "warning", "info") for f in report["findings"])
    blocks = [b["blocks"] for b in report["blockers"]]
    assert blocks == sorted(blocks, reverse=True)


def test_node_selector_checks_only_the_matching_nodes(demo):
    from kubectl_safety.model.selectors import LabelSelector

    snap, _ = demo
    report = check(snap, CheckOptions(node_selector=LabelSelector.from_string(f"{ZONE}=eu-west-1a")), snap.taken_at)
    assert [n["name"] for n in report["nodes"]] == ["node-a1", "node-a2"]


# -- the shared precomputation gives the plans drain makes alone ---------------------------------------
def anti(app, key):
    return {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": app}}, "topologyKey": key}]}}


def busy_cluster():
    """Zones, hostname and zone spread, required anti-affinity, full nodes, a cordoned node."""
    objects = [make_node(f"n{i}", cpu="2", zone=f"z{i % 3}", unschedulable=(i == 7),
                         labels={"tier": "solo"} if i in (1, 4) else None) for i in range(9)]
    # Draining n1 lifts guard's zone anti-affinity from z1: solo's replacement (placed first) may go to n4.
    objects.append(make_pod("guard", node="n1", cpu="100m", labels={"app": "guard"}, owner=("ReplicaSet", "guard"),
                            affinity=anti("solo", ZONE), nodeSelector={ZONE: "z0"}))
    objects.append(make_pod("solo", node="n1", cpu="150m", labels={"app": "solo"}, owner=("ReplicaSet", "solo"),
                            nodeSelector={"tier": "solo"}))
    # And its own anti-affinity against follower, which leaves n1 too: lead's replacement may go to n4.
    objects.append(make_pod("lead", node="n1", cpu="180m", labels={"app": "lead"}, owner=("ReplicaSet", "lead"),
                            affinity=anti("follower", ZONE), nodeSelector={"tier": "solo"}))
    objects.append(make_pod("follower", node="n1", cpu="50m", labels={"app": "follower"},
                            owner=("ReplicaSet", "follower")))
    for i in range(9):
        objects.append(make_pod(f"web-{i}", node=f"n{i}", cpu="500m", labels={"app": "web"},
                                owner=("ReplicaSet", "web"), topologySpreadConstraints=[spread("web", ZONE)]))
    for i in range(3):
        objects.append(make_pod(f"cache-{i}", node=f"n{i * 2}", cpu="300m", labels={"app": "cache"},
                                owner=("ReplicaSet", "cache"), affinity=anti("cache", "kubernetes.io/hostname")))
        objects.append(make_pod(f"edge-{i}", node=f"n{i * 3}", cpu="200m", labels={"app": "edge"},
                                owner=("ReplicaSet", "edge"), affinity=anti("edge", ZONE)))
        objects.append(make_pod(f"big-{i}", node=f"n{i}", cpu="1200m", labels={"app": "big"},
                                owner=("ReplicaSet", "big"),
                                topologySpreadConstraints=[spread("big", "kubernetes.io/hostname")]))
    objects.append(make_pdb("web", min_available=8, allowed=1, healthy=9, desired=8, expected=9))
    return snapshot(*objects)


@pytest.mark.parametrize("options", [runbook_drain_options(), DrainOptions(ignore_daemonsets=True, force=True)])
def test_shared_planning_gives_the_same_plan_as_planning_alone(options):
    snap = busy_cluster()
    shared = SharedPlanning(snap)
    for n in sorted(x.name for x in snap.nodes):
        alone = plan_drain(snap, [n], options, snap.taken_at)
        assert json.dumps(plan_drain(snap, [n], options, snap.taken_at, shared=shared), sort_keys=True, default=str) \
            == json.dumps(alone, sort_keys=True, default=str), n


def test_the_busy_cluster_discriminates_what_sharing_must_get_right():
    """The scenario above is not trivially safe: some plans place replacements, some cannot."""
    snap = busy_cluster()
    plans = [plan_drain(snap, [n.name], runbook_drain_options(), snap.taken_at) for n in snap.nodes]
    assert any(p["capacity"]["unplaceable"] for p in plans)
    assert any(p["capacity"]["replacementsPlaced"] for p in plans)
    n1 = plan_drain(snap, ["n1"], runbook_drain_options(), snap.taken_at)
    assert {e["name"]: e["replacementNode"] for e in n1["pods"] if e["name"] in ("solo", "lead")} \
        == {"solo": "n4", "lead": "n4"}


def anti_affinity_over_all_namespaces():
    """guard (namespace a, n2) repels app=web of every namespace from zone z2 (namespaceSelector {});
    n0 is the fuller node, so only that anti-affinity keeps web's replacement off n2."""
    objects = [make_node(f"n{i}", cpu="2", zone=f"z{i}") for i in range(3)]
    objects.append(make_pod("guard", namespace="a", node="n2", cpu="100m", labels={"app": "guard"},
                            owner=("ReplicaSet", "guard"), affinity={"podAntiAffinity": {
                                "requiredDuringSchedulingIgnoredDuringExecution": [{
                                    "labelSelector": {"matchLabels": {"app": "web"}}, "namespaceSelector": {},
                                    "topologyKey": ZONE}]}}))
    objects.append(make_pod("web", namespace="b", node="n1", cpu="100m", labels={"app": "web"},
                            owner=("ReplicaSet", "web")))
    objects.append(make_pod("filler", namespace="c", node="n0", cpu="1", owner=("ReplicaSet", "filler")))
    return snapshot(*objects)


def test_an_anti_affinity_term_over_all_namespaces_counts_in_shared_planning():
    snap = anti_affinity_over_all_namespaces()
    shared = SharedPlanning(snap)
    options = runbook_drain_options()
    for n in sorted(x.name for x in snap.nodes):
        assert json.dumps(plan_drain(snap, [n], options, snap.taken_at, shared=shared), sort_keys=True, default=str) \
            == json.dumps(plan_drain(snap, [n], options, snap.taken_at), sort_keys=True, default=str), n
    alone = plan_drain(snap, ["n1"], options, snap.taken_at)
    assert [(e["name"], e["replacementNode"]) for e in alone["pods"]] == [("web", "n0")]


def generated(nodes, seed):
    import importlib.util
    import os

    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    spec = importlib.util.spec_from_file_location("bench_generate", os.path.join(root, "benchmarks", "generate.py"))
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    return snapshot(*[o for o in gen.generate(nodes, seed=seed) if "kind" in o], now=parse_time(gen.NOW))


def test_shared_planning_on_a_generated_cluster():
    snap = generated(24, 3)
    shared = SharedPlanning(snap)
    options = runbook_drain_options()
    for n in sorted(x.name for x in snap.nodes):
        assert json.dumps(plan_drain(snap, [n], options, snap.taken_at, shared=shared), sort_keys=True, default=str) \
            == json.dumps(plan_drain(snap, [n], options, snap.taken_at), sort_keys=True, default=str), n


def tight_cluster():
    """What a plan without placements must not miss: a pod too big for every node (n0), a zone spread
    already at its limit with the other zone full (n6), a pod that tolerates the cordon (n3)."""
    objects = [make_node(f"n{i}", cpu="2", zone=f"z{i % 2}") for i in range(6)]
    objects += [make_node("n6", cpu="4", zone="z0"), make_node("n8", cpu="8", zone="z0")]
    for i in range(6):
        objects.append(make_pod(f"fill-{i}", node=f"n{i}", cpu="1200m" if i % 2 else "300m",
                                labels={"app": "fill"}, owner=("ReplicaSet", "fill")))
    objects.append(make_pod("huge", node="n0", cpu="9", labels={"app": "huge"}, owner=("ReplicaSet", "huge")))
    for i, where in enumerate(("n6", "n2", "n4", "n1")):
        objects.append(make_pod(f"skewed-{i}", node=where, cpu="900m", labels={"app": "skewed"},
                                owner=("ReplicaSet", "skewed"), topologySpreadConstraints=[spread("skewed", ZONE)]))
    objects.append(make_pod("addon", node="n3", cpu="100m", labels={"app": "addon"}, owner=("ReplicaSet", "addon"),
                            tolerations=[{"operator": "Exists"}]))
    return snapshot(*objects)


def test_the_tight_cluster_discriminates_what_the_quick_path_must_get_right():
    snap = tight_cluster()
    risks = {n: {r["code"] for r in plan_drain(snap, [n], runbook_drain_options(), snap.taken_at)["risks"]}
             for n in ("n0", "n6", "n3", "n5")}
    assert risks == {"n0": {"REPLACEMENT_UNPLACEABLE"}, "n6": {"REPLACEMENT_UNPLACEABLE"},
                     "n3": {"REPLACEMENT_RETURNS_TO_NODE"}, "n5": set()}


DEDICATED = {"key": "dedicated", "value": "x", "effect": "NoSchedule"}
ALIKE = {"fits": {}, "untolerated": {"tolerations": []}, "selector": {"nodeSelector": {"tier": "y"}},
         "affinity": {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
             "nodeSelectorTerms": [{"matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["x"]}]}]}}}},
         "gated": {"schedulingGates": [{"name": "hold"}]}}


def alike_cluster():
    """Pods with the same namespace, labels and owner, each alone on its node (n0 first), that differ
    from the first (which fits on n1) only in what the node filters read: none of the others fits."""
    objects = [make_node("n1", cpu="8", labels={"tier": "x"}, taints=[DEDICATED])]
    for i, (name, change) in enumerate(ALIKE.items()):
        objects.append(make_node(f"n0{i}", cpu="2"))
        spec = {"nodeSelector": {"tier": "x"}, "tolerations": [{"key": "dedicated", "operator": "Exists"}], **change}
        objects.append(make_pod(name, node=f"n0{i}", cpu="100m", labels={"app": "alike"}, owner=("ReplicaSet", "alike"),
                                **spec))
    return snapshot(*objects)


def test_the_alike_cluster_discriminates_what_the_room_may_share_between_pods():
    snap = alike_cluster()
    risks = {n.name: {r["code"] for r in plan_drain(snap, [n.name], runbook_drain_options(), snap.taken_at)["risks"]}
             for n in snap.nodes if n.name != "n1"}
    assert risks == {"n00": set(), **{f"n0{i}": {"REPLACEMENT_UNPLACEABLE"} for i in range(1, len(ALIKE))}}


@pytest.mark.parametrize("cluster", [busy_cluster, tight_cluster])
def test_check_leaves_no_cyclic_garbage_so_the_cli_runs_it_without_the_collector(cluster):
    import gc

    snap = cluster()
    gc.collect()
    gc.disable()
    try:
        report = check(snap, CheckOptions(), snap.taken_at)
        assert report["nodes"] and gc.collect() == 0
    finally:
        gc.enable()


@pytest.mark.parametrize("cluster", [busy_cluster, tight_cluster, alike_cluster, lambda: generated(30, 5)])
def test_check_says_for_every_node_what_drain_says_for_it_alone(cluster, monkeypatch):
    from kubectl_safety.analysis import room

    proved = []
    original = room.Room.proves
    monkeypatch.setattr(room.Room, "proves", lambda self, *a: proved.append(original(self, *a)) or proved[-1])
    snap = cluster()
    report = check(snap, CheckOptions(), snap.taken_at)
    for entry in report["nodes"]:
        plan = plan_drain(snap, [entry["name"]], runbook_drain_options(), snap.taken_at)
        assert (entry["drainable"], entry["risks"]) == (plan["safe"], plan["risks"]), entry["name"]
        assert entry["unplaceable"][:len(plan["capacity"]["unplaceable"])] == [
            f"{u['namespace']}/{u['name']}" for u in plan["capacity"]["unplaceable"]]
    assert any(proved), "no node was proved: the quick path is not exercised"


def skewed_cluster(seed):
    """Three zones of random nodes; Deployments spread over zones (maxSkew 1 or 2, sometimes
    minDomains 4) with replicas placed at random, so many zones are over their skew already; fillers
    make some nodes and zones full. Seeded: the same cluster for a seed."""
    import random

    rng = random.Random(seed)
    nodes = [make_node(f"n{i}", cpu=str(rng.choice((2, 3, 4))), zone=f"z{rng.randrange(3)}") for i in range(8)]
    objects = list(nodes)
    for i in range(8):
        if rng.random() < 0.5:
            objects.append(make_pod(f"fill-{i}", node=f"n{i}", cpu=f"{rng.choice((1000, 1500, 2000))}m",
                                    owner=("ReplicaSet", "fill")))
    for d in range(rng.randint(1, 3)):
        constraint = [spread(f"app{d}", ZONE, max_skew=rng.choice((1, 1, 2)))]
        if rng.random() < 0.2:
            constraint[0]["minDomains"] = 4
        for r in range(rng.randint(2, 7)):
            objects.append(make_pod(f"app{d}-{r}", node=f"n{rng.randrange(8)}", cpu=f"{rng.choice((200, 400, 700))}m",
                                    labels={"app": f"app{d}"}, owner=("ReplicaSet", f"app{d}"),
                                    topologySpreadConstraints=constraint))
    return snapshot(*objects)


def _skewed_here(snap, name) -> bool:
    """Some pod of node ``name`` has a zone spread its own zone already breaks."""
    zone = snap.node(name).labels[ZONE]
    for p in snap.pods_on(name):
        for c in p.topology_spread_constraints:
            app = c["labelSelector"]["matchLabels"]["app"]
            counts = {n.labels[ZONE]: 0 for n in snap.nodes}
            for q in snap.pods:
                if q.labels.get("app") == app:
                    counts[snap.node(q.node_name).labels[ZONE]] += 1
            if counts[zone] - min(counts.values()) > c["maxSkew"]:
                return True
    return False


def test_skewed_zone_spreads_are_proved_or_planned_as_drain_alone_plans_them(monkeypatch):
    """Over 40 seeds, every node's verdict and risks equal its drain plan's; the room proof of an
    over-skewed domain (a copy placed in another zone) is taken on some nodes, and the plans of
    others find replacements unplaceable, so both sides of the proof are exercised."""
    from kubectl_safety.analysis import room

    proved_skewed, unplaceable, proved = 0, 0, {}
    original = room.Room.proves
    monkeypatch.setattr(room.Room, "proves",
                        lambda self, node, *a: proved.setdefault(node.name, original(self, node, *a)))
    for seed in range(40):
        snap = skewed_cluster(seed)
        proved.clear()
        report = check(snap, CheckOptions(), snap.taken_at)
        for entry in report["nodes"]:
            plan = plan_drain(snap, [entry["name"]], runbook_drain_options(), snap.taken_at)
            assert (entry["drainable"], entry["risks"]) == (plan["safe"], plan["risks"]), (seed, entry["name"])
            proved_skewed += bool(proved.get(entry["name"]) and _skewed_here(snap, entry["name"]))
            unplaceable += bool(plan["capacity"]["unplaceable"])
    assert proved_skewed >= 10 and unplaceable >= 10, (proved_skewed, unplaceable)


def test_check_pdbs_overlapping_only_on_a_pending_pod_do_not_block():
    """The Eviction API deletes a Pending pod without a PDB check (multiple PDBs included): two
    PDBs that share only a Pending pod are no overlap a drain meets."""
    objects = [make_node("n1"), make_node("n2"), make_pod("a-0", labels={"app": "a", "tier": "x"}),
               make_pod("shared", node=None, phase="Pending", labels={"app": "a", "tier": "x", "b": "y"}),
               make_pod("b-0", node="n2", labels={"b": "y"}),
               make_pdb("pa", selector={"app": "a"}, allowed=1, healthy=1, desired=0, expected=2),
               make_pdb("pb", selector={"b": "y"}, allowed=1, healthy=1, desired=0, expected=2)]
    snap = snapshot(*objects)
    assert "PDB_OVERLAP" not in codes(check(snap, CheckOptions(), snap.taken_at))


def test_check_pdb_over_a_deployment_plus_an_unmanaged_pod_still_allows():
    """An integer minAvailable needs no controller's scale: the unmanaged pod counts as expected and
    healthy, and the budget allows what the disruption controller says it does."""
    dep = make_workload("Deployment", "web", replicas=2)
    objects = [make_node("n1"), make_node("n2"), dep,
               make_pod("web-0", labels={"app": "web"}), make_pod("web-1", node="n2", labels={"app": "web"}),
               make_pod("bare", owner=None, labels={"app": "web"}),
               make_pdb("web", selector={"app": "web"}, min_available=2, allowed=1, healthy=3, desired=2, expected=3)]
    snap = snapshot(*objects)
    report = check(snap, CheckOptions(), snap.taken_at)
    assert not [f for f in report["findings"] if f["code"] in ("PDB_NEVER_ALLOWS", "PDB_CONTROLLER_NO_SCALE")]


@pytest.mark.parametrize("rule", [dict(max_unavailable=1), dict(max_unavailable="50%"), dict(min_available="50%")],
                         ids=["maxUnavailable", "maxUnavailable-percent", "minAvailable-percent"])
def test_check_scaled_pdb_over_a_deployment_plus_an_unmanaged_pod_warns_and_allows(rule):
    """``getExpectedScale`` skips the unmanaged pod (the UnmanagedPods event) and counts the Deployment's
    scale: the budget allows disruptions, so check warns and does not block."""
    objects = [make_node("n1"), make_node("n2"), make_workload("Deployment", "web", replicas=2),
               make_workload("ReplicaSet", "rs", replicas=2, labels={"app": "web"}, owner=("Deployment", "web")),
               make_pod("web-0", labels={"app": "web"}), make_pod("web-1", node="n2", labels={"app": "web"}),
               make_pod("bare", owner=None, labels={"app": "web"}),
               make_pdb("web", selector={"app": "web"}, allowed=2, healthy=3, desired=1, expected=2, **rule)]
    snap = snapshot(*objects)
    b = budget(snap.pdbs[0], snap)
    assert (b["expectedPods"], b["desiredHealthy"], b["healthyPods"], b["disruptionsAllowed"]) == (2, 1, 3, 2)
    report = check(snap, CheckOptions(), snap.taken_at)
    found = {f["code"]: f for f in report["findings"]}
    assert "PDB_CONTROLLER_NO_SCALE" not in found and "PDB_NEVER_ALLOWS" not in found
    assert found["PDB_UNMANAGED_PODS"]["severity"] == "warning"
    assert [o["name"] for o in found["PDB_UNMANAGED_PODS"]["objects"]] == ["web", "bare"]
    assert not [r for n in report["nodes"] for r in n["risks"] if r["code"].startswith("PDB_")]


def test_check_scaled_pdb_over_unmanaged_pods_only_never_allows():
    """No pod has a controller: expectedPods is 0 and the controller allows nothing (an error, as before)."""
    objects = [make_node("n1"), make_pod("bare", owner=None, labels={"app": "web"}),
               make_pdb("web", selector={"app": "web"}, max_unavailable=1, allowed=0, healthy=1, desired=0, expected=0)]
    snap = snapshot(*objects)
    found = codes(check(snap, CheckOptions(), snap.taken_at))
    assert {"PDB_CONTROLLER_NO_SCALE", "PDB_NEVER_ALLOWS"} <= found and "PDB_UNMANAGED_PODS" not in found
