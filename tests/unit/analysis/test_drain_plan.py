"""The drain planner on snapshots: kubectl filters, Eviction API rules, cumulative PDB waves, capacity."""

import pytest

from kubectl_safety.analysis.drain import DrainOptions
from kubectl_safety.model.selectors import LabelSelector
from tests.builders import NOW, container, make_node, make_pdb, make_pod, make_workload, snapshot, web
from tests.published import plan_drain

N1, N2 = make_node("n1"), make_node("n2")
APP = {"app": "web"}


def pdb(**kw):
    return make_pdb("web", selector=APP, **kw)


def plan(*objects, nodes=("n1",), **options):
    return plan_drain(snapshot(*objects), list(nodes), DrainOptions(**options), NOW)


def actions(report) -> dict:
    return {p["name"]: (p["action"], p["wave"]) for p in report["pods"]}


def codes(report, name) -> list:
    return [r["code"] for p in report["pods"] if p["name"] == name for r in p["reasons"]]


DS = make_workload("DaemonSet", "ds")
TERMINATING = {"deletionTimestamp": "2026-11-22T08:59:00Z", "deletionGracePeriodSeconds": 30}
EMPTYDIR = [{"name": "scratch", "emptyDir": {}}]

# (id, objects, drained nodes, options, expected {pod: (action, wave)}, expected {pod: code that must appear})
SCENARIOS = [
    ("budget-1-three-pods", [N1, N2, web("a"), web("b"), web("c"), pdb(allowed=1, healthy=4, desired=3, expected=4)],
     ("n1",), {}, {"a": ("evict", 1), "b": ("wait", 2), "c": ("wait", 3)}, {"a": "PDB_ALLOWS", "b": "PDB_WAIT"}),
    ("budget-2-three-pods", [N1, N2, web("a"), web("b"), web("c"), pdb(allowed=2, healthy=4, desired=2, expected=4)],
     ("n1",), {}, {"a": ("evict", 1), "b": ("evict", 1), "c": ("wait", 2)}, {"c": "PDB_WAIT"}),
    ("budget-0-never-allows", [N1, N2, web("a"), web("b", node="n2"), web("c", node="n2"),
                               pdb(min_available=3, allowed=0, healthy=3, desired=3, expected=3)],
     ("n1",), {}, {"a": ("blocked", None)}, {"a": "PDB_NEVER_ALLOWS"}),
    ("budget-0-not-healthy-yet", [N1, N2, web("a"), web("b", node="n2"), web("c", node="n2", ready=False),
                                  pdb(min_available=2, allowed=0, healthy=2, desired=2, expected=3)],
     ("n1",), {}, {"a": ("wait", None)}, {"a": "PDB_NOT_HEALTHY"}),
    ("min-available-int-while-a-replacement-starts", [N1, N2, make_workload("ReplicaSet", "rs", replicas=4, labels=APP),
                                                      web("a"), web("b", node="n2"), web("c", node="n2"),
                                                      pdb(min_available=3, allowed=0, healthy=3, desired=3, expected=3)],
     ("n1",), {}, {"a": ("wait", None)}, {"a": "PDB_NOT_HEALTHY"}),
    ("max-unavailable-0-blocks", [N1, N2, web("a"), web("b", node="n2"),
                                  pdb(max_unavailable=0, allowed=0, healthy=2, desired=2, expected=2)],
     ("n1",), {}, {"a": ("blocked", None)}, {"a": "PDB_NEVER_ALLOWS"}),
    ("two-pdbs-on-one-pod", [N1, N2, web("a"), pdb(allowed=1), make_pdb("all", selector={}, allowed=5)],
     ("n1",), {}, {"a": ("blocked", None)}, {"a": "MULTIPLE_PDBS"}),
    ("two-nodes-share-a-pdb", [N1, N2, make_node("n3"), web("a"), web("b", node="n2"), web("c", node="n3"),
                               pdb(allowed=1, healthy=3, desired=2, expected=3)],
     ("n1", "n2"), {}, {"a": ("evict", 1), "b": ("wait", 2)}, {"b": "PDB_WAIT"}),
    ("unready-always-allow-uses-no-budget", [N1, N2, web("a", ready=False), web("b"), web("c", node="n2"),
                                             pdb(allowed=1, healthy=2, desired=1, expected=3, policy="AlwaysAllow")],
     ("n1",), {}, {"a": ("evict", 1), "b": ("evict", 1)}, {"a": "UNHEALTHY_ALWAYS_ALLOW"}),
    ("unready-if-healthy-budget-healthy", [N1, N2, web("a", ready=False), web("b"), web("c", node="n2"),
                                           pdb(allowed=1, healthy=2, desired=1, expected=3)],
     ("n1",), {}, {"a": ("evict", 1), "b": ("evict", 1)}, {"a": "UNHEALTHY_BUDGET_HEALTHY"}),
    ("unready-if-healthy-budget-unhealthy", [N1, N2, web("a", ready=False), web("b", node="n2"),
                                             web("c", node="n2", ready=False), pdb(min_available=2, allowed=0, healthy=1, desired=2, expected=3)],
     ("n1",), {}, {"a": ("wait", None)}, {"a": "UNHEALTHY_NEEDS_BUDGET"}),
    ("unready-always-allow-unhealthy-pdb", [N1, N2, web("a", ready=False), web("b", node="n2"),
                                            pdb(min_available=2, allowed=0, healthy=1, desired=2, expected=3,
                                                policy="AlwaysAllow")],
     ("n1",), {}, {"a": ("evict", 1)}, {"a": "UNHEALTHY_ALWAYS_ALLOW"}),
    ("daemonset-without-ignore", [N1, N2, DS, make_pod("ds-x", owner=("DaemonSet", "ds"))],
     ("n1",), {}, {"ds-x": ("blocked", None)}, {"ds-x": "DAEMONSET"}),
    ("daemonset-with-ignore", [N1, N2, DS, make_pod("ds-x", owner=("DaemonSet", "ds"))],
     ("n1",), {"ignore_daemonsets": True}, {"ds-x": ("skip", None)}, {"ds-x": "DAEMONSET"}),
    ("daemonset-orphaned", [N1, N2, DS, make_pod("ds-x", owner=("DaemonSet", "gone"))],
     ("n1",), {"ignore_daemonsets": True}, {"ds-x": ("blocked", None)}, {"ds-x": "DAEMONSET_ORPHANED"}),
    ("daemonset-orphaned-force", [N1, N2, DS, make_pod("ds-x", owner=("DaemonSet", "gone"))],
     ("n1",), {"force": True}, {"ds-x": ("evict", 1)}, {"ds-x": "DAEMONSET_ORPHANED"}),
    ("daemonset-terminal-pod", [N1, N2, DS, make_pod("ds-x", owner=("DaemonSet", "ds"), phase="Succeeded")],
     ("n1",), {}, {"ds-x": ("evict", 1)}, {"ds-x": "TERMINAL"}),
    ("mirror-pod", [N1, N2, make_pod("static", owner=None, meta={"annotations": {"kubernetes.io/config.mirror": "x"}})],
     ("n1",), {}, {"static": ("skip", None)}, {"static": "MIRROR_POD"}),
    ("emptydir-without-flag", [N1, N2, make_pod("cache", volumes=EMPTYDIR)],
     ("n1",), {}, {"cache": ("blocked", None)}, {"cache": "LOCAL_STORAGE"}),
    ("emptydir-with-flag", [N1, N2, make_pod("cache", volumes=EMPTYDIR)],
     ("n1",), {"delete_emptydir_data": True}, {"cache": ("evict", 1)}, {"cache": "LOCAL_STORAGE"}),
    ("bare-pod-without-force", [N1, N2, make_pod("bare", owner=None)],
     ("n1",), {}, {"bare": ("blocked", None)}, {"bare": "UNMANAGED"}),
    ("bare-pod-with-force", [N1, N2, make_pod("bare", owner=None)],
     ("n1",), {"force": True}, {"bare": ("evict", 1)}, {"bare": "UNMANAGED"}),
    ("terminal-pod-skips-pdb", [N1, N2, web("a", phase="Succeeded", owner=None),
                                pdb(min_available=5, allowed=0, healthy=0, desired=5, expected=1)],
     ("n1",), {}, {"a": ("evict", 1)}, {"a": "TERMINAL"}),
    ("pending-pod-skips-pdb", [N1, N2, web("a", phase="Pending"), pdb(allowed=0, healthy=0, desired=1, expected=1)],
     ("n1",), {}, {"a": ("evict", 1)}, {"a": "PENDING"}),
    ("terminating-pod-skips-pdb", [N1, N2, web("a", meta=TERMINATING), pdb(allowed=0, healthy=0, desired=1, expected=1)],
     ("n1",), {}, {"a": ("evict", 1)}, {"a": "ALREADY_TERMINATING"}),
    ("skip-wait-for-delete-timeout", [N1, N2, web("a", meta=TERMINATING)],
     ("n1",), {"skip_wait_for_delete_timeout": 10}, {"a": ("skip", None)}, {"a": "SKIP_DELETED"}),
    ("disable-eviction-deletes", [N1, N2, web("a"), pdb(allowed=0), make_pdb("all", selector={})],
     ("n1",), {"disable_eviction": True}, {"a": ("delete", 1)}, {"a": "EVICTION_DISABLED"}),
    ("kube-system-without-pdb", [N1, N2, make_pod("dns", namespace="kube-system")],
     ("n1",), {}, {"dns": ("evict", 1)}, {"dns": "KUBE_SYSTEM_NO_PDB"}),
    ("safe-to-evict-false", [N1, N2, make_pod("keep", meta={"annotations": {
        "cluster-autoscaler.kubernetes.io/safe-to-evict": "false"}})],
     ("n1",), {}, {"keep": ("evict", 1)}, {"keep": "SAFE_TO_EVICT_FALSE"}),
    ("capacity-no-room", [N1, make_node("n2", cpu="1"), make_pod("big", cpu="2")],
     ("n1",), {}, {"big": ("evict", 1)}, {"big": "REPLACEMENT_UNPLACEABLE"}),
    ("capacity-taint", [N1, make_node("n2", taints=[{"key": "gpu", "value": "yes", "effect": "NoSchedule"}]),
                        make_pod("a")],
     ("n1",), {}, {"a": ("evict", 1)}, {"a": "REPLACEMENT_UNPLACEABLE"}),
    ("capacity-selector", [N1, N2, make_pod("a", nodeSelector={"disk": "ssd"})],
     ("n1",), {}, {"a": ("evict", 1)}, {"a": "REPLACEMENT_UNPLACEABLE"}),
    ("capacity-cordoned-node", [N1, make_node("n2", unschedulable=True), make_pod("a")],
     ("n1",), {}, {"a": ("evict", 1)}, {"a": "REPLACEMENT_UNPLACEABLE"}),
    ("unplaceable-replacement-exhausts-pdb", [N1, make_node("n2", cpu="1"), web("a", cpu="2"), web("b", cpu="2"),
                                              web("c", node="n2"), pdb(allowed=1, healthy=3, desired=2, expected=3)],
     ("n1",), {}, {"a": ("evict", 1), "b": ("blocked", None)}, {"a": "REPLACEMENT_UNPLACEABLE", "b": "PDB_EXHAUSTED"}),
    ("bare-pods-never-come-back", [N1, N2, web("a", owner=None), web("b", owner=None), web("c", node="n2"),
                                   pdb(allowed=1, healthy=3, desired=2, expected=3)],
     ("n1",), {"force": True}, {"a": ("evict", 1), "b": ("blocked", None)}, {"b": "PDB_EXHAUSTED"}),
]


