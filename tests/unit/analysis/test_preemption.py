"""analysis/preemption.py: each preemption step on small snapshots, scenario by scenario."""

import pytest

from kubectl_safety.analysis.priority import UnknownPriorityClass
from kubectl_safety.model.pods import Pod
from tests.builders import NOW, make_class, make_node, make_pdb, make_pod, snapshot
from tests.published import preview

HIGH = 1000


def pending(name="hi", priority=HIGH, cpu="2", **kw):
    kw.setdefault("owner", None)
    return make_pod(name, node=None, cpu=cpu, priority=priority, phase="Pending", start=None, **kw)


def low(name, node, cpu="1", priority=0, start="2026-11-20T08:00:00Z", **kw):
    return make_pod(name, node=node, cpu=cpu, priority=priority, start=start, **kw)


def run(pod_raw, *objects, replicas=1):
    snap = snapshot(pod_raw, *objects)
    pod = snap.pod(pod_raw["metadata"]["namespace"], pod_raw["metadata"]["name"])
    return preview(pod, snap, NOW, replicas)


def victims(report):
    return sorted(v["name"] for v in report["victims"])


def excluded(report):
    return {e["node"]: e["reason"] for e in report["excluded"]}


# -- step 1 and 2 ---------------------------------------------------------------------------------

def test_fits_without_preemption_lists_feasible_nodes():
    r = run(pending(cpu="1"), make_node("n1"), make_node("n2", cpu="1"), low("a", "n2"))
    assert (r["outcome"], r["fitsWithoutPreemption"], r["feasibleNodes"]) == ("fits", True, ["n1"])
    assert r["victims"] == [] and r["eligible"] is None and r["node"] == "n1"


FULL = [make_node("n1", cpu="2"), low("a", "n1", cpu="2")]
PREEMPTING = {"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"}

ELIGIBILITY = [
    ("policy-never", pending(preemptionPolicy="Never"), FULL, (False, "not-eligible")),
    ("seed-000-class-with-never", pending(priority=None, priority_class="high-priority"),
     FULL + [make_class("high-priority", 1000000, policy="Never")], (False, "not-eligible")),
    ("nominated-node-victim-terminating-by-preemption",
     pending(status={"nominatedNodeName": "n1"}),
     [make_node("n1", cpu="2"), low("a", "n1", cpu="2", meta={"deletionTimestamp": "2026-11-22T08:59:00Z"},
                                    status={"conditions": [PREEMPTING]})], (False, "waiting")),
    ("nominated-node-terminating-for-other-reason",
     pending(status={"nominatedNodeName": "n1"}),
     [make_node("n1", cpu="2"), low("a", "n1", cpu="2", meta={"deletionTimestamp": "2026-11-22T08:59:00Z"})],
     (True, "preempt")),
    ("nominated-node-hopeless-re-preempts",
     pending(status={"nominatedNodeName": "n2"}),
     FULL + [make_node("n2", cpu="2", taints=[{"key": "x", "effect": "NoSchedule"}]),
             low("b", "n2", cpu="2", meta={"deletionTimestamp": "2026-11-22T08:59:00Z"},
                 status={"conditions": [PREEMPTING]})], (True, "preempt")),
    # the preempted pod has exited (terminal, kept by a finalizer): the scheduler's cache no longer
    # holds it, so nothing on the nominated node is waited for and the pod preempts again
    ("nominated-node-terminal-victim-is-not-waited-for",
     pending(status={"nominatedNodeName": "n1"}),
     FULL + [low("done", "n1", cpu="2", phase="Failed", meta={"deletionTimestamp": "2026-11-22T08:59:00Z",
                                                               "finalizers": ["example.com/hold"]},
                 status={"conditions": [PREEMPTING]})], (True, "preempt")),
    # skipPodSchedule: a pod being deleted never enters a scheduling cycle, so it never preempts
    ("preemptor-being-deleted-is-never-scheduled",
     pending(meta={"deletionTimestamp": "2026-11-22T08:59:00Z", "finalizers": ["example.com/hold"]}), FULL,
     (False, "not-scheduled")),
]


