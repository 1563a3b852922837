"""Regression tests for the known disagreements with kube-scheduler (issue 14), one per disagreement,
all through the one filter implementation (analysis.scheduling) that drain, preemption and rebalance share."""

import pytest

from kubectl_safety.analysis.drain import DrainOptions
from kubectl_safety.analysis.fit import filter_node
from kubectl_safety.analysis.priority import global_default
from kubectl_safety.analysis.rebalance import RebalanceOptions, find_workloads
from tests.builders import NOW, make_class, make_node, make_pdb, make_pod, make_workload, snapshot, spread
from tests.published import plan_drain, plan_rebalance, preview

ZONE = "topology.kubernetes.io/zone"
APP = {"app": "web"}


def fit(pod_raw, node_name, *objects):
    snap = snapshot(pod_raw, *objects)
    pod = snap.pod(pod_raw["metadata"]["namespace"], pod_raw["metadata"]["name"])
    return [f.code for f in filter_node(pod, snap.node(node_name), snap.without_pods([pod.key]))]


def drain(*objects, nodes=("n1",), **options):
    return plan_drain(snapshot(*objects), list(nodes), DrainOptions(**options), NOW)


def replacement_of(report, name):
    return next(p["replacementNode"] for p in report["pods"] if p["name"] == name)


def test_cordoned_nodes_domains_still_count_for_topology_spread():
    """Zone a (only the drained node) keeps counting with 0 pods: zone b may not take a second pod."""
    report = drain(make_node("n1", zone="a"), make_node("n2", zone="b"),
                   make_pod("x", node="n1", labels=APP, topologySpreadConstraints=[spread()]),
                   make_pod("y", node="n2", labels=APP, topologySpreadConstraints=[spread()]))
    assert replacement_of(report, "x") is None
    [risk] = [r for r in report["risks"] if r["code"] == "REPLACEMENT_UNPLACEABLE"]
    assert "topology spread" in risk["nodes"]["n2"] and report["safe"] is False


NEAR_DB = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
    {"labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": "kubernetes.io/hostname"}]}}


@pytest.mark.parametrize("db, expected", [
    ("leaving", "n2"),  # placed after front (less cpu), then front is retried and joins it
    ("staying", "n2"),  # already on n2
    (None, None),  # no db anywhere: front stays unplaceable
])
def test_unplaceable_replacement_is_retried_once_a_later_one_satisfies_its_affinity(db, expected):
    """Found by the live placement fuzzer: the scheduler retries a Pending pod when a pod is bound;
    we planned ``front`` unplaceable when the ``db`` it needs left the drained node with it."""
    pods = [make_pod("front", node="n1", cpu="1", affinity=NEAR_DB)]
    if db:
        pods.append(make_pod("db", node="n1" if db == "leaving" else "n2", cpu="100m"))
    report = drain(make_node("n1"), make_node("n2"), *pods)
    assert replacement_of(report, "front") == expected
    assert ("REPLACEMENT_UNPLACEABLE" in [r["code"] for r in report["risks"]]) == (expected is None)


@pytest.mark.parametrize("selector, expected", [({}, ["n2", "n2"]), ({"matchLabels": APP}, [None, None])])
def test_placed_replacements_do_not_count_for_an_empty_spread_selector(selector, expected):
    """Found by the live placement fuzzer: the first replacement placed on n2 moved the count of
    ``labelSelector: {}`` (as preemption's AddPod does) and the second was refused for skew 2; bound,
    it counts no more than any pod. Zone a keeps only the drained n1 (n3 is tainted)."""
    taint = [{"key": "dedicated", "value": "x", "effect": "NoSchedule"}]
    constraint = [spread(selector=selector)]
    report = drain(make_node("n1", cpu="3", zone="a"), make_node("n2", zone="b"), make_node("n3", zone="a", taints=taint),
                   *[make_pod(f"w{i}", node=n, cpu="250m", labels=APP, topologySpreadConstraints=constraint)
                     for i, n in enumerate(("n1", "n1", "n2"))])
    assert [replacement_of(report, "w0"), replacement_of(report, "w1")] == expected


def test_anti_affinity_namespace_selector_empty_means_all_namespaces():
    anti = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": APP}, "topologyKey": "kubernetes.io/hostname", "namespaceSelector": {}}]}}
    report = drain(make_node("n1"), make_node("n2"), make_node("n3"),
                   make_pod("a", namespace="one", node="n1", labels=APP, affinity=anti),
                   make_pod("b", namespace="two", node="n2", labels=APP),
                   make_pod("busy", namespace="two", node="n3", cpu="3"))  # n2 would score better
    assert replacement_of(report, "a") == "n3"