@pytest.mark.parametrize("objects, nodes, options, expected, reason", [s[1:] for s in SCENARIOS],
                         ids=[s[0] for s in SCENARIOS])
def test_scenario(objects, nodes, options, expected, reason):
    report = plan(*objects, nodes=nodes, **options)
    got = actions(report)
    assert {k: got[k] for k in expected} == expected
    for name, code in reason.items():
        assert code in codes(report, name)
    assert report["safe"] == (not report["risks"])
    assert report["safe"] or any(a == "blocked" for a, _ in got.values()) or report["capacity"]["unplaceable"] \
        or any(r["code"] == "PDB_BYPASSED" for r in report["risks"])


def test_all_reasons_are_reported_not_just_the_last():
    report = plan(N1, N2, make_pod("bare", owner=None, volumes=EMPTYDIR))
    assert codes(report, "bare") == ["LOCAL_STORAGE", "UNMANAGED"]
    report = plan(N1, N2, make_pod("bare", owner=None, volumes=EMPTYDIR), force=True, delete_emptydir_data=True)
    assert codes(report, "bare") == ["LOCAL_STORAGE", "UNMANAGED"]
    assert actions(report)["bare"] == ("evict", 1)


def test_pod_selector_limits_the_pods():
    report = plan(N1, N2, make_pod("a", labels={"tier": "x"}), make_pod("b", labels={"tier": "y"}),
                  pod_selector=LabelSelector.from_string("tier=x"))
    assert [p["name"] for p in report["pods"]] == ["a"]