@pytest.mark.parametrize("pod,objects,expected", [s[1:] for s in ELIGIBILITY], ids=[s[0] for s in ELIGIBILITY])
def test_eligibility(pod, objects, expected):
    """PodEligibleToPreemptOthers, and the pods the scheduler never takes at all."""
    r = run(pod, *objects)
    assert (r["eligible"], r["outcome"]) == expected
    assert r["fitsWithoutPreemption"] is False
    assert r["node"] == {"waiting": "n1", "preempt": "n1", "not-eligible": None, "not-scheduled": None}[r["outcome"]]


# -- step 3: candidates and exclusions -------------------------------------------------------------

ZONE = "topology.kubernetes.io/zone"
EXCLUSIONS = [
    ("node-selector", pending(nodeSelector={"disk": "ssd"}),
     [make_node("n2", cpu="2", labels={"disk": "ssd"}), low("b", "n2", cpu="2")], "node affinity/selector"),
    ("taint", pending(), [make_node("n2", cpu="2"), low("b", "n2", cpu="2")], "untolerated taint"),
    ("unschedulable", pending(), [make_node("n2", cpu="2"), low("b", "n2", cpu="2")], "unschedulable"),
    ("too-large-for-allocatable", pending(cpu="3"), [make_node("n2", cpu="3"), low("b", "n2", cpu="2")],
     "Insufficient cpu (requests 3, allocatable 2)"),
    ("equal-priority-never-preempted", pending(), [make_node("n2", cpu="3"), low("b", "n2", cpu="2")],
     "equal priority is never preempted"),
    ("no-lower-priority-pods", pending(), [make_node("n2", cpu="3"), low("b", "n2", cpu="2")],
     "no lower-priority pods"),
    ("affinity-to-lower-priority-pod",
     pending(affinity={"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
         {"labelSelector": {"matchLabels": {"app": "a"}}, "topologyKey": "kubernetes.io/hostname"}]}}),
     [make_node("n2", cpu="3"), low("b", "n2", cpu="2")], "satisfied only by lower-priority pods"),
    ("anti-affinity-across-nodes",
     pending(affinity={"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
         {"labelSelector": {"matchLabels": {"app": "guard"}}, "topologyKey": ZONE}]}}),
     [make_node("n2", cpu="3", zone="z1"), low("b", "n2", cpu="2"), low("guard", "n2", cpu="0", priority=HIGH)],
     "preemption never crosses nodes"),
]


def _node_under_test(case, objects):
    """n1 is always the excluded node; variants tweak it."""
    kwargs = {"cpu": "2", "zone": "z1"}
    if case == "node-selector":
        kwargs["labels"] = {"disk": "hdd"}
    if case == "taint":
        kwargs["taints"] = [{"key": "dedicated", "value": "x", "effect": "NoSchedule"}]
    if case == "unschedulable":
        kwargs["unschedulable"] = True
    if case == "equal-priority-never-preempted":
        return [make_node("n1", **kwargs), low("eq", "n1", cpu="2", priority=HIGH)]
    if case == "no-lower-priority-pods":
        return [make_node("n1", **kwargs), low("hp", "n1", cpu="2", priority=HIGH + 1)]
    if case == "affinity-to-lower-priority-pod":
        return [make_node("n1", **kwargs), low("a", "n1", cpu="2")]
    if case == "anti-affinity-across-nodes":
        return [make_node("n1", **kwargs), low("a", "n1", cpu="2")]
    return [make_node("n1", **kwargs), low("a", "n1", cpu="2")]


@pytest.mark.parametrize("case,pod,others,reason", EXCLUSIONS, ids=[s[0] for s in EXCLUSIONS])
def test_excluded_nodes_with_reason(case, pod, others, reason):
    r = run(pod, *_node_under_test(case, others), *others)
    assert reason in excluded(r)["n1"]
    assert "n1" not in [c["node"] for c in r["candidates"]]