def test_spread_with_empty_label_selector_counts_no_pods():
    crowd = [make_pod(f"p{i}", node="n1", labels=APP) for i in range(4)]
    pod = make_pod("new", node=None, labels=APP, topologySpreadConstraints=[spread(selector={})])
    assert fit(pod, "n1", make_node("n1", zone="a"), make_node("n2", zone="b"), *crowd) == []
    counted = make_pod("new", node=None, labels=APP, topologySpreadConstraints=[spread()])
    assert fit(counted, "n1", make_node("n1", zone="a"), make_node("n2", zone="b"), *crowd) == ["topology-spread"]


def test_required_self_affinity_needs_the_topology_key_on_the_node():
    affinity = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": APP}, "topologyKey": "rack"}]}}
    pod = make_pod("first", node=None, labels=APP, affinity=affinity)
    nodes = [make_node("plain"), make_node("racked", labels={"rack": "r1"})]
    assert fit(pod, "plain", *nodes) == ["pod-affinity"]
    assert fit(pod, "racked", *nodes) == []



def _term(namespace_fields, selector={"matchLabels": APP}, **extra):
    term = {"topologyKey": "kubernetes.io/hostname", **namespace_fields, **extra}
    if selector is not None:
        term["labelSelector"] = selector
    return {"requiredDuringSchedulingIgnoredDuringExecution": [term]}


OTHER_BY_LABEL = {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "other"}}}


@pytest.mark.parametrize("fields, peer_namespace, expected", [
    # a namespaceSelector replaces the pod's own namespace (it is not added to it)
    (OTHER_BY_LABEL, "ns", ["pod-affinity"]),
    (OTHER_BY_LABEL, "other", []),
    # namespaces and namespaceSelector are a union
    ({"namespaces": ["ns"], **OTHER_BY_LABEL}, "ns", []),
    ({"namespaces": ["third"], **OTHER_BY_LABEL}, "other", []),
    # a selector on other namespace labels: only kubernetes.io/metadata.name is known (docs/deviations.md)
    ({"namespaceSelector": {"matchExpressions": [{"key": "kubernetes.io/metadata.name", "operator": "NotIn",
                                                  "values": ["other"]}]}}, "ns", []),
    # neither field: the pod's own namespace
    ({}, "ns", []),
    ({}, "other", ["pod-affinity"]),
])
def test_affinity_namespace_selector_selects_namespaces_by_their_labels(fields, peer_namespace, expected):
    """The incoming pod's required affinity (upstream merges the selected namespaces into the term).
    A peer on "far" (and a lone own-namespace pod matching itself) would be the escape for a first pod."""
    pod = make_pod("new", namespace="ns", node=None, labels={"app": "other"}, affinity={"podAffinity": _term(fields)})
    objects = [make_node("n1"), make_node("n2"), make_pod("peer", namespace=peer_namespace, node="n2", labels=APP)]
    assert fit(pod, "n2", *objects) == expected



def _name_selector(operator, *values):
    expr = {"key": "kubernetes.io/metadata.name", "operator": operator}
    if values:
        expr["values"] = list(values)
    return {"namespaceSelector": {"matchExpressions": [expr]}}


@pytest.mark.parametrize("kind, fields, expected", [
    # upstream merges the selected namespaces into a copy of the incoming pod's term but keeps the
    # selector, then matches it against no labels: NotIn/DoesNotExist select every namespace
    ("podAntiAffinity", _name_selector("DoesNotExist"), ["pod-anti-affinity"]),
    ("podAntiAffinity", _name_selector("NotIn", "ns"), ["pod-anti-affinity"]),
    ("podAntiAffinity", _name_selector("In", "ns"), []),
    ("podAntiAffinity", _name_selector("Exists"), ["pod-anti-affinity"]),
    ("podAffinity", _name_selector("DoesNotExist"), []),
    ("podAffinity", _name_selector("In", "ns"), ["pod-affinity"]),
])
def test_incoming_terms_namespace_selector_is_also_matched_against_no_labels(kind, fields, expected):
    """The incoming pod is in "ns", the peer in "other"."""
    pod = make_pod("new", namespace="ns", node=None, labels={"app": "new"}, affinity={kind: _term(fields)})
    peer = make_pod("peer", namespace="other", node="n1", labels=APP)
    assert fit(pod, "n1", make_node("n1"), peer) == expected


def test_existing_anti_affinity_namespace_selector_sees_the_namespace_labels():
    """An existing pod's term is matched against the incoming pod's namespace labels: no quirk."""
    guard = make_pod("guard", namespace="other", node="n1", labels={"app": "guard"},
                     affinity={"podAntiAffinity": _term(_name_selector("NotIn", "ns"))})
    assert fit(make_pod("new", namespace="ns", node=None, labels=APP), "n1", make_node("n1"), guard) == []

