"""Engine profiles: settings with their sources, and the per-node outcome of the default profile (kubectl drain)."""

import pytest

from kubectl_safety.analysis import profiles
from kubectl_safety.analysis.profiles.base import Decision, PodRule, Source
from kubectl_safety.analysis.profiles.outcome import Outcome, simulate
from kubectl_safety.errors import UsageError
from tests.builders import NOW, make_node, make_pdb, make_pod, never_allows, snapshot

WEB = {"app": "web"}
NODES = [make_node("n1"), make_node("n2"), make_node("n3")]


def run(engine, objects, nodes=("n1",), **settings):
    snap = snapshot(*NODES, *objects)
    return simulate(profiles.load(engine, settings, snap), snap, list(nodes), NOW)


def by_node(result) -> dict:
    return {n.name: (n.outcome, n.at_seconds) for n in result.nodes}


# (scenario, objects, nodes, settings, expected {node: (outcome, at seconds)})
KUBECTL = [
    ("pdb-that-never-allows-stalls", never_allows(), ("n1",), {}, {"n1": (Outcome.STALLS, 0)}),
    ("pdb-that-never-allows-fails-at-timeout", never_allows(), ("n1",), {"timeout": "5m"}, {"n1": (Outcome.FAILS, 300)}),
    ("pdb-that-never-allows-forced-by-disable-eviction", never_allows(), ("n1",), {"disable-eviction": "true"},
     {"n1": (Outcome.FORCES, 0)}),
    ("single-replica-without-pdb-completes", [make_pod("solo", owner=("ReplicaSet", "solo"))], ("n1",), {},
     {"n1": (Outcome.COMPLETES, 30)}),
    ("local-storage-refused", [make_pod("cache", volumes=[{"name": "tmp", "emptyDir": {}}])], ("n1",), {},
     {"n1": (Outcome.FAILS, 0)}),
    ("local-storage-with-delete-emptydir-data", [make_pod("cache", volumes=[{"name": "tmp", "emptyDir": {}}])],
     ("n1",), {"delete-emptydir-data": "true"}, {"n1": (Outcome.COMPLETES, 30)}),
    ("pod-selector-leaves-others", [make_pod("other", labels={"app": "other"}), *never_allows()], ("n1",),
     {"pod-selector": "app=other"}, {"n1": (Outcome.COMPLETES, 30)}),
    ("batch-of-several-nodes", [make_pod("a", node="n1"), make_pod("b", node="n2"), make_pod("c", node="n3")],
     ("n1", "n2", "n3"), {}, {"n1": (Outcome.COMPLETES, 30), "n2": (Outcome.COMPLETES, 30),
                              "n3": (Outcome.COMPLETES, 30)}),
]


@pytest.mark.parametrize("name,objects,nodes,settings,expected", KUBECTL, ids=[r[0] for r in KUBECTL])
def test_kubectl_profile(name, objects, nodes, settings, expected):
    assert by_node(run("kubectl", objects, nodes, **settings)) == expected


def test_pdb_that_never_allows_names_the_pod_and_the_timeout_setting():
    node = run("kubectl", never_allows(), timeout="5m").nodes[0]
    assert node.setting == "timeout" and "default/web-a" in node.reason
    assert [(p.name, p.action, p.code) for p in node.pods] == [("web-a", "blocked", "PDB_NEVER_ALLOWS")]
    assert node.leaves.startswith("the node cordoned")


def test_forced_pods_name_the_availability_their_workload_falls_to():
    node = run("kubectl", never_allows(), **{"disable-eviction": "true"}).nodes[0]
    assert [(p.name, p.action) for p in node.pods] == [("web-a", "forced")]
    assert [(a.workload, a.ready, a.falls_to) for a in node.availability] == [("ReplicaSet default/rs", 2, 1)]


def test_refused_node_evicts_nothing_and_loses_no_data():
    objects = [make_pod("cache", volumes=[{"name": "tmp", "emptyDir": {}}]), make_pod("web", owner=("ReplicaSet", "w"))]
    node = run("kubectl", objects).nodes[0]
    assert node.outcome is Outcome.FAILS and node.left_in_place == ("default/web",)
    assert node.local_data_lost == ()


def test_local_storage_evicted_is_data_lost():
    node = run("kubectl", [make_pod("cache", volumes=[{"name": "tmp", "emptyDir": {}}])],
               **{"delete-emptydir-data": "true"}).nodes[0]
    assert node.local_data_lost == ("default/cache (tmp)",)


def test_whole_duration_and_verdict():
    result = run("kubectl", [make_pod("a", node="n1"), *never_allows()], ("n1", "n2"))
    assert result.verdict is Outcome.STALLS and result.seconds is None
    result = run("kubectl", [make_pod("a", node="n1"), make_pod("b", node="n2")], ("n1", "n2"))
    assert result.verdict is Outcome.COMPLETES and result.completes and result.seconds == 30