def test_candidate_only_where_removing_all_lower_pods_fits():
    r = run(pending(cpu="3"), make_node("n1"), low("a", "n1", cpu="2"), low("h", "n1", cpu="2", priority=HIGH + 1),
            make_node("n2"), low("b", "n2", cpu="2"), low("c", "n2", cpu="2"))
    assert [c["node"] for c in r["candidates"]] == ["n2"]
    assert "does not fit even after removing all 1 lower-priority pods" in excluded(r)["n1"]
    assert r["sampling"]["potentialNodes"] == 2


# -- step 4: victims and reprieve ----------------------------------------------------------------

VICTIMS = [
    ("reprieve-keeps-what-fits", pending(cpu="2"),
     [make_node("n1"), low("a", "n1"), low("b", "n1"), low("c", "n1"), low("d", "n1")], ["c", "d"]),
    ("lowest-priority-go-first", pending(cpu="2"),
     [make_node("n1"), low("a", "n1", priority=5), low("b", "n1", priority=1), low("c", "n1", priority=3),
      low("d", "n1", priority=2)], ["b", "d"]),
    ("reprieve-by-start-time-newest-go", pending(cpu="1"),
     [make_node("n1", cpu="2"), low("old", "n1", start="2026-11-20T08:00:00Z"),
      low("new", "n1", start="2026-11-21T08:00:00Z")], ["new"]),
    ("not-started-is-least-important", pending(cpu="1"),
     [make_node("n1", cpu="2"), low("old", "n1", start="2026-11-22T08:59:00Z"), low("never", "n1", start=None)],
     ["never"]),
    ("pdb-protected-reprieved-first", pending(cpu="1"),
     [make_node("n1", cpu="2"), low("old", "n1", labels={"app": "x"}, start="2026-11-20T08:00:00Z"),
      low("new", "n1", labels={"app": "guarded"}, start="2026-11-21T08:00:00Z"),
      make_pdb("g", selector={"app": "guarded"}, allowed=0)], ["old"]),
    ("pdb-with-budget-is-not-protected", pending(cpu="1"),
     [make_node("n1", cpu="2"), low("old", "n1", labels={"app": "x"}, start="2026-11-20T08:00:00Z"),
      low("new", "n1", labels={"app": "guarded"}, start="2026-11-21T08:00:00Z"),
      make_pdb("g", selector={"app": "guarded"}, allowed=1)], ["new"]),
    ("empty-pdb-selector-matches-nothing", pending(cpu="1"),
     [make_node("n1", cpu="2"), low("old", "n1", start="2026-11-20T08:00:00Z"),
      low("new", "n1", start="2026-11-21T08:00:00Z"), make_pdb("all", selector={}, allowed=0)], ["new"]),
    ("disrupted-pod-not-double-counted", pending(cpu="1"),
     [make_node("n1", cpu="2"), low("old", "n1", labels={"app": "x"}, start="2026-11-20T08:00:00Z"),
      low("new", "n1", labels={"app": "guarded"}, start="2026-11-21T08:00:00Z"),
      make_pdb("g", selector={"app": "guarded"}, allowed=0, disrupted={"new": "2026-11-22T08:59:00Z"})], ["new"]),
]


@pytest.mark.parametrize("pod,objects,expected", [s[1:] for s in VICTIMS], ids=[s[0] for s in VICTIMS])
def test_victims(pod, objects, expected):
    r = run(pod, *objects)
    assert r["outcome"] == "preempt" and r["node"] == "n1"
    assert victims(r) == expected


