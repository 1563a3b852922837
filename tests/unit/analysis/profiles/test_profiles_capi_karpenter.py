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
    # machine_controller.go reconcileDelete: pre-drain hooks are checked before isNodeDrainAllowed starts the drain
    # (and its timeout); pre-terminate hooks after the drain and the volume detach, before the infrastructure goes
    ("pre-drain-hook-stalls-before-the-drain", [make_pod("solo")], {"nodeDrainTimeoutSeconds": "30",
                                                                   "pre-drain-hooks": "backup"},
     (Outcome.STALLS, 0, {"solo": ("wait", None, "CAPI_PRE_DRAIN_HOOK")})),
    ("pre-terminate-hook-stalls-after-the-drain", [make_pod("solo", owner=("ReplicaSet", "solo"))],
     {"pre-terminate-hooks": "pre-terminate.delete.hook.machine.cluster.x-k8s.io/snapshot"},
     (Outcome.STALLS, 30, {"solo": ("evict", 30, "")})),
    ("forced-drain-then-a-pre-terminate-hook-stalls", never_allows(),
     {"nodeDrainTimeoutSeconds": "30", "pre-terminate-hooks": "pre-terminate.delete.hook.machine.cluster.x-k8s.io/s"},
     (Outcome.STALLS, 40, {"web-a": ("forced", 40, "ENGINE_FORCES")})),
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
        ("terminationGracePeriod", "1h", Source.FLAG), ("nodes", "10%", Source.DEFAULT),
        ("reason", "Drifted", Source.DEFAULT)]


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


# mdutil/util.go ResolveFenceposts (GetScaledValueFromIntOrPercent: surge rounded up, unavailable down; both 0:
# unavailable 1) and MaxUnavailable (at most the replicas; 0 replicas: 0)
FENCEPOSTS = [
    ("counts-as-given", 1, 0, 3, (1, 0)),
    ("quarter-of-ten-surge-up-unavailable-down", "25%", "25%", 10, (3, 2)),
    ("both-round-to-zero-unavailable-one", "0%", "10%", 5, (0, 1)),
    ("unavailable-at-most-the-replicas", 0, 5, 3, (0, 3)),
    ("no-replicas-nothing-unavailable", "50%", "50%", 0, (0, 0)),
]


@pytest.mark.parametrize("name,surge,unavailable,desired,expected", FENCEPOSTS, ids=[r[0] for r in FENCEPOSTS])
def test_capi_fenceposts(name, surge, unavailable, desired, expected):
    from kubectl_safety.analysis.profiles.capi import fenceposts

    assert fenceposts(surge, unavailable, desired) == expected


@pytest.mark.parametrize("settings,batches", [
    ({"maxSurge": "50%", "maxUnavailable": "0"}, [["n1", "n2"], ["n3"]]),  # 50% of the 3 drained: 2
    ({"maxSurge": "50%", "maxUnavailable": "0", "replicas": "10"}, [["n1", "n2", "n3"]]),  # 50% of 10: 5
    ({"maxSurge": "0", "maxUnavailable": "10%", "replicas": "5"}, [["n1"], ["n2"], ["n3"]]),  # both 0: 1
], ids=["percent-of-the-nodes-drained", "percent-of-the-machinedeployments-replicas", "both-zero-one-at-a-time"])
def test_capi_percentages_batch_as_the_machinedeployment_rolls_out(settings, batches):
    result = run("capi", [], nodes=("n1", "n2", "n3"), **settings)
    assert [list(b.nodes) for b in result.batches] == batches and not result.profile.notes[1:]


def test_capi_hook_is_named_with_its_setting():
    node = run("capi", [make_pod("solo")], **{"pre-drain-hooks": "backup"}).nodes[0]
    assert node.setting == "pre-drain-hooks"
    assert node.reason == ("the drain never starts: pre-drain.delete.hook.machine.cluster.x-k8s.io/backup on the "
                           "Machine holds the drain until removed (no timeout)")


# robfig/cron v3.0.1 ParseStandard (parser.go getRange, parseDescriptor; spec.go dayMatches), at a UTC minute;
# 2026-11-22 is a Sunday
CRON = [
    ("minute-and-hour", "0 9 * * *", "2026-11-22T09:00", True),
    ("not-that-minute", "0 9 * * *", "2026-11-22T09:01", False),
    ("step-from-star", "*/15 * * * *", "2026-11-22T10:45", True),
    ("n-slash-step-runs-to-the-max", "5/20 * * * *", "2026-11-22T10:45", True),
    ("range-with-step", "0 1-9/4 * * *", "2026-11-22T05:00", True),
    ("list-and-names", "0 0 * nov,dec SUN", "2026-11-22T00:00", True),
    ("day-of-month-or-weekday-when-neither-is-a-star", "0 0 1 * mon", "2026-11-22T00:00", False),
    ("day-of-month-or-weekday-either-matches", "0 0 22 * mon", "2026-11-22T00:00", True),
    ("weekday-star-means-both-must-match", "0 0 1 * *", "2026-11-22T00:00", False),
    ("star-with-step-is-no-star-either-matches", "0 0 */2 * mon", "2026-11-30T00:00", True),
    ("weekly-is-sunday-midnight", "@weekly", "2026-11-22T00:00", True),
    ("yearly-is-january-first", "@yearly", "2026-11-22T00:00", False),
]


@pytest.mark.parametrize("name,schedule,at,hit", CRON, ids=[r[0] for r in CRON])
def test_budget_schedules_read_as_robfig_cron(name, schedule, at, hit):
    from datetime import datetime, timezone

    from kubectl_safety.model.cron import parse_cron

    assert parse_cron(schedule).matches(datetime.fromisoformat(at).replace(tzinfo=timezone.utc)) is hit


@pytest.mark.parametrize("schedule", ["0 9 * *", "60 * * * *", "0 0 0 * *", "0 0 * * 7", "0 9-1 * * *", "*/0 * * * *"])
def test_budget_schedules_robfig_cron_refuses(schedule):
    from kubectl_safety.model.cron import CronError, parse_cron

    with pytest.raises(CronError):
        parse_cron(schedule)