@pytest.mark.parametrize("fields, incoming_namespace, expected", [
    # an existing pod's namespaceSelector is matched against the incoming pod's namespace labels
    (OTHER_BY_LABEL, "ns", []),
    (OTHER_BY_LABEL, "other", ["existing-anti-affinity"]),
    ({"namespaceSelector": {}}, "ns", ["existing-anti-affinity"]),
    ({"namespaces": ["ns"], **OTHER_BY_LABEL}, "ns", ["existing-anti-affinity"]),
    ({}, "other", []),
])
def test_existing_anti_affinity_namespace_selector_judges_the_incoming_pods_namespace(fields, incoming_namespace,
                                                                                      expected):
    guard = make_pod("guard", namespace="ns", node="n1", labels={"app": "guard"},
                     affinity={"podAntiAffinity": _term(fields)})
    pod = make_pod("new", namespace=incoming_namespace, node=None, labels=APP)
    assert fit(pod, "n1", make_node("n1"), guard) == expected


@pytest.mark.parametrize("kind, selector, keys, expected", [
    # a nil labelSelector matches no pod, not even the pod itself (no first-pod escape)
    ("podAffinity", None, {}, ["pod-affinity"]),
    ("podAntiAffinity", None, {}, []),
    # the API server merges matchLabelKeys (In) and mismatchLabelKeys (NotIn) into the selector
    ("podAntiAffinity", {"matchLabels": APP}, {"matchLabelKeys": ["tier"]}, []),
    ("podAntiAffinity", {}, {"matchLabelKeys": ["tier"]}, []),
    ("podAntiAffinity", {"matchLabels": APP}, {"mismatchLabelKeys": ["tier"]}, ["pod-anti-affinity"]),
    ("podAffinity", {}, {"mismatchLabelKeys": ["tier"]}, []),
])
def test_affinity_term_label_selector_and_label_keys(kind, selector, keys, expected):
    """The peer has tier=2, the incoming pod tier=1."""
    pod = make_pod("new", namespace="ns", node=None, labels={**APP, "tier": "1"},
                   affinity={kind: _term({}, selector=selector, **keys)})
    peer = make_pod("peer", namespace="ns", node="n1", labels={**APP, "tier": "2"})
    assert fit(pod, "n1", make_node("n1"), peer) == expected

PREEMPTING = {"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"}


def test_nominated_node_eligibility_is_judged_by_its_first_failing_filter():
    """Host port (resolvable) fails before the affinity (unresolvable): the scheduler sees Unschedulable
    and waits for the pod terminating by preemption on the nominated node."""
    port = [{"name": "c", "image": "x", "ports": [{"containerPort": 80, "hostPort": 80}]}]
    affinity = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "cache"}}, "topologyKey": "kubernetes.io/hostname"}]}}
    pod_raw = make_pod("hi", node=None, priority=1000, phase="Pending", owner=None, containers=port,
                       affinity=affinity, status={"nominatedNodeName": "n1"})
    tainted = make_node("n2", taints=[{"key": "x", "effect": "NoSchedule"}])
    snap = snapshot(pod_raw, make_node("n1"), tainted, make_pod("cache", node="n2", labels={"app": "cache"}),
                    make_pod("old", node="n1", priority=0, containers=port, status={"conditions": [PREEMPTING]},
                             meta={"deletionTimestamp": "2026-11-22T08:59:00Z"}))
    r = preview(snap.pod("default", "hi"), snap, NOW)
    assert (r["eligible"], r["outcome"]) == (False, "waiting")


def test_scheduling_gates_keep_a_pod_out_of_scheduling():
    gated = make_pod("g", node=None, phase="Pending", priority=1000, owner=None,
                     schedulingGates=[{"name": "example.com/quota"}])
    assert fit(gated, "n1", make_node("n1")) == ["scheduling-gated"]
    snap = snapshot(gated, make_node("n1", cpu="1"), make_pod("low", node="n1", cpu="1", priority=0))
    r = preview(snap.pod("default", "g"), snap, NOW)
    assert (r["outcome"], r["eligible"], r["victims"]) == ("gated", False, [])
    report = drain(make_node("n1"), make_node("n2"), make_pod("a", schedulingGates=[{"name": "x"}]))
    assert replacement_of(report, "a") is None and not report["safe"]


def _rebalance(*objects, **options):
    snap = snapshot(*objects)
    return plan_rebalance(snap, find_workloads(snap, "default"), RebalanceOptions(**options), NOW)