def test_json_shape_and_pdb_numbers():
    report = plan(N1, N2, web("a"), web("b"), pdb(allowed=1, healthy=4, desired=3, expected=4))
    assert report["kind"] == "DrainPlan" and report["apiVersion"] == "safety.kubectl.io/v1"
    pod = report["pods"][0]
    assert set(pod) >= {"namespace", "name", "node", "action", "reasons", "pdb", "wave"}
    assert pod["pdb"] == "default/web"
    [b] = report["pdbs"]
    assert (b["disruptionsAllowed"], b["podsToEvict"], b["waves"]) == (1, 2, 2)
    assert report["capacity"]["unplaceable"] == []
    assert [w["wave"] for w in report["waves"]] == [1, 2]


def test_unplaceable_lists_scheduler_style_reasons():
    report = plan(N1, make_node("n2", cpu="1"), make_node("n3", taints=[{"key": "k", "effect": "NoSchedule"}]),
                  make_pod("big", cpu="2"))
    [u] = report["capacity"]["unplaceable"]
    assert u["name"] == "big"
    assert "Insufficient cpu" in u["reason"] and "untolerated taint" in u["reason"] and "being drained" in u["reason"]


def test_replacements_consume_capacity_cumulatively():
    report = plan(N1, make_node("n2", cpu="1"), make_pod("a", cpu="600m"), make_pod("b", cpu="600m"))
    placed = {p["name"]: p["replacementNode"] for p in report["pods"]}
    assert sorted(placed.values(), key=str) == [None, "n2"]


