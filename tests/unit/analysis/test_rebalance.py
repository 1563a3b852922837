"""The rebalance plan: fewest evictions, scheduler-faithful re-placement, safety limits."""

import itertools

import pytest

from kubectl_safety.analysis.rebalance import RebalanceOptions, eviction_order, find_workloads, not_evictable
from kubectl_safety.analysis.topology import HOSTNAME, ZONE
from kubectl_safety.model.pods import Pod
from tests.builders import NOW, make_node, make_pdb, make_pod, make_workload, snapshot, spread
from tests.published import plan_rebalance

LABELS = {"app": "web", "pod-template-hash": "abc"}


def web_pods(placement, constraints, labels=LABELS, **kwargs):
    """Pods of Deployment web (via ReplicaSet web-abc): ``placement`` is a list of node names."""
    spec = {"topologySpreadConstraints": constraints} if constraints else {}
    return [make_pod(f"web-{i}", node=node, labels=labels, owner=("ReplicaSet", "web-abc"),
                     cpu="100m", start=f"2026-11-21T{i % 24:02d}:00:00Z", **spec, **kwargs)
            for i, node in enumerate(placement)]


def web_workloads(replicas):
    dep = make_workload("Deployment", "web", replicas=replicas, labels={"app": "web"})
    rs = make_workload("ReplicaSet", "web-abc", replicas=replicas, labels=LABELS, owner=dep)
    return [dep, rs]


def zones(counts, per_zone=1, **node_kwargs):
    """One zone per count, ``per_zone`` nodes each; returns (nodes, placement of the pods)."""
    nodes, placement = [], []
    for z, count in enumerate(counts):
        names = [f"n{z}-{i}" for i in range(per_zone)]
        nodes += [make_node(n, zone=f"z{z}", **node_kwargs) for n in names]
        placement += [names[i % per_zone] for i in range(count)]
    return nodes, placement


def plan(objects, options=RebalanceOptions()):
    snap = snapshot(*objects)
    return plan_rebalance(snap, find_workloads(snap, "default"), options, NOW)


def zone_plan(counts, constraints=None, extra=(), options=RebalanceOptions(), **node_kwargs):
    nodes, placement = zones(counts, **node_kwargs)
    pods = web_pods(placement, constraints or [spread()])
    return plan(nodes + pods + web_workloads(len(pods)) + list(extra), options)


def after(report, key=ZONE):
    return next(c for c in report["expected"] if c["topologyKey"] == key)


def minimum_moves(counts, max_skew):
    """Brute force: fewest single-pod moves to any vector with the same total and skew <= maxSkew."""
    total, best = sum(counts), None
    for target in itertools.product(range(total + 1), repeat=len(counts)):
        if sum(target) == total and max(target) - min(target) <= max_skew:
            moves = sum(max(0, c - t) for c, t in zip(counts, target))
            best = moves if best is None else min(best, moves)
    return best


# -- the count and order of evictions -----------------------------------------------------------

def test_descheduler_worked_example_is_balanced_with_five_evictions():
    report = zone_plan([2, 5, 3, 8, 5, 7])
    assert report["constraints"][0]["skew"] == 6
    assert len(report["evictions"]) == 5
    assert after(report)["domains"] == {f"z{i}": 5 for i in range(6)}
    assert report["summary"]["fixed"] is True and report["blocked"] == []


@pytest.mark.parametrize("counts,max_skew", [
    ([3, 0, 0], 1), ([4, 4, 0], 1), ([5, 1, 0, 0], 1), ([6, 0], 1), ([2, 2, 0], 1), ([7, 0, 0], 2),
    ([5, 5, 0, 0], 2), ([1, 6, 1], 1), ([4, 0, 0, 0, 0], 1), ([3, 3, 3, 0], 1), ([9, 1, 2], 3),
], ids=lambda v: str(v))
def test_plan_uses_the_fewest_evictions(counts, max_skew):
    report = zone_plan(counts, [spread(max_skew=max_skew)])
    assert len(report["evictions"]) == minimum_moves(counts, max_skew)
    assert after(report)["skew"] <= max_skew


@pytest.mark.parametrize("counts", [[1, 1, 1], [2, 1, 1], [1, 0]], ids=str)
def test_balanced_spread_needs_nothing(counts):
    report = zone_plan(counts)
    assert report["evictions"] == [] and report["summary"] == {"violated": 0, "evictions": 0, "rounds": 0, "fixed": True}