def _skewed(priority=None, priority_class=None, phase="Running", ready=True):
    nodes = [make_node("a1", zone="a"), make_node("b1", zone="b")]
    labels = {"app": "web", "pod-template-hash": "abc"}
    pods = [make_pod(f"web-{i}", node="a1", labels=labels, owner=("ReplicaSet", "web-abc"), cpu="100m",
                     priority=priority, priority_class=priority_class, phase=phase, ready=ready,
                     topologySpreadConstraints=[spread()])
            for i in range(3)]
    dep = make_workload("Deployment", "web", replicas=3, labels={"app": "web"})
    rs = make_workload("ReplicaSet", "web-abc", replicas=3, labels=labels, owner=dep)
    return nodes + pods + [dep, rs]


def test_rebalance_evicts_pending_pods_without_the_pdb_check():
    pdb = make_pdb("web", selector={"app": "web"}, allowed=0, healthy=0, desired=3, expected=3)
    report = _rebalance(*_skewed(phase="Pending", ready=False), pdb)
    assert report["summary"]["evictions"] >= 1 and report["summary"]["fixed"]


def test_rebalance_never_moves_system_critical_pods():
    report = _rebalance(*_skewed(priority=2000000000, priority_class="system-cluster-critical"))
    assert report["evictions"] == []
    assert any("system-critical" in b["reason"] for b in report["blocked"])


def test_rebalance_spread_with_empty_label_selector_counts_no_pods():
    objects = _skewed()
    for o in objects:
        if o["kind"] == "Pod":
            o["spec"]["topologySpreadConstraints"] = [spread(selector={})]
    report = _rebalance(*objects)
    assert (report["summary"]["violated"], report["evictions"]) == (0, [])


def test_rebalance_places_replacements_with_the_shared_filters():
    """A zonal volume pins web's pods to zone a: the spread cannot be fixed by moving them to zone b."""
    objects = _skewed()
    for o in objects:
        if o["kind"] == "Pod":
            o["spec"]["volumes"] = [{"name": "d", "persistentVolumeClaim": {"claimName": "data"}}]
    claim = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "data", "namespace": "default"},
             "spec": {"accessModes": ["ReadWriteMany"], "volumeName": "pv-a", "storageClassName": "nfs"}}
    volume = {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv-a"},
              "spec": {"accessModes": ["ReadWriteMany"], "storageClassName": "nfs", "nodeAffinity": {"required": {
                  "nodeSelectorTerms": [{"matchExpressions": [{"key": ZONE, "operator": "In", "values": ["a"]}]}]}}}}
    assert [e["expectedNode"] for e in _rebalance(*_skewed())["evictions"]] == ["b1"]  # without the volume
    report = _rebalance(*objects, claim, volume)
    assert report["evictions"] == [] and not report["summary"]["fixed"]
    assert all("volume-node-affinity" in b["reason"] for b in report["blocked"])


def test_preemption_frees_a_read_write_once_pod_claim():
    """VolumeRestrictions is resolvable: removing the lower-priority user of the claim lets the pod in."""
    volumes = [{"name": "d", "persistentVolumeClaim": {"claimName": "data"}}]
    claim = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "data", "namespace": "default"},
             "spec": {"accessModes": ["ReadWriteOncePod"], "volumeName": "pv"}}
    volume = {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv"},
              "spec": {"accessModes": ["ReadWriteOncePod"]}}
    hi = make_pod("hi", node=None, priority=1000, phase="Pending", owner=None, volumes=volumes)
    snap = snapshot(hi, make_node("n1"), make_pod("user", node="n1", priority=0, volumes=volumes),
                    make_pod("other", node="n1", priority=0), claim, volume)
    r = preview(snap.pod("default", "hi"), snap, NOW)
    assert (r["outcome"], r["node"], [v["name"] for v in r["victims"]]) == ("preempt", "n1", ["user"])


@pytest.mark.parametrize("classes, expected", [
    ([("big", 1000, True), ("small", 10, True), ("mid", 500, True)], "small"),
    ([("big", 1000, True), ("plain", -5, False)], "big"),
    ([("plain", 7, False)], None),
])
def test_snapshot_global_default_class_is_the_one_admission_takes(classes, expected):
    """Several globalDefault classes: admission (getDefaultPriorityClass) takes the lowest value,
    and the snapshot answers with the same rule as analysis.priority."""
    snap = snapshot(*[make_class(name, value, default=default) for name, value, default in classes])
    chosen = snap.global_default_class
    assert (chosen.name if chosen else None) == expected
    assert chosen is global_default(snap)