@pytest.mark.parametrize("pod,objects,expected", [s[1:] for s in VICTIMS], ids=[s[0] for s in VICTIMS])
def test_the_preview_leaves_no_cyclic_garbage_so_the_cli_runs_it_without_the_collector(pod, objects, expected):
    import gc

    snap = snapshot(pod, *objects)
    target = snap.pod(pod["metadata"]["namespace"], pod["metadata"]["name"])
    gc.collect()
    gc.disable()
    try:
        assert victims(preview(target, snap, NOW, 2)) and gc.collect() == 0
    finally:
        gc.enable()


def test_pdb_violated_when_nothing_else_works():
    r = run(pending(cpu="2"), make_node("n1", cpu="2"), low("a", "n1", cpu="2", labels={"app": "db"}),
            make_pdb("db", selector={"app": "db"}, allowed=0))
    assert r["victims"][0]["pdbViolation"] is True and r["victims"][0]["pdbs"] == ["db"]
    assert r["candidates"][0]["pdbViolations"] == 1
    assert "PDB_VIOLATED_BY_PREEMPTION" in [f["code"] for f in r["findings"]]


def test_every_matching_pdb_is_decremented():
    objects = [make_node("n1", cpu="2"), low("a", "n1", cpu="2", labels={"app": "db", "tier": "x"}),
               make_pdb("one", selector={"app": "db"}, allowed=1), make_pdb("two", selector={"tier": "x"}, allowed=0)]
    r = run(pending(cpu="2"), *objects)
    assert r["victims"][0]["pdbs"] == ["two"]


def test_victims_most_important_first():
    r = run(pending(cpu="4"), make_node("n1"), low("a", "n1", priority=1), low("b", "n1", priority=7),
            low("c", "n1", priority=3, labels={"app": "g"}), low("d", "n1", priority=2), make_pdb("g", selector={"app": "g"}))
    assert [v["name"] for v in r["victims"]] == ["b", "c", "d", "a"]


def test_equally_important_victims_keep_their_reprieve_order():
    """Found by test_preemption_preview: after reprieving PDB violators first, upstream re-sorts the
    victims by importance alone (a stable sort for small lists), so two victims of equal priority
    and start time stay in reprieve order (the PDB violator first), not in name order."""
    objects = [make_node("n1", cpu="1"), low("a", "n1", cpu="100m", labels={"app": "g"}),
               low("b", "n1", cpu="100m", labels={"app": "g"}), make_pdb("g", selector={"app": "g"}, allowed=1)]
    r = run(pending(cpu="1"), *objects)
    assert [(v["name"], v["pdbViolation"]) for v in r["victims"]] == [("b", True), ("a", False)]


def host_port(port=8080, sidecar=False):
    c = {"name": "s" if sidecar else "c", "image": "x", "ports": [{"containerPort": 80, "hostPort": port}]}
    return {"initContainers": [{**c, "restartPolicy": "Always"}]} if sidecar else {"containers": [c]}


def test_host_port_shared_by_two_pods_is_freed_by_preempting_either():
    """Found by test_preemption_preview: the scheduler's NodeInfo keeps used host ports as a set,
    so removing one of two pods that both claim a port frees it for the dry run (the other, of
    equal priority, stays) and the node is a candidate."""
    objects = [make_node("n1"), low("a", "n1", cpu="100m", **host_port()),
               low("b", "n1", cpu="100m", priority=HIGH, **host_port(sidecar=True))]
    r = run(pending(cpu="1", **host_port()), *objects)
    assert (r["outcome"], r["node"], victims(r)) == ("preempt", "n1", ["a"])


def test_preempting_a_terminating_pod_lowers_the_spread_count():
    """Found by test_preemption_preview: the PreFilter does not count terminating pods, but the
    dry run's RemovePod takes them off the count anyway, so preempting a terminating pod that
    matches the constraint lowers its zone's count (upstream) and n3 is a candidate too."""
    spread = [{"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule",
               "labelSelector": {"matchLabels": {"app": "web"}}}]
    web = {"app": "web"}
    objects = [make_node("n1", cpu="1", zone="z1"), make_node("n2", cpu="1", zone="z2"),
               make_node("n3", cpu="1", zone="z2"), low("keep", "n1", priority=HIGH),
               low("r", "n2", cpu="500m", labels=web),
               low("t", "n3", cpu="500m", labels=web, meta={"deletionTimestamp": "2026-11-22T08:59:00Z"})]
    r = run(pending(cpu="1", labels=web, topologySpreadConstraints=spread), *objects)
    assert {c["node"]: [v["name"] for v in c["victims"]] for c in r["candidates"]} == {"n2": ["r"], "n3": ["t"]}