def test_settings_carry_their_source():
    snap = snapshot(*NODES)
    settings = {s.name: s for s in profiles.load("kubectl", {"timeout": "2m"}, snap).settings}
    assert (settings["timeout"].value, settings["timeout"].text, settings["timeout"].source) == (120, "2m", Source.FLAG)
    assert (settings["force"].value, settings["force"].source) == (False, Source.DEFAULT)


def test_object_setting_wins_and_a_flag_for_it_is_refused():
    mod = profiles.module("kubectl")
    found = {"timeout": ("10m", "DaemonSet kube-system/x")}
    resolved = profiles.resolve(mod, {}, found)
    assert (resolved["timeout"].value, resolved["timeout"].source, resolved["timeout"].origin) == \
        (600, Source.OBJECT, "DaemonSet kube-system/x")
    with pytest.raises(UsageError, match="DaemonSet kube-system/x sets it"):
        profiles.resolve(mod, {"timeout": "1m"}, found)


BAD = [
    ("unknown-engine", "nomad", {}, "unknown engine 'nomad'"),
    ("unknown-key", "kubectl", {"maxSurge": "1"}, "has no such setting"),
    ("bad-duration", "kubectl", {"timeout": "soon"}, "invalid timeout 'soon'"),
    ("bad-boolean", "kubectl", {"force": "yes"}, "use true or false"),
    ("bad-selector", "kubectl", {"pod-selector": "a in (b"}, "not a valid label selector"),
]


@pytest.mark.parametrize("name,engine,settings,message", BAD, ids=[r[0] for r in BAD])
def test_bad_settings_are_usage_errors(name, engine, settings, message):
    with pytest.raises(UsageError, match=message.replace("(", r"\(")):
        profiles.load(engine, settings, snapshot(*NODES))


def test_engine_setting_assignments():
    assert profiles.parse_assignments(["maxSurge=2", "force=true", "maxSurge=3"]) == {"maxSurge": "3", "force": "true"}
    with pytest.raises(UsageError, match="use KEY=VALUE"):
        profiles.parse_assignments(["maxSurge"])


def test_engine_rules_skip_wait_and_order_groups():
    """A profile's own rules: a skipped pod stays, a waited-for pod holds the node, a lower group goes first."""
    from dataclasses import replace

    def rule(pod, snap):
        if pod.labels.get("keep"):
            return PodRule(Decision.SKIP, "KEEP", "kept by the engine")
        if pod.labels.get("hold"):
            return PodRule(Decision.WAIT, "HOLD", "the engine waits for it")
        return None

    snap = snapshot(*NODES, make_pod("keep", labels={"keep": "1"}), make_pod("late", labels={"tier": "2"}),
                    make_pod("early", labels={"tier": "1"}, terminationGracePeriodSeconds=10))
    base = profiles.load("kubectl", {}, snap)
    grouped = replace(base, rules=(rule,), order_group=lambda pod: (int(pod.labels.get("tier", 0)), pod.labels.get("tier")))
    node = simulate(grouped, snap, ["n1"], NOW).nodes[0]
    assert node.outcome is Outcome.COMPLETES and node.left_in_place == ("default/keep",)
    assert [(p.name, p.at_seconds) for p in node.pods if p.action == "evict"] == [("early", 30), ("late", 60)]
    snap = snapshot(*NODES, make_pod("hold", labels={"hold": "1", "tier": "1"}), make_pod("late", labels={"tier": "2"}))
    node = simulate(grouped, snap, ["n1"], NOW).nodes[0]
    assert node.outcome is Outcome.STALLS
    assert {p.name: (p.action, p.code) for p in node.pods} == {"hold": ("wait", "HOLD"), "late": ("wait", "BEHIND_GROUP")}


def test_one_node_batches_proved_without_placing_answer_as_placed(monkeypatch):
    """Batches of one node whose replacements the room proves are planned without placing them: same outcome."""
    from kubectl_safety.analysis.profiles import outcome

    objects = [make_pod(f"p{i}", node=f"n{i % 3 + 1}", labels=WEB, owner=("ReplicaSet", "web")) for i in range(6)]
    objects.append(make_pdb("web", selector=WEB, max_unavailable=1, allowed=1, healthy=6, desired=5, expected=6))
    snap = snapshot(*NODES, *objects)
    prof = profiles.load("kured", {}, snap)
    proved = simulate(prof, snap, ["n1", "n2", "n3"], NOW)
    calls = []
    monkeypatch.setattr(outcome, "Room", lambda *a: calls.append(a))
    placed = simulate(prof, snap, ["n1", "n2", "n3"], NOW)
    assert calls and proved == placed and proved.verdict is Outcome.COMPLETES