@pytest.mark.parametrize("tweak,evicted", [
    ({}, "web-2"),  # all equal: newest (latest start time) first
    ({"web-0": {"priority": -5}}, "web-0"),  # lowest priority first
    ({"web-1": {"ready": False}}, "web-1"),  # then not-ready
    ({"web-0": {"ready": False}, "web-1": {"priority": -1}}, "web-1"),  # priority beats readiness
], ids=["newest", "lowest-priority", "not-ready", "priority-before-readiness"])
def test_which_pod_is_evicted_first(tweak, evicted):
    nodes, placement = zones([3, 1, 0])
    pods = []
    for p in web_pods(placement, [spread()]):
        for field, value in tweak.get(p["metadata"]["name"], {}).items():
            if field == "priority":
                p["spec"]["priority"] = value
            else:
                p["status"]["conditions"] = [{"type": "Ready", "status": "False"}]
        pods.append(p)
    report = plan(nodes + pods + web_workloads(4))
    assert [e["name"] for e in report["evictions"]] == [evicted]
    assert report["evictions"][0]["expectedDomain"] == "z2"


def test_eviction_order_key_is_priority_then_readiness_then_newest():
    old, new = (Pod(make_pod(n, start=s)) for n, s in (("a", "2026-11-20T00:00:00Z"), ("b", "2026-11-21T00:00:00Z")))
    low = Pod(make_pod("c", priority=-1))
    unready = Pod(make_pod("d", ready=False))
    assert sorted([old, new, low, unready], key=eviction_order) == [low, unready, new, old]


# -- scheduler-faithful counting and re-placement --------------------------------------------

def test_demo_like_zone_outage_moves_one_pod_to_the_empty_zone():
    report = zone_plan([3, 1, 0])
    e = report["evictions"]
    assert len(e) == 1 and e[0]["domain"] == "z0" and e[0]["expectedDomain"] == "z2"
    assert after(report)["domains"] == {"z0": 2, "z1": 1, "z2": 1}


def test_zone_and_hostname_constraints_are_both_satisfied_and_never_worse():
    # zone z0 has two nodes holding 3 + 2 pods, z1 one pod on one of its two nodes.
    nodes = [make_node(n, zone=z) for n, z in (("a1", "z0"), ("a2", "z0"), ("b1", "z1"), ("b2", "z1"))]
    constraints = [spread(key=ZONE), spread(key=HOSTNAME, max_skew=2)]
    pods = web_pods(["a1", "a1", "a1", "a2", "a2", "b1"], constraints)
    report = plan(nodes + pods + web_workloads(6))
    before = {c["topologyKey"]: c for c in report["constraints"]}
    assert before[ZONE]["skew"] == 4 and before[HOSTNAME]["skew"] == 3
    assert len(report["evictions"]) == 2
    assert after(report, ZONE)["skew"] <= 1 and after(report, HOSTNAME)["skew"] <= 2
    assert {e["name"] for e in report["evictions"]} <= {"web-0", "web-1", "web-2", "web-3", "web-4"}


def test_replacement_goes_only_where_the_pod_fits():
    nodes, placement = zones([3, 1, 0])
    nodes[2] = make_node("n2-0", zone="z2", cpu="50m")  # too small for a 100m pod
    report = plan(nodes + web_pods(placement, [spread()]) + web_workloads(4))
    assert report["evictions"] == []
    assert report["summary"]["fixed"] is False
    assert any("insufficient-cpu" in b["reason"] for b in report["blocked"])


@pytest.mark.parametrize("policy,violated,evictions", [
    (None, True, 0),       # nodeTaintsPolicy Ignore: the tainted zone counts (0) but takes no pod
    ("Honor", False, 0),   # Honor: the tainted zone is not a domain at all, [2, 2] is balanced
], ids=["taints-ignored", "taints-honored"])
def test_tainted_domain_counts_only_with_ignore(policy, violated, evictions):
    nodes, placement = zones([2, 2, 0])
    nodes[2]["spec"]["taints"] = [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]
    c = spread(**({"nodeTaintsPolicy": policy} if policy else {}))
    report = plan(nodes + web_pods(placement, [c]) + web_workloads(4))
    assert report["constraints"][0]["violated"] is violated
    assert len(report["evictions"]) == evictions
    codes = {f["code"] for f in report["findings"]}
    assert ("TOPOLOGY_UNREACHABLE_DOMAIN" in codes) is violated