def test_node_is_potential_when_its_first_failure_is_resolvable():
    """Found by test_preemption_preview: the scheduler keeps only the first failing plugin's status,
    so a host-port conflict (resolvable) ahead of unsatisfiable pod affinity makes n1 a potential
    node (it counts for candidate sampling); the dry run then finds no victims that help."""
    affinity = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"topologyKey": "kubernetes.io/hostname", "labelSelector": {"matchLabels": {"app": "nobody"}}}]}}
    r = run(pending(cpu="1", affinity=affinity, **host_port()), make_node("n1"), low("a", "n1", **host_port()))
    assert (r["outcome"], r["sampling"]["potentialNodes"], r["candidates"]) == ("unschedulable", 1, [])
    assert "pod affinity" in excluded(r)["n1"]


# -- step 5: choosing the node -------------------------------------------------------------------

def two_nodes(n1_pods, n2_pods, *extra):
    return [make_node("n1", cpu="2"), make_node("n2", cpu="2"), *n1_pods, *n2_pods, *extra]


PICK = [
    ("fewest-pdb-violations",
     two_nodes([low("a", "n1", cpu="2", priority=1, labels={"app": "db"})], [low("b", "n2", cpu="2", priority=5)],
               make_pdb("db", selector={"app": "db"})), "n2"),
    ("lowest-highest-victim-priority",
     two_nodes([low("a", "n1", priority=1), low("b", "n1", priority=9)], [low("c", "n2", cpu="2", priority=5)]), "n2"),
    ("lowest-priority-sum",
     two_nodes([low("a", "n1", priority=5), low("b", "n1", priority=5)], [low("c", "n2", priority=5), low("d", "n2", priority=-3)]), "n2"),
    ("fewest-victims",  # equal sums: 5 + -5 == 5 + (-2^30 - 3) + (-2^30 - 2) + 2^31
     two_nodes([low("a", "n1", cpu="1", priority=5), low("b", "n1", cpu="1", priority=-5)],
               [low("c", "n2", cpu="1", priority=5), low("d", "n2", cpu="500m", priority=-2 ** 30 - 3),
                low("e", "n2", cpu="500m", priority=-2 ** 30 - 2)]), "n1"),
    ("latest-start-time",
     two_nodes([low("a", "n1", cpu="2", start="2026-11-20T08:00:00Z")],
               [low("b", "n2", cpu="2", start="2026-11-21T08:00:00Z")]), "n2"),
    ("seed-001-lowest-priority-node",
     two_nodes([low("a", "n1", cpu="2", priority=100)], [low("b", "n2", cpu="2", priority=10)],
               make_class("high-priority", 1000000)), "n2"),
]


@pytest.mark.parametrize("objects,expected", [s[1:] for s in PICK], ids=[s[0] for s in PICK])
def test_pick(objects, expected):
    pod = pending(priority=None, priority_class="high-priority") if any(
        o.get("kind") == "PriorityClass" for o in objects) else pending()
    r = run(pod, *objects)
    assert r["node"] == expected
    assert [c["rank"] for c in r["candidates"]] == [1, 2] and r["candidates"][0]["node"] == expected


def test_sum_uses_offset_so_negative_priorities_rank_correctly():
    r = run(pending(), *two_nodes([low("a", "n1", cpu="2", priority=-5)], [low("b", "n2", cpu="1", priority=-5),
                                                                           low("c", "n2", cpu="1", priority=-5)]))
    assert r["candidates"][0]["prioritySum"] == -5 + 2 ** 31 and r["node"] == "n1"