def test_pod_count_limit():
    report = plan(N1, make_node("n2", pods="1"), make_pod("a"), make_pod("x", node="n2"))
    assert "Too many pods" in report["capacity"]["unplaceable"][0]["reason"]


def test_required_anti_affinity_on_hostname():
    anti = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": APP}, "topologyKey": "kubernetes.io/hostname"}]}}
    report = plan(N1, N2, make_node("n3"), web("a", affinity=anti), web("b", affinity=anti),
                  web("c", node="n2", affinity=anti))
    placed = sorted(str(p["replacementNode"]) for p in report["pods"])
    assert placed == ["None", "n3"]


HOSTNAME = "kubernetes.io/hostname"


def required(kind, labels, key=HOSTNAME):
    return {kind: {"requiredDuringSchedulingIgnoredDuringExecution": [{"labelSelector": {"matchLabels": labels},
                                                                        "topologyKey": key}]}}


def with_host_port(name, node, port, ip=None):
    ports = [{"containerPort": port, "hostPort": port, **({"hostIP": ip} if ip else {})}]
    return make_pod(name, node=node, labels=APP, containers=[container(ports=ports)])


# (id, objects on n1 (drained), n2 and n3, where pod "a"'s replacement may go (None: nowhere), reason part)
PLACEMENT = [
    ("host-port-taken-on-n2", [with_host_port("a", "n1", 8080), with_host_port("x", "n2", 8080)], "n3", None),
    ("host-port-taken-everywhere", [with_host_port("a", "n1", 8080), with_host_port("x", "n2", 8080),
                                    with_host_port("y", "n3", 8080, ip="10.0.0.3")], None, "free ports"),
    ("host-port-other-ip-is-free", [with_host_port("a", "n1", 8080, ip="10.0.0.1"), with_host_port("x", "n2", 8080, ip="10.0.0.2"),
                                    with_host_port("y", "n3", 8080)], "n2", None),
    ("existing-anti-affinity-on-n2", [web("a"), make_pod("guard", node="n2", labels={"app": "guard"},
                                                         affinity=required("podAntiAffinity", APP))], "n3", None),
    ("existing-anti-affinity-everywhere", [web("a")] + [make_pod(f"guard{i}", node=n, labels={"app": "guard"},
                                                                 affinity=required("podAntiAffinity", APP))
                                                        for i, n in enumerate(("n2", "n3"))], None, "existing pods anti-affinity"),
    ("required-affinity-follows-the-cache", [web("a", affinity=required("podAffinity", {"app": "cache"})),
                                             make_pod("cache", node="n3", labels={"app": "cache"})], "n3", None),
    # the partner's replacement lands after a's first try; the scheduler retries a then (live placement fuzzer)
    ("required-affinity-partner-leaves-too", [web("a", affinity=required("podAffinity", {"app": "cache"})),
                                              make_pod("cache", node="n1", labels={"app": "cache"})], "n2 n3", None),
    ("required-affinity-partner-leaves-for-good", [web("a", affinity=required("podAffinity", {"app": "cache"})),
                                                   make_pod("cache", node="n1", labels={"app": "cache"}, owner=None)],
     None, "pod affinity"),
    ("required-affinity-to-itself-with-no-match", [web("a", affinity=required("podAffinity", APP))], "n2 n3", None),
]