def surgeable_web(pdb=None):
    """Deployment web (2 replicas, web-a on n1, web-b on n2) and its PDB (default: minAvailable 2, never allows)."""
    from tests.builders import make_workload

    d = make_workload("Deployment", "web", replicas=2, labels=WEB)
    d["status"] = {"replicas": 2, "updatedReplicas": 2, "readyReplicas": 2}
    rs = make_workload("ReplicaSet", "web-rs", replicas=2, labels=WEB, owner=("Deployment", "web"))
    rs["status"] = {"replicas": 2, "readyReplicas": 2}
    pods = [make_pod("web-a", labels=WEB, owner=("ReplicaSet", "web-rs")),
            make_pod("web-b", node="n2", labels=WEB, owner=("ReplicaSet", "web-rs"))]
    return [d, rs, *pods, pdb or make_pdb("web", selector=WEB, min_available=2, allowed=0, healthy=2, desired=2,
                                          expected=2)]


def quota_full():
    return {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "q", "namespace": "default"},
            "spec": {"hard": {"pods": "2"}}, "status": {"hard": {"pods": "2"}, "used": {"pods": "2"}}}


# (scenario, engine, objects, settings, engine alone (outcome, at), with the surge ahead (outcome, kept whole, changes))
SURGE_AHEAD = [
    ("karpenter-stall-on-a-pdb-lifted", "karpenter", surgeable_web(), {},
     Outcome.STALLS, (Outcome.COMPLETES, ("Deployment default/web",), True)),
    ("capi-force-at-drain-timeout-lifted", "capi", surgeable_web(), {"nodeDrainTimeoutSeconds": "60"},
     Outcome.FORCES, (Outcome.COMPLETES, ("Deployment default/web",), True)),
    ("eks-failure-at-15m-lifted", "eks", surgeable_web(), {}, Outcome.FAILS,
     (Outcome.COMPLETES, ("Deployment default/web",), True)),
    ("a-quota-refuses-the-surge-pods", "karpenter", [*surgeable_web(), quota_full()], {},
     Outcome.STALLS, (Outcome.STALLS, (), False)),
    ("a-statefulset-is-never-surged", "kured", [
        make_pod("db-0", labels=WEB, owner=("StatefulSet", "db")),
        make_pdb("web", selector=WEB, min_available=1, allowed=0, healthy=1, desired=1, expected=1)], {},
     Outcome.STALLS, (Outcome.STALLS, (), False)),
    ("do-not-disrupt-is-not-a-pdb-a-surge-lifts", "karpenter", [
        make_pod("keep", meta={"annotations": {"karpenter.sh/do-not-disrupt": "true"}})], {},
     Outcome.STALLS, (Outcome.STALLS, (), False)),
]


@pytest.mark.parametrize("name,engine,objects,settings,alone,ahead", SURGE_AHEAD, ids=[r[0] for r in SURGE_AHEAD])
def test_surge_ahead_of_an_engine(name, engine, objects, settings, alone, ahead):
    from kubectl_safety.analysis.profiles.ahead import surge_ahead

    snap = snapshot(*NODES, *objects)
    engine_alone = simulate(profiles.load(engine, settings, snap), snap, ["n1"], NOW)
    result = surge_ahead(engine_alone, snap, NOW)
    assert result.verdict is alone and result.nodes == engine_alone.nodes  # the verdict (and exit) are the engine's
    node = result.surge[0]
    assert (node.outcome, node.kept_whole, node.changes) == ahead


def test_surge_ahead_says_what_it_cannot_keep_and_why():
    from kubectl_safety.analysis.profiles.ahead import surge_ahead

    snap = snapshot(*NODES, *surgeable_web(), quota_full())
    node = surge_ahead(simulate(profiles.load("karpenter", {}, snap), snap, ["n1"], NOW), snap, NOW).surge[0]
    assert [what for what, _ in node.not_kept] == ["SURGE_QUOTA"] and "ResourceQuota q" in node.not_kept[0][1]
    snap = snapshot(*NODES, make_pod("db-0", labels=WEB, owner=("StatefulSet", "db")),
                    make_pdb("web", selector=WEB, min_available=1, allowed=0, healthy=1, desired=1, expected=1))
    node = surge_ahead(simulate(profiles.load("kured", {}, snap), snap, ["n1"], NOW), snap, NOW).surge[0]
    assert node.not_kept == (("default/db-0", "StatefulSet default/db is never surged (stable identity and claims): "
                              "it is unavailable while the pod moves"),)


def test_surge_ahead_of_an_engine_that_deletes_past_pdbs_says_it_lifts_none():
    from kubectl_safety.analysis.profiles.ahead import surge_ahead

    snap = snapshot(*NODES, *surgeable_web())
    result = surge_ahead(simulate(profiles.load("aks", {"forceUpgrade": "true"}, snap), snap, ["n1"], NOW), snap, NOW)
    node = result.surge[0]
    assert (node.outcome, node.changes) == (Outcome.FORCES, False)
    assert [what for what, _ in node.not_kept] == ["ENGINE_BYPASSES_PDBS"]