def test_exact_tie_is_reported():
    r = run(pending(), *two_nodes([low("a", "n1", cpu="2")], [low("b", "n2", cpu="2")]))
    assert r["sampling"]["tiedBest"] == ["n1", "n2"] and r["sampling"]["mayDiffer"] is True
    assert "SCHEDULER_MAY_DIFFER" in [f["code"] for f in r["findings"]]


def test_no_tie_is_deterministic():
    r = run(pending(), *two_nodes([low("a", "n1", cpu="2", priority=1)], [low("b", "n2", cpu="2")]))
    assert r["sampling"]["mayDiffer"] is False and r["node"] == "n2"


# -- priority resolution, replicas, findings ------------------------------------------------------

def test_unknown_priority_class_is_rejected_like_admission():
    with pytest.raises(UnknownPriorityClass):
        run(pending(priority=None, priority_class="missing"), *FULL)


def test_manifest_pod_gets_global_default_priority():
    snap = snapshot(make_node("n1", cpu="2"), low("a", "n1", cpu="2"), make_class("std", 50, default=True))
    pod = Pod(pending(priority=None))
    r = preview(pod, snap, NOW)
    assert r["pod"]["priority"] == 50 and r["pod"]["prioritySource"] == "globalDefault"
    assert victims(r) == ["a"]


def test_replicas_consume_what_they_took():
    objects = [make_node("n1", cpu="2"), low("a", "n1", cpu="2"), make_node("n2", cpu="2"),
               low("b", "n2", cpu="2", priority=1)]
    r = run(pending(cpu="2"), *objects, replicas=3)
    assert [p["node"] for p in r["placements"]] == ["n1", "n2", None]
    assert (r["outcome"], r["placed"], victims(r)) == ("partial", 2, ["a", "b"])


def test_replicas_that_fit_spread_to_free_nodes():
    r = run(pending(cpu="1"), make_node("n1", cpu="2"), make_node("n2", cpu="2"), replicas=2)
    assert sorted(p["node"] for p in r["placements"]) == ["n1", "n2"] and r["outcome"] == "fits"


def test_grace_period_finding():
    r = run(pending(cpu="2"), make_node("n1", cpu="2"), low("a", "n1", cpu="2", terminationGracePeriodSeconds=300))
    f = next(f for f in r["findings"] if f["code"] == "VICTIM_GRACE_PERIOD")
    assert f["severity"] == "warning" and "300 s" in f["message"]


def test_affinity_to_lower_priority_finding():
    pod = pending(affinity={"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "a"}}, "topologyKey": "kubernetes.io/hostname"}]}})
    r = run(pod, make_node("n1", cpu="2"), low("a", "n1", cpu="2"))
    assert "PREEMPTOR_AFFINITY_TO_LOWER_PRIORITY" in [f["code"] for f in r["findings"]]
    assert r["outcome"] == "unschedulable"


def test_nominated_higher_priority_pod_takes_room():
    nominated = make_pod("other", node=None, cpu="2", priority=HIGH + 5, phase="Pending",
                         status={"nominatedNodeName": "n1"})
    r = run(pending(cpu="2"), make_node("n1", cpu="4"), low("a", "n1", cpu="2"), nominated)
    assert r["fitsWithoutPreemption"] is False and victims(r) == ["a"]


def anti_affinity(app):
    return {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"topologyKey": "kubernetes.io/hostname", "labelSelector": {"matchLabels": {"app": app}}}]}}


def test_nominated_pods_anti_affinity_is_ignored_when_the_plugin_is_skipped():
    """Found by test_preemption_preview: no scheduled pod's anti-affinity matches the pod and it
    has no pod (anti-)affinity of its own, so InterPodAffinity's PreFilter skips the plugin and a
    nominated pod's anti-affinity against it is never checked: the pod fits on n1."""
    nominated = make_pod("other", node=None, cpu="100m", priority=HIGH, phase="Pending",
                         status={"nominatedNodeName": "n1"}, affinity=anti_affinity("web"))
    r = run(pending(cpu="1", labels={"app": "web"}), make_node("n1"), nominated)
    assert (r["outcome"], r["feasibleNodes"]) == ("fits", ["n1"])


