"""The capi and karpenter profiles: per scenario, the outcome their drain code gives (the integration test
test_engine_oracles.py checks the same scenarios against the engines' own code)."""

import json

import pytest

from kubectl_safety.analysis import profiles
from kubectl_safety.analysis.profiles.base import Source
from kubectl_safety.analysis.profiles.outcome import Outcome, simulate
from kubectl_safety.errors import UsageError
from tests.builders import NOW, make_node, make_pdb, make_pod, make_workload, never_allows, snapshot

WEB = {"app": "web"}
NODES = [make_node("n1"), make_node("n2")]


def two_pdbs():
    return [make_pod("web-a", labels=WEB), make_pod("web-b", node="n2", labels=WEB),
            make_pdb("one", selector=WEB, max_unavailable=1, allowed=1, healthy=2, desired=1, expected=2),
            make_pdb("two", selector=WEB, max_unavailable=1, allowed=1, healthy=2, desired=1, expected=2)]


def with_annotation(name, value, **kw):
    return make_pod(name, meta={"annotations": {"karpenter.sh/do-not-disrupt": value}}, **kw)


def rules(*specs):
    return json.dumps([{"metadata": {"name": n}, "spec": {"drain": d, "pods": p}} for n, d, p in specs])


def run(engine, objects, nodes=("n1",), **settings):
    snap = snapshot(*NODES, *objects)
    return simulate(profiles.load(engine, settings, snap), snap, list(nodes), NOW)


def outcome(engine, objects, **settings):
    node = run(engine, objects, **settings).nodes[0]
    return node.outcome, node.at_seconds, {p.name: (p.action, p.at_seconds, p.code) for p in node.pods}


DS = make_workload("DaemonSet", "agent")
DS_POD = make_pod("agent", owner=("DaemonSet", "agent"))
EMPTYDIR = make_pod("cache", volumes=[{"name": "tmp", "emptyDir": {}}])
DB_LAST = rules(("db-last", {"behavior": "Drain", "order": 10}, [{"selector": {"matchLabels": {"app": "db"}}}]))

# (scenario, objects, settings, expected (outcome, at seconds, {pod: (action, at, code)}))
CAPI = [
    ("pdb-that-never-allows-stalls-without-timeout", never_allows(), {},
     (Outcome.STALLS, 0, {"web-a": ("blocked", None, "PDB_NEVER_ALLOWS")})),
    ("pdb-that-never-allows-forced-at-the-first-pass-past-the-timeout", never_allows(),
     {"nodeDrainTimeoutSeconds": "30"}, (Outcome.FORCES, 40, {"web-a": ("forced", 40, "ENGINE_FORCES")})),
    ("single-replica-evicted", [make_pod("solo", owner=("ReplicaSet", "solo"))], {},
     (Outcome.COMPLETES, 30, {"solo": ("evict", 30, "")})),
    ("local-storage-evicted-not-refused", [EMPTYDIR], {},
     (Outcome.COMPLETES, 30, {"cache": ("evict", 30, "LOCAL_STORAGE")})),
    ("unmanaged-pod-evicted", [make_pod("bare", owner=None)], {},
     (Outcome.COMPLETES, 30, {"bare": ("evict", 30, "UNMANAGED")})),
    ("daemonset-pod-left-in-place", [DS, DS_POD], {}, (Outcome.COMPLETES, 0, {"agent": ("skip", None, "DAEMONSET")})),
    ("drain-label-skip", [make_pod("keep", labels={"cluster.x-k8s.io/drain": "skip"})], {},
     (Outcome.COMPLETES, 0, {"keep": ("skip", None, "CAPI_DRAIN_SKIP")})),
    ("drain-label-wait-completed-stalls", [make_pod("job", labels={"cluster.x-k8s.io/drain": "wait-completed"})], {},
     (Outcome.STALLS, 0, {"job": ("wait", None, "CAPI_WAIT_COMPLETED")})),
    ("exclude-node-draining-forces-every-pod-at-once", [make_pod("solo")], {"exclude-node-draining": "true"},
     (Outcome.FORCES, 0, {"solo": ("forced", 0, "ENGINE_FORCES")})),
    ("order-groups-lowest-first", [make_pod("db", labels={"app": "db"}), make_pod("web")],
     {"machineDrainRules": DB_LAST},
     (Outcome.COMPLETES, 60, {"web": ("evict", 30, ""), "db": ("evict", 60, "")})),
    ("rule-skip-first-by-name-wins",
     [make_pod("db", labels={"app": "db"})],
     {"machineDrainRules": rules(("b-drain", {"behavior": "Drain"}, []),
                                 ("a-skip", {"behavior": "Skip"}, [{"selector": {"matchLabels": {"app": "db"}}}]))},
     (Outcome.COMPLETES, 0, {"db": ("skip", None, "CAPI_DRAIN_SKIP")})),
    ("higher-order-group-waits-behind-a-blocked-pod", [*never_allows(), make_pod("db", labels={"app": "db"})],
     {"machineDrainRules": DB_LAST},
     (Outcome.STALLS, 0, {"web-a": ("blocked", None, "PDB_NEVER_ALLOWS"), "db": ("wait", None, "BEHIND_GROUP")})),
]