@pytest.mark.parametrize("objects, node, reason", [p[1:] for p in PLACEMENT], ids=[p[0] for p in PLACEMENT])
def test_replacement_placement(objects, node, reason):
    report = plan(N1, N2, make_node("n3"), *objects, force=True)
    (a,) = [p for p in report["pods"] if p["name"] == "a"]
    assert (a["replacementNode"] in node.split()) if node else a["replacementNode"] is None
    if reason:
        [u] = [u for u in report["capacity"]["unplaceable"] if u["name"] == "a"]
        assert reason in u["reason"]


def test_placed_replacements_block_each_other_by_host_port():
    report = plan(N1, N2, with_host_port("a", "n1", 8080), with_host_port("b", "n1", 8080))
    assert sorted(str(p["replacementNode"]) for p in report["pods"]) == ["None", "n2"]


def test_topology_spread_do_not_schedule():
    spread = [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "DoNotSchedule",
               "labelSelector": {"matchLabels": APP}}]
    nodes = [make_node("n1", zone="a"), make_node("n2", zone="a"), make_node("n3", zone="b")]
    report = plan(*nodes, web("x", topologySpreadConstraints=spread), web("y", node="n3", topologySpreadConstraints=spread))
    # zone a keeps 0 pods, zone b has 1: the replacement must go to zone a (n2)
    assert report["pods"][0]["replacementNode"] == "n2"


def test_waves_estimate_grace_periods():
    report = plan(N1, N2, web("a", terminationGracePeriodSeconds=60), web("b", terminationGracePeriodSeconds=10),
                  pdb(allowed=1, healthy=4, desired=3, expected=4))
    w1, w2 = report["waves"]
    assert w1["gracePeriodSeconds"] in (10, 60) and w1["readySeconds"] > 0 and w2["readySeconds"] == 0
    assert report["estimatedSeconds"] == w1["estimatedSeconds"] + w2["estimatedSeconds"]
    forced = plan(N1, N2, web("a", terminationGracePeriodSeconds=60), grace_period=5)
    assert forced["waves"][0]["gracePeriodSeconds"] == 5


def test_pdb_selecting_nothing_is_a_warning():
    report = plan(N1, N2, make_pod("a"), make_pdb("orphan", selector={"app": "nothing"}))
    assert [w["code"] for w in report["warnings"]] == ["PDB_SELECTS_NOTHING"]