@pytest.mark.parametrize("policy,domains,evictions", [
    (None, {"z0": 3, "z1": 1}, 1),               # Honor (default): z2 excluded by the nodeSelector; [3,1] -> [2,2]
    ("Ignore", {"z0": 3, "z1": 1, "z2": 0}, 0),  # z2 keeps the minimum at 0 and cannot take the pod:
], ids=["affinity-honored", "affinity-ignored"])  # a replacement would stay Pending, so nothing is evicted
def test_node_affinity_policy_decides_the_domains(policy, domains, evictions):
    nodes, placement = zones([3, 1, 0])
    nodes[2]["metadata"]["labels"]["pool"] = "spot"
    for n in nodes[:2]:
        n["metadata"]["labels"]["pool"] = "main"
    c = spread(**({"nodeAffinityPolicy": policy} if policy else {}))
    pods = web_pods(placement, [c], nodeSelector={"pool": "main"})
    report = plan(nodes + pods + web_workloads(4))
    assert report["constraints"][0]["domains"] == domains
    assert len(report["evictions"]) == evictions
    assert report["summary"]["fixed"] is bool(evictions)
    if not evictions:
        assert any("node-affinity" in b["reason"] for b in report["blocked"])


def test_min_domains_above_the_domain_count_cannot_be_fixed():
    report = zone_plan([2, 1], [spread(minDomains=3)])
    c = report["constraints"][0]
    assert c["skew"] == 2 and c["violated"]
    assert report["summary"]["fixed"] is False and report["evictions"] == []
    assert any("minDomains" in b["reason"] for b in report["blocked"])
    assert "TOPOLOGY_FEW_DOMAINS" in {f["code"] for f in report["findings"]}


def test_min_domains_met_behaves_like_plain_skew():
    report = zone_plan([3, 1, 0], [spread(minDomains=3)])
    assert len(report["evictions"]) == 1 and report["summary"]["fixed"]


def test_terminating_and_other_namespace_pods_do_not_count():
    nodes, placement = zones([3, 1, 0])
    pods = web_pods(placement, [spread()])
    pods[0]["metadata"]["deletionTimestamp"] = "2026-11-22T08:59:00Z"
    stranger = make_pod("other", namespace="prod", node="n2-0", labels=LABELS)
    report = plan(nodes + pods + web_workloads(4) + [stranger])
    assert report["constraints"][0]["domains"] == {"z0": 2, "z1": 1, "z2": 0}
    assert report["constraints"][0]["violated"] is True
    assert "web-0" not in {e["name"] for e in report["evictions"]}


def test_match_label_keys_count_only_the_same_revision():
    nodes, placement = zones([3, 1, 0])
    c = spread(matchLabelKeys=["pod-template-hash"])
    pods = web_pods(placement, [c])
    old = make_pod("web-old", node="n2-0", labels={"app": "web", "pod-template-hash": "old"},
                   owner=("ReplicaSet", "web-old"))
    report = plan(nodes + pods + web_workloads(4) + [old])
    assert report["constraints"][0]["domains"] == {"z0": 3, "z1": 1, "z2": 0}


# -- safety limits -------------------------------------------------------------------------

def test_pdb_budget_spreads_evictions_over_rounds():
    pdb = make_pdb("web", selector={"app": "web"}, max_unavailable=1, allowed=1)
    report = zone_plan([4, 0, 0], extra=[pdb])
    assert [e["round"] for e in report["evictions"]] == [1, 2]
    assert report["summary"]["rounds"] == 2 and report["summary"]["fixed"]


def test_pdb_with_no_budget_now_starts_in_a_later_round():
    pdb = make_pdb("web", selector={"app": "web"}, max_unavailable=1, allowed=0)  # e.g. a pod was just replaced
    report = zone_plan([4, 0, 0], extra=[pdb])
    assert [e["round"] for e in report["evictions"]] == [2, 3] and report["summary"]["fixed"]


def test_not_ready_pod_is_evicted_without_spending_the_budget():
    nodes, placement = zones([4, 0, 0])
    pods = web_pods(placement, [spread()])
    pods[0]["status"]["conditions"] = [{"type": "Ready", "status": "False"}]
    pdb = make_pdb("web", selector={"app": "web"}, max_unavailable=1, allowed=1, policy="AlwaysAllow")
    report = plan(nodes + pods + web_workloads(4) + [pdb])
    assert [(e["name"], e["round"]) for e in report["evictions"]] == [("web-0", 1), ("web-3", 1)]


def test_pdb_that_never_allows_blocks_the_plan():
    pdb = make_pdb("web", selector={"app": "web"}, min_available=4, allowed=0)
    report = zone_plan([3, 1, 0], extra=[pdb])
    assert report["evictions"] == [] and report["summary"]["fixed"] is False
    assert any("PDB web" in b["reason"] for b in report["blocked"])