@pytest.mark.parametrize("name,objects,settings,expected", CAPI, ids=[r[0] for r in CAPI])
def test_capi_profile(name, objects, settings, expected):
    assert outcome("capi", objects, **settings) == expected


KARPENTER = [
    ("pdb-that-never-allows-stalls-without-termination-grace-period", never_allows(), {},
     (Outcome.STALLS, 0, {"web-a": ("blocked", None, "PDB_NEVER_ALLOWS")})),
    ("pdb-that-never-allows-deleted-at-deadline-minus-own-grace", never_allows(), {"terminationGracePeriod": "2m"},
     (Outcome.FORCES, 90, {"web-a": ("forced", 90, "ENGINE_FORCES")})),
    ("single-replica-evicted", [make_pod("solo", owner=("ReplicaSet", "solo"))], {},
     (Outcome.COMPLETES, 30, {"solo": ("evict", 30, "")})),
    ("local-storage-evicted", [EMPTYDIR], {}, (Outcome.COMPLETES, 30, {"cache": ("evict", 30, "LOCAL_STORAGE")})),
    ("do-not-disrupt-stalls", [with_annotation("pinned", "true")], {},
     (Outcome.STALLS, 0, {"pinned": ("wait", None, "KARPENTER_DO_NOT_DISRUPT")})),
    ("do-not-disrupt-deleted-at-deadline-minus-own-grace", [with_annotation("pinned", "true")],
     {"terminationGracePeriod": "10m"}, (Outcome.FORCES, 570, {"pinned": ("forced", 570, "ENGINE_FORCES")})),
    ("do-not-disrupt-duration-elapsed-evicted", [with_annotation("pinned", "1h")], {},
     (Outcome.COMPLETES, 30, {"pinned": ("evict", 30, "")})),
    ("tolerates-disrupted-taint-left-in-place",
     [make_pod("tolerant", tolerations=[{"key": "karpenter.sh/disrupted", "operator": "Exists"}])], {},
     (Outcome.COMPLETES, 0, {"tolerant": ("skip", None, "KARPENTER_TOLERATES_DISRUPTED")})),
    ("daemonset-pod-evicted-in-its-tier", [DS, DS_POD, make_pod("web")], {},
     (Outcome.COMPLETES, 60, {"web": ("evict", 30, ""), "agent": ("evict", 60, "KARPENTER_DAEMONSET")})),
    ("tiers-in-order", [make_pod("crit", priority_class="system-cluster-critical"), make_pod("web")], {},
     (Outcome.COMPLETES, 60, {"web": ("evict", 30, ""), "crit": ("evict", 60, "")})),
    ("critical-tier-waits-behind-do-not-disrupt",
     [with_annotation("pinned", "true"), make_pod("crit", priority_class="system-cluster-critical")], {},
     (Outcome.STALLS, 0, {"pinned": ("wait", None, "KARPENTER_DO_NOT_DISRUPT"), "crit": ("wait", None, "BEHIND_GROUP")})),
    ("pod-under-two-pdbs-stalls", two_pdbs(), {},
     (Outcome.STALLS, 0, {"web-a": ("blocked", None, "MULTIPLE_PDBS")})),
]


@pytest.mark.parametrize("name,objects,settings,expected", KARPENTER, ids=[r[0] for r in KARPENTER])
def test_karpenter_profile(name, objects, settings, expected):
    assert outcome("karpenter", objects, **settings) == expected


def test_settings_show_their_source():
    node_settings = run("karpenter", [], terminationGracePeriod="1h").profile.settings
    assert [(s.name, s.text, s.source) for s in node_settings] == [
        ("terminationGracePeriod", "1h", Source.FLAG), ("nodes", "10%", Source.DEFAULT)]


@pytest.mark.parametrize("engine,key,value", [
    ("capi", "machineDrainRules", "[{"),
    ("capi", "machineDrainRules", rules(("r", {"behavior": "Evict"}, []))),
    ("capi", "machineDrainRules", rules(("r", {"behavior": "Skip", "order": 3}, []))),
    ("capi", "nodeDrainTimeoutSeconds", "-1"),
    ("karpenter", "terminationGracePeriod", "ten minutes"),
])
def test_invalid_setting_is_a_usage_error(engine, key, value):
    with pytest.raises(UsageError, match=key):
        profiles.load(engine, {key: value}, snapshot(*NODES))


def test_capi_machines_in_name_order_one_at_a_time_by_default():
    result = run("capi", [make_pod("a", node="n2"), make_pod("b", node="n1")], nodes=("n2", "n1"))
    assert [b.nodes for b in result.batches] == [("n1",), ("n2",)]