def test_scales_to_a_large_cluster():
    """1,000 nodes x 30 pods: the plan of two nodes (its speed is measured by benchmarks/run.py)."""
    objects = [make_node(f"n{i}", cpu="64", memory="256Gi", pods="110") for i in range(1000)]
    objects += [make_pod(f"p{i}-{j}", node=f"n{i}", cpu="100m", memory="100Mi", labels={"app": f"a{j}"})
                for i in range(1000) for j in range(30)]
    objects += [make_pdb(f"a{j}", selector={"app": f"a{j}"}, allowed=1, healthy=1000, desired=999, expected=1000)
                for j in range(30)]
    snap = snapshot(*objects)
    report = plan_drain(snap, ["n1", "n2"], DrainOptions(), NOW)
    assert report["summary"]["evict"] == 30 and report["summary"]["wait"] == 30


def test_pods_that_stay_take_no_room():
    """A pod its PDB never lets go stays put: its replacement must not use the spare capacity."""
    report = plan(N1, make_node("n2", cpu="1"), web("a", cpu="600m"), web("b", node="n2", cpu="100m"),
                  pdb(min_available=2, allowed=0, healthy=2, desired=2, expected=2), make_pod("other", cpu="600m"))
    assert actions(report)["a"] == ("blocked", None)
    assert {p["name"]: p["replacementNode"] for p in report["pods"]}["other"] == "n2"


# -- --no-capacity on a node-scoped read --------------------------------------------------------
def node_scoped(snap, nodes):
    """What drain --no-capacity reads: only the drained nodes' pods (no namespace is complete)."""
    return snap.replace(pods=[p for p in snap.pods if p.node_name in nodes], complete_pod_namespaces=frozenset())


# Without the owners' scale, a PDB whose pods are momentarily fewer than minAvailable (a replacement
# not yet created) is judged from its status alone: blocked rather than waiting (the safe side).
FROM_STATUS_ONLY = {"min-available-int-while-a-replacement-starts": {"a": ("blocked", None)}}


@pytest.mark.parametrize("id, objects, nodes, options", [s[:4] for s in SCENARIOS], ids=[s[0] for s in SCENARIOS])
def test_node_scoped_plan_without_capacity_agrees(id, objects, nodes, options):
    """Same actions and waves as the full plan, except where a replacement fits nowhere."""
    full = plan(*objects, nodes=nodes, **options)
    scoped = plan_drain(node_scoped(snapshot(*objects), nodes), list(nodes),
                        DrainOptions(**{**options, "check_capacity": False}), NOW)
    assert scoped["capacity"] == {"checked": False, "ok": None, "unplaceable": []}
    assert all(p["replacementNode"] is None for p in scoped["pods"])
    if full["capacity"]["unplaceable"]:  # the full plan spends budgets on pods that cannot come back
        assert not any(r["code"] == "REPLACEMENT_UNPLACEABLE" for p in scoped["pods"] for r in p["reasons"])
        return
    assert actions(scoped) == {**actions(full), **FROM_STATUS_ONLY.get(id, {})}
    assert scoped["safe"] == full["safe"] or id in FROM_STATUS_ONLY


def test_node_scoped_pdb_numbers_come_from_status():
    objects = [N1, N2, web("a"), web("b", node="n2"), web("c", node="n2"),
               pdb(min_available=2, allowed=1, healthy=3, desired=2, expected=3)]
    scoped = plan_drain(node_scoped(snapshot(*objects), {"n1"}), ["n1"], DrainOptions(check_capacity=False), NOW)
    (budget,) = scoped["pdbs"]
    assert (budget["matchingPods"], budget["currentHealthy"], budget["expectedPods"]) == (None, 3, 3)
    assert budget["neverAllows"] is None and actions(scoped) == {"a": ("evict", 1)}