def test_nominated_pods_anti_affinity_counts_when_the_plugin_runs():
    """The same nominated pod once a scheduled pod's anti-affinity also matches the pod (on another
    node): the plugin runs, the nominated pod is added with its terms, and n1 is not feasible."""
    nominated = make_pod("other", node=None, cpu="100m", priority=HIGH, phase="Pending",
                         status={"nominatedNodeName": "n1"}, affinity=anti_affinity("web"))
    guard = low("guard", "n2", cpu="100m", affinity=anti_affinity("web"))
    r = run(pending(cpu="1", labels={"app": "web"}), make_node("n1"), make_node("n2"), nominated, guard)
    assert r["feasibleNodes"] == [] and "existing pods anti-affinity" in excluded(r)["n1"]


def test_fitting_nominated_node_is_used_first():
    r = run(pending(cpu="1", status={"nominatedNodeName": "n2"}), make_node("n1"), make_node("n2"),
            low("a", "n2", cpu="2"))
    assert (r["outcome"], r["node"], r["feasibleNodes"]) == ("fits", "n2", ["n1", "n2"])


def test_preemption_fits_node_is_the_schedulers_score_choice():
    """A pod that fits goes where the Score stage puts it: the emptier node has a PreferNoSchedule
    taint the pod does not tolerate (TaintToleration, weight 3), so the busier one wins."""
    r = run(pending(cpu="1"), make_node("empty", cpu="8", taints=[{"key": "spot", "effect": "PreferNoSchedule"}]),
            make_node("busy"), low("a", "busy"))
    assert (r["outcome"], r["node"], r["sampling"]["tiedBest"]) == ("fits", "busy", [])


def test_preemption_fits_names_the_tied_nodes():
    r = run(pending(cpu="1"), make_node("n1"), make_node("n2"))
    assert (r["node"], r["sampling"]["tiedBest"], r["sampling"]["mayDiffer"]) == ("n1", ["n1", "n2"], True)


def test_preemptor_that_has_finished_is_never_scheduled():
    """The scheduler's pod informer never lists a Succeeded or Failed pod: nothing is previewed."""
    raw = pending()
    raw["status"]["phase"] = "Failed"
    r = run(raw, *FULL)
    assert (r["outcome"], r["eligible"], r["victims"], r["node"]) == ("not-scheduled", False, [], None)
    assert "has finished (phase Failed)" in r["eligibility"]


# -- a manifest with spec.nodeName: no scheduler, no preemption, the kubelet admits or rejects -----

NO_EXECUTE = {"key": "example.com/drain", "effect": "NoExecute"}
BOUND_NODE_CASES = [
    ("fits-there", dict(cpu="1"), [make_node("n1", cpu="2"), low("a", "n1", cpu="1")], ("bound", "n1", [])),
    ("full-node-no-preemption", dict(cpu="2"), FULL, ("rejected", None, [])),
    ("cordoned-node-still-admitted", dict(cpu="1"), [make_node("n1", cpu="2", unschedulable=True)],
     ("bound", "n1", [])),
    ("noschedule-taint-ignored", dict(cpu="1"),
     [make_node("n1", cpu="2", taints=[{"key": "k", "effect": "NoSchedule"}])], ("bound", "n1", [])),
    ("noexecute-taint-rejected", dict(cpu="1"), [make_node("n1", cpu="2", taints=[NO_EXECUTE])],
     ("rejected", None, [])),
    ("node-selector-mismatch", dict(cpu="1", nodeSelector={"disk": "ssd"}), [make_node("n1", cpu="2")],
     ("rejected", None, [])),
    ("no-such-node", dict(cpu="1"), [make_node("n2", cpu="2")], ("rejected", None, [])),
]