def test_two_pdbs_make_a_pod_unevictable():
    pdbs = [make_pdb("a", selector={"app": "web"}, max_unavailable=1, allowed=1),
            make_pdb("b", selector={"pod-template-hash": "abc"}, max_unavailable=1, allowed=1)]
    report = zone_plan([3, 1, 0], extra=pdbs)
    assert report["evictions"] == []
    assert any("more than one PDB" in b["reason"] for b in report["blocked"])


def test_max_evictions_caps_the_plan():
    report = zone_plan([2, 5, 3, 8, 5, 7], options=RebalanceOptions(max_evictions=2))
    assert len(report["evictions"]) == 2 and report["summary"]["fixed"] is False
    assert any("--max-evictions 2" in b["reason"] for b in report["blocked"])


@pytest.mark.parametrize("flag,evictions", [(False, 0), (True, 1)], ids=["protected", "--evict-local-storage"])
def test_local_storage_needs_a_flag(flag, evictions):
    nodes, placement = zones([3, 1, 0])
    pods = web_pods(placement, [spread()], volumes=[{"name": "cache", "emptyDir": {}}])
    report = plan(nodes + pods + web_workloads(4), RebalanceOptions(evict_local_storage=flag))
    assert len(report["evictions"]) == evictions
    if not flag:
        assert any("local storage" in b["reason"] for b in report["blocked"])


def test_bare_and_mirror_pods_are_counted_but_never_evicted():
    nodes, placement = zones([0, 1, 0])
    pods = web_pods(placement, [spread()])
    bare = [make_pod(f"bare-{i}", node="n0-0", labels=LABELS, owner=None, topologySpreadConstraints=[spread()])
            for i in range(3)]
    report = plan(nodes + pods + web_workloads(1) + bare)
    assert report["constraints"][0]["domains"] == {"z0": 3, "z1": 1, "z2": 0}
    assert report["evictions"] == [] and report["summary"]["fixed"] is False


# -- what is judged ----------------------------------------------------------------------------

@pytest.mark.parametrize("include_soft,evictions", [(False, 0), (True, 1)], ids=["soft-ignored", "--include-soft"])
def test_schedule_anyway_only_with_include_soft(include_soft, evictions):
    report = zone_plan([3, 1, 0], [spread(when="ScheduleAnyway")], options=RebalanceOptions(include_soft=include_soft))
    assert report["constraints"][0]["rebalanced"] is include_soft
    assert len(report["evictions"]) == evictions and report["summary"]["fixed"]


@pytest.mark.parametrize("flag,evictions", [(False, 0), (True, 2)], ids=["no-defaults", "--cluster-defaults"])
def test_cluster_defaults_judge_pods_without_constraints(flag, evictions):
    nodes = [make_node(f"h{i}", zone="z0") for i in range(3)]
    pods = web_pods(["h0"] * 6, [])
    report = plan(nodes + pods + web_workloads(6), RebalanceOptions(cluster_defaults=flag))
    assert len(report["evictions"]) == evictions
    if flag:
        host = after(report, HOSTNAME)
        assert host["skew"] <= 3 and host["whenUnsatisfiable"] == "ScheduleAnyway"
        assert {c["source"] for c in report["constraints"]} == {"cluster-default"}


# -- seed 004 pitfalls ---------------------------------------------------------------------

def test_selector_not_matching_own_labels_is_a_finding_and_blocks():
    report = zone_plan([3, 1, 0], [spread(labels={"app": "frontend"})], extra=[
        make_pod(f"fe-{i}", node="n0-0", labels={"app": "frontend"}, owner=("ReplicaSet", "fe")) for i in range(3)])
    assert report["constraints"][0]["skew"] == 3
    assert "TOPOLOGY_SELECTOR_MISMATCH" in {f["code"] for f in report["findings"]}
    assert report["evictions"] == [] and report["summary"]["fixed"] is False
    assert any("does not select" in b["reason"] for b in report["blocked"])


def test_mistyped_topology_label_is_reported_with_the_near_miss():
    nodes, placement = zones([2, 1])
    nodes.append(make_node("n5", labels={"zone-typo": "z2"}))
    report = plan(nodes + web_pods(placement + ["n5"], [spread()]) + web_workloads(4))
    finding = next(f for f in report["findings"] if f["code"] == "TOPOLOGY_KEY_MISSING")
    assert "n5" in finding["message"] and "1 of this workload's" in finding["message"]
    assert report["constraints"][0]["domains"] == {"z0": 2, "z1": 1}