def test_node_scoped_read_does_not_warn_about_pdbs_selecting_nothing_here():
    objects = [N1, N2, web("a"), make_pod("x", node="n2", labels={"app": "other"}),
               make_pdb("other", selector={"app": "other"}, allowed=1)]
    full = plan(*objects)
    scoped = plan_drain(node_scoped(snapshot(*objects), {"n1"}), ["n1"], DrainOptions(check_capacity=False), NOW)
    assert not [w for w in full["warnings"] if w["code"] == "PDB_SELECTS_NOTHING"]
    assert not [w for w in scoped["warnings"] if w["code"] == "PDB_SELECTS_NOTHING"]


def test_drain_blocks_on_pdb_over_job_pods_instead_of_waiting():
    """Jobs have no scale subresource: the disruption controller fails safe to 0 allowed forever."""
    ref = {"apiVersion": "batch/v1", "kind": "Job", "name": "batch", "uid": "uid-batch", "controller": True}
    pods = [make_pod(f"b-{i}", labels={"app": "batch"}, owner=None, meta={"ownerReferences": [ref]}) for i in range(2)]
    report = plan(N1, N2, make_workload("Job", "batch", labels={"app": "batch"}),
                  make_pdb("batch", selector={"app": "batch"}, max_unavailable=1, allowed=1), *pods)
    assert not report["safe"] and {p["action"] for p in report["pods"]} == {"blocked"}
    assert "SyncFailed" in report["pdbs"][0]["neverAllows"]


def test_pdb_sync_failed_status_is_not_reported_as_merely_stale():
    ref = {"apiVersion": "batch/v1", "kind": "Job", "name": "batch", "uid": "uid-batch", "controller": True}
    budget = make_pdb("batch", selector={"app": "batch"}, max_unavailable=1)
    budget["metadata"]["generation"], budget["status"]["observedGeneration"] = 1, 0  # the fail-safe leaves it
    budget["status"]["conditions"] = [{"type": "DisruptionAllowed", "status": "False", "reason": "SyncFailed",
                                       "message": "jobs.batch does not implement the scale subresource"}]
    report = plan(N1, N2, budget, make_pod("b-0", labels={"app": "batch"}, owner=None, meta={"ownerReferences": [ref]}))
    codes = {r["code"] for r in report["pods"][0]["reasons"]}
    assert "PDB_SYNC_FAILED" in codes and "PDB_STATUS_STALE" not in codes and not report["safe"]


def test_wave_of_a_pre_stop_hook_overrunning_its_grace_period_lasts_two_seconds_more():
    hook = container("app", lifecycle={"preStop": {"exec": {"command": ["sleep", "10"]}}})
    report = plan(N1, N2, make_pod("overrun", node="n1", containers=[hook], terminationGracePeriodSeconds=2),
                  make_pod("plain", node="n1", terminationGracePeriodSeconds=3), force=True)
    assert [(w["gracePeriodSeconds"], w["estimatedSeconds"]) for w in report["waves"]] == [(4, 4)]


def test_drain_replacement_goes_where_the_scheduler_scores_highest():
    """A PreferNoSchedule taint weighs 3x in the Score stage: the roomier tainted node loses to a
    fuller one, as the scheduler ranks them (the old free-fraction ranking picked the roomy one)."""
    roomy = make_node("n2", cpu="16", memory="64Gi", taints=[{"key": "spot", "effect": "PreferNoSchedule"}])
    report = plan(N1, roomy, make_node("n3"), make_pod("busy", node="n3", cpu="2"), make_pod("a", cpu="500m"))
    (a,) = [p for p in report["pods"] if p["name"] == "a"]
    assert a["replacementNode"] == "n3"
    assert "REPLACEMENT_NODE_TIED" not in codes(report, "a")


def test_drain_names_the_nodes_tied_for_a_replacement():
    """Identical empty nodes score alike: the scheduler picks one at random; the plan counts the
    replacement on the first by name and says which others tie."""
    report = plan(N1, N2, make_node("n3"), make_node("n4"), make_pod("a", cpu="500m"))
    (a,) = [p for p in report["pods"] if p["name"] == "a"]
    assert a["replacementNode"] == "n2"
    [tie] = [r for r in a["reasons"] if r["code"] == "REPLACEMENT_NODE_TIED"]
    assert tie["severity"] == "info" and "n3" in tie["message"] and "n4" in tie["message"]