@pytest.mark.parametrize("name, spec, objects, expected", BOUND_NODE_CASES, ids=[c[0] for c in BOUND_NODE_CASES])
def test_manifest_with_node_name_bypasses_the_scheduler(name, spec, objects, expected):
    """A pod created with spec.nodeName is never in the scheduler's queue: it preempts nobody, and the
    kubelet's admission (``generalFilter``: resources, node affinity, name, ports, NoExecute taints;
    not the cordon or NoSchedule taints) decides whether it runs."""
    raw = pending(**spec)
    raw["spec"]["nodeName"] = "n1"
    snap = snapshot(*objects)
    r = preview(Pod(raw), snap, NOW, 1)
    assert (r["outcome"], r["node"], victims(r)) == expected
    assert r["candidates"] == [] and r["eligible"] is False and "bypasses the scheduler" in r["eligibility"]


# -- a StatefulSet manifest's pods carry their claims (volumeClaimTemplates) -------------------------

def _sts_manifest(replicas=1):
    return {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db", "namespace": "default"},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "db"}},
                     "template": {"metadata": {"labels": {"app": "db"}},
                                  "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}},
                     "volumeClaimTemplates": [{"metadata": {"name": "data"},
                                               "spec": {"accessModes": ["ReadWriteOnce"],
                                                        "resources": {"requests": {"storage": "1Gi"}}}}]}}


ZONAL = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
         "metadata": {"name": "zonal", "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}},
         "provisioner": "csi.example.com", "volumeBindingMode": "WaitForFirstConsumer",
         "allowedTopologies": [{"matchLabelExpressions": [{"key": "topology.kubernetes.io/zone", "values": ["a"]}]}]}


def _bound_claim(name, pv_node):
    pvc = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name, "namespace": "default"},
           "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "zonal", "volumeName": f"pv-{name}"},
           "status": {"phase": "Bound"}}
    pv = {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": f"pv-{name}"},
          "spec": {"storageClassName": "zonal", "accessModes": ["ReadWriteOnce"], "capacity": {"storage": "1Gi"},
                   "claimRef": {"namespace": "default", "name": name},
                   "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                       {"key": "kubernetes.io/hostname", "operator": "In", "values": [pv_node]}]}]}}},
          "status": {"phase": "Bound"}}
    return [pvc, pv]


STS_CLAIM_CASES = [
    # the claim does not exist: the controller creates it with the default class, which provisions
    # only in zone a, so the pod goes to n1 although n2 has more room
    ("new-claim-zonal-default-class", 1, [ZONAL], ["n1"]),
    # db-0's claim exists, bound to a PV pinned to n2; db-1's is created (zone a: n1)
    ("existing-claim-pv-node-affinity", 2, [ZONAL] + _bound_claim("data-db-0", "n2"), ["n2", "n1"]),
]


@pytest.mark.parametrize("name, replicas, storage, expected", STS_CLAIM_CASES, ids=[c[0] for c in STS_CLAIM_CASES])
def test_statefulset_manifest_pods_carry_their_claims(name, replicas, storage, expected):
    """``newStatefulSetPod``/``updateStorage``: each ordinal's pod names the claims
    ``<template>-<set>-<ordinal>``, which the VolumeBinding filter then judges (existing claims and
    their PVs, or the claims the controller creates)."""
    from kubectl_safety.analysis.manifest import pod_from_manifest

    nodes = [make_node("n1", cpu="4", zone="a"), make_node("n2", cpu="16", zone="b")]
    snap = snapshot(*nodes, *storage)
    pod, info = pod_from_manifest(_sts_manifest(replicas), "default")
    r = preview(pod, snap, NOW, replicas, info["statefulset"])
    placed = [p["node"] for p in r["placements"]] if replicas > 1 else [r["node"]]
    assert placed == expected, r