def test_near_miss_label_key_is_named():
    nodes, placement = zones([2, 1])
    nodes.append(make_node("n5", labels={"topology.kubernetes.io/zones": "z2"}))
    report = plan(nodes + web_pods(placement, [spread()]) + web_workloads(3))
    finding = next(f for f in report["findings"] if f["code"] == "TOPOLOGY_KEY_MISSING")
    assert "topology.kubernetes.io/zones" in finding["message"]


def test_domain_named_by_affinity_without_nodes_is_reported():
    nodes, placement = zones([2, 1])
    affinity = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": ZONE, "operator": "In", "values": ["z0", "z1", "z9"]}]}]}}}
    report = plan(nodes + web_pods(placement, [spread()], affinity=affinity) + web_workloads(3))
    messages = [f["message"] for f in report["findings"] if f["code"] == "TOPOLOGY_DOMAIN_WITHOUT_NODES"]
    assert len(messages) == 1 and "z9" in messages[0]


def test_report_shape():
    report = zone_plan([3, 1, 0])
    assert report["kind"] == "RebalancePlan" and report["apiVersion"] == "safety.kubectl.io/v1"
    c = report["constraints"][0]
    assert {"topologyKey", "maxSkew", "whenUnsatisfiable", "domains", "skew", "violated"} <= set(c)
    assert {"namespace", "name", "node", "domain"} <= set(report["evictions"][0])
    assert {"domains", "skew"} <= set(report["expected"][0])
    assert report["workloads"] == [{"kind": "Deployment", "namespace": "default", "name": "web", "pods": 4}]


@pytest.mark.parametrize("pod,options,reason", [
    (make_pod("p", meta={"annotations": {"kubernetes.io/config.mirror": "x"}}), RebalanceOptions(), "mirror"),
    (make_pod("p", owner=None), RebalanceOptions(), "bare pod"),
    (make_pod("p", owner=("DaemonSet", "ds")), RebalanceOptions(), "DaemonSet"),
    (make_pod("p", meta={"deletionTimestamp": "2026-11-22T08:00:00Z"}), RebalanceOptions(), "terminating"),
    (make_pod("p", volumes=[{"name": "h", "hostPath": {"path": "/x"}}]), RebalanceOptions(), "local storage"),
    (make_pod("p", volumes=[{"name": "h", "hostPath": {"path": "/x"}}]), RebalanceOptions(evict_local_storage=True), ""),
    (make_pod("p"), RebalanceOptions(), ""),
], ids=["mirror", "bare", "daemonset", "terminating", "local-storage", "local-storage-allowed", "evictable"])
def test_not_evictable(pod, options, reason):
    snap = snapshot(pod)
    why = not_evictable(snap.pod("default", "p"), snap, options)
    assert (reason in why) if reason else why == ""


def test_cluster_defaults_do_not_require_every_key():
    # Nodes without a zone label still count for the default hostname spreading.
    nodes = [make_node(f"h{i}") for i in range(3)]
    report = plan(nodes + web_pods(["h0"] * 6, []) + web_workloads(6), RebalanceOptions(cluster_defaults=True))
    host = next(c for c in report["constraints"] if c["topologyKey"] == HOSTNAME)
    assert host["domains"] == {"h0": 6, "h1": 0, "h2": 0} and host["violated"]
    assert len(report["evictions"]) == 2 and after(report, HOSTNAME)["skew"] <= 3


def test_rebalance_expected_node_is_the_schedulers_score_choice():
    """The replacement goes where the Score stage puts it, not to the least-loaded domain: a
    PreferNoSchedule taint the pod does not tolerate (TaintToleration, weight 3) outweighs a
    ScheduleAnyway spread (weight 2), so the scheduler picks z2's node, not the empty zone z1."""
    nodes, placement = zones([4, 0, 1])
    nodes[1]["spec"]["taints"] = [{"key": "old", "value": "x", "effect": "PreferNoSchedule"}]
    pods = web_pods(placement, [spread(when="ScheduleAnyway")])
    report = plan(nodes + pods + web_workloads(len(pods)), RebalanceOptions(include_soft=True))
    first = report["evictions"][0]
    assert (first["expectedNode"], first["expectedDomain"], first["tiedNodes"]) == ("n2-0", "z2", [])


def test_rebalance_names_the_nodes_tied_with_the_expected_one():
    """Two nodes of the emptiest zone score alike: the plan names the first and lists the other."""
    nodes, placement = zones([3, 0], per_zone=2)
    pods = web_pods(placement, [spread()])
    report = plan(nodes + pods + web_workloads(len(pods)))
    first = report["evictions"][0]
    assert first["expectedDomain"] == "z1" and first["expectedNode"] == "n1-0" and first["tiedNodes"] == ["n1-1"]
