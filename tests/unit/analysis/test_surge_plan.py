"""--surge in the drain planner: which workloads are surged, how, and the risks that refuse a surge."""

import json
from functools import partial

import pytest

from kubectl_safety.analysis import drain as _drain
from kubectl_safety.analysis.drain import DrainOptions
from kubectl_safety.analysis.surge import ANNOTATION
from tests import builders
from tests.builders import NOW, container, make_node, make_pdb, make_pod, make_workload, snapshot
from tests.published import plan_drain

APP = {"app": "web"}
N1, N2 = make_node("n1"), make_node("n2")


def deployment(count, **extra):
    d = make_workload("Deployment", "web", replicas=count, labels=APP)
    d["metadata"]["generation"] = 1
    d["status"] = {"observedGeneration": 1, "replicas": count, "updatedReplicas": count, "readyReplicas": count}
    for key, value in extra.items():
        d["metadata" if key in ("labels", "annotations") else "status"][key] = value
    return d


def rs(replicas, cpu="100m", **spec):
    """The ReplicaSet whose template the pods (and their replacements) are made from."""
    template = {"metadata": {"labels": APP}, "spec": {"containers": [container(requests={"cpu": cpu})], **spec}}
    r = make_workload("ReplicaSet", "web-rs", replicas=replicas, labels=APP, owner=("Deployment", "web"),
                      template=template)
    r["status"] = {"replicas": replicas, "readyReplicas": replicas}
    return r


web = partial(builders.web, owner=("ReplicaSet", "web-rs"))


def pdb(**kw):
    return make_pdb("web", selector=APP, **kw)


def hpa(minimum, maximum, scale_down=None):
    h = {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
         "metadata": {"name": "web", "namespace": "default", "uid": "uid-hpa"},
         "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                  "minReplicas": minimum, "maxReplicas": maximum}}
    if scale_down is not None:
        h["spec"]["behavior"] = {"scaleDown": scale_down}
    return h


DISABLED = {"selectPolicy": "Disabled"}


def quota(pods_hard, pods_used, classes=None):
    """A pods quota; ``classes``: scoped to the pods of these PriorityClasses."""
    q = {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "q", "namespace": "default"},
         "spec": {"hard": {"pods": str(pods_hard)}},
         "status": {"hard": {"pods": str(pods_hard)}, "used": {"pods": str(pods_used)}}}
    if classes:
        q["spec"]["scopeSelector"] = {"matchExpressions": [
            {"scopeName": "PriorityClass", "operator": "In", "values": list(classes)}]}
    return q


def classed(pod, name):
    pod["spec"]["priorityClassName"] = name
    return pod


def sts_pod():
    pod = make_pod("db-0", labels={"app": "db"}, owner=("StatefulSet", "db"))
    return [make_workload("StatefulSet", "db", replicas=3, labels={"app": "db"}), pod,
            make_pod("db-1", node="n2", labels={"app": "db"}, owner=("StatefulSet", "db")),
            make_pod("db-2", node="n2", labels={"app": "db"}, owner=("StatefulSet", "db")),
            make_pdb("db", selector={"app": "db"}, min_available=3, allowed=0, healthy=3, desired=3, expected=3)]


def claimed(modes):
    """A one-replica Deployment whose pod mounts a claim with these access modes."""
    claim = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "data", "namespace": "default"},
             "spec": {"accessModes": list(modes), "resources": {"requests": {"storage": "1Gi"}}},
             "status": {"phase": "Pending"}}
    pod = web("a")
    pod["spec"]["volumes"] = [{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}]
    return [deployment(1), rs(1), pod, claim]


def recreate():
    d = deployment(1)
    d["spec"]["strategy"] = {"type": "Recreate"}
    return [d, rs(1), web("a")]


def three(**pdb_kw):
    return [deployment(3), rs(3), web("a"), web("b", "n2"), web("c", "n2"), pdb(**pdb_kw)]


def three_one_unready():
    """maxUnavailable 0 over three pods, one of them (elsewhere) not Ready."""
    objects = three(max_unavailable=0, allowed=0, healthy=2, desired=3, expected=3)
    objects[4]["status"]["conditions"] = [{"type": "Ready", "status": "False"}]
    return objects


MIN3 = dict(min_available=3, allowed=0, healthy=3, desired=3, expected=3)
MAX0 = dict(max_unavailable=0, allowed=0, healthy=3, desired=3, expected=3)
TIGHT = make_node("n2", cpu="250m")

def tolerating(*tolerations):
    """A one-replica Deployment whose pod tolerates these taints."""
    pod = web("a")
    pod["spec"]["tolerations"] = list(tolerations)
    return [deployment(1), rs(1, tolerations=list(tolerations)), pod]


EVERY_TAINT = {"operator": "Exists"}
CORDON = {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"}

# (id, objects, options, {pod: action}, surges [(from, to, mechanism, removal)], risk codes, pod codes)
SCENARIOS = [
    ("single-replica-no-pdb", [N1, N2, deployment(1), rs(1), web("a")], {},
     {"a": "evict"}, [(1, 2, "scale", "evict")], [], {"a": "SURGE"}),
    ("min-available-3-of-3", [N1, N2, *three(**MIN3)], {}, {"a": "evict"}, [(3, 4, "scale", "evict")], [],
     {"a": "SURGE"}),
    ("max-unavailable-0", [N1, N2, *three(**MAX0)], {}, {"a": "delete"}, [(3, 4, "scale", "deletion-cost")], [],
     {"a": "SURGE"}),
    ("hpa-owns-the-count", [N1, N2, deployment(1), rs(1), web("a"), hpa(1, 5)], {}, {"a": "evict"},
     [(1, 2, "hpa-min", "evict")], [], {}),
    ("hpa-that-never-scales-down-leaves-the-count-raised", [N1, N2, deployment(1), rs(1), web("a"),
                                                            hpa(1, 5, DISABLED)], {}, {"a": "evict"},
     [(1, 2, "hpa-min", "evict")], ["SURGE_HPA_NO_SCALE_DOWN"], {}),
    ("hpa-that-never-scales-down-never-removes-the-marked-pods", [N1, N2, *three(**MAX0), hpa(3, 5, DISABLED)], {},
     {"a": "delete"}, [(3, 4, "hpa-min", "deletion-cost")], ["SURGE_HPA_NO_SCALE_DOWN"], {}),
    ("hpa-max-too-low", [N1, N2, deployment(1), rs(1), web("a"), hpa(1, 1)], {}, {"a": "evict"},
     [(1, 2, "hpa-min", "evict")], ["SURGE_LIMIT"], {}),
    ("statefulset-never-surged", [N1, N2, *sts_pod()], {}, {"db-0": "blocked"}, [], ["PDB_NEVER_ALLOWS"],
     {"db-0": "SURGE_NOT_POSSIBLE"}),
    ("deployment-mid-rollout", [N1, N2, deployment(3, updatedReplicas=1), rs(3), web("a"), web("b", "n2"),
                                web("c", "n2"), pdb(**MIN3)], {}, {"a": "blocked"}, [], ["PDB_NEVER_ALLOWS"],
     {"a": "SURGE_NOT_POSSIBLE"}),
    ("scale-down-in-progress-is-no-rollout", [N1, N2, deployment(3, replicas=4, updatedReplicas=4), rs(3), web("a"),
                                              web("b", "n2"), web("c", "n2"), pdb(**MIN3)], {}, {"a": "evict"},
     [(3, 4, "scale", "evict")], [], {"a": "SURGE"}),
    ("no-room-for-the-surge-pod", [N1, TIGHT, deployment(3), rs(3, cpu="300m"), web("a", cpu="300m"),
                                   web("b", "n2", cpu="10m"), web("c", "n2", cpu="10m"), pdb(**MIN3)], {},
     {"a": "evict"}, [(3, 4, "scale", "evict")], ["SURGE_UNPLACEABLE"], {}),
    ("surge-limit", [N1, N2, deployment(2), rs(2), web("a"), web("b"), pdb(min_available=2, allowed=0, healthy=2,
                                                                             desired=2, expected=2)],
     {"surge_limit": 1}, {"a": "evict"}, [(2, 4, "scale", "evict")], ["SURGE_LIMIT"], {}),
    ("quota-refuses", [N1, N2, deployment(1), rs(1), web("a"), quota(1, 1)], {}, {"a": "evict"},
     [(1, 2, "scale", "evict")], ["SURGE_QUOTA"], {}),
    ("quota-scoped-to-the-pods-class-refuses", [N1, N2, deployment(1), rs(1), classed(web("a"), "high"),
                                                quota(1, 1, ["high"])], {}, {"a": "evict"},
     [(1, 2, "scale", "evict")], ["SURGE_QUOTA"], {}),
    ("quota-scoped-to-another-class-allows", [N1, N2, deployment(1), rs(1), classed(web("a"), "high"),
                                              quota(1, 1, ["batch"])], {}, {"a": "evict"},
     [(1, 2, "scale", "evict")], [], {}),
    ("gitops-managed", [N1, N2, deployment(1, labels={**APP, "kustomize.toolkit.fluxcd.io/name": "apps"}), rs(1),
                        web("a")], {}, {"a": "evict"}, [(1, 2, "scale", "evict")], ["SURGE_GITOPS"], {}),
    ("argo-cd-label-tracking-is-gitops", [N1, N2, deployment(1, labels={**APP, "app.kubernetes.io/instance": "shop"}),
                                          rs(1), web("a")], {}, {"a": "evict"}, [(1, 2, "scale", "evict")],
     ["SURGE_GITOPS"], {}),
    ("resumed-from-the-annotation", [N1, N2, deployment(4, annotations={ANNOTATION: json.dumps(
        {"replicas": 3, "to": 4, "nodes": ["n1"]})}), rs(4), web("a"), web("b", "n2"), web("c", "n2"),
        web("d", "n2"), pdb(min_available=3, allowed=1, healthy=4, desired=3, expected=4)], {}, {"a": "evict"},
     [(3, 4, "scale", "evict")], [], {"a": "SURGE"}),
    ("read-write-once-claim-never-surged", [N1, N2, *claimed(["ReadWriteOnce"])], {}, {"a": "evict"}, [], None,
     {"a": "SURGE_NOT_POSSIBLE"}),
    ("read-write-once-pod-claim-never-surged", [N1, N2, *claimed(["ReadWriteOncePod"])], {}, {"a": "evict"}, [],
     None, {"a": "SURGE_NOT_POSSIBLE"}),
    ("read-write-many-claim-surged", [N1, N2, *claimed(["ReadWriteMany"])], {}, {"a": "evict"},
     [(1, 2, "scale", "evict")], None, {"a": "SURGE"}),
    ("recreate-strategy-never-surged", [N1, N2, *recreate()], {}, {"a": "evict"}, [], [], {"a": "SURGE_NOT_POSSIBLE"}),
    ("tolerates-every-taint-never-surged-its-surge-pod-could-land-on-the-node", [N1, N2, *tolerating(EVERY_TAINT)],
     {}, {"a": "evict"}, [], ["REPLACEMENT_RETURNS_TO_NODE"], {"a": "SURGE_NOT_POSSIBLE"}),
    ("tolerates-the-cordon-only-surged-the-surge-taint-keeps-it-off", [N1, N2, *tolerating(CORDON)], {},
     {"a": "evict"}, [(1, 2, "scale", "evict")], [], {"a": "SURGE"}),
    ("scale-back-with-a-not-ready-sibling-would-remove-the-sibling", [N1, N2, *three_one_unready()], {},
     {"a": "delete"}, [(3, 4, "scale", "deletion-cost")], ["SURGE_SCALE_BACK"], {"a": "SURGE"}),
    ("surged-by-another-drain", [N1, N2, deployment(4, annotations={ANNOTATION: json.dumps(
        {"replicas": 3, "to": 4, "nodes": ["n9"]})}), rs(4), web("a"), web("b", "n2"), web("c", "n2"),
        web("d", "n2"), pdb(**MIN3)], {}, {"a": "wait"}, [], [], {"a": "SURGE_NOT_POSSIBLE"}),
]


@pytest.mark.parametrize("objects, options, actions, surges, risks, pod_codes",
                         [s[1:] for s in SCENARIOS], ids=[s[0] for s in SCENARIOS])
def test_surge_plan(objects, options, actions, surges, risks, pod_codes):
    report = plan_drain(snapshot(*objects), ["n1"], DrainOptions(surge=True, **options), NOW)
    got = {p["name"]: p["action"] for p in report["pods"]}
    assert {k: got[k] for k in actions} == actions
    assert [(w["from"], w["to"], w["mechanism"], w["removal"]) for w in report["surge"]["workloads"]] == surges
    if risks is not None:  # None: the risks of the rest of the plan (the claim's volume), not the surge's
        assert sorted({r["code"] for r in report["risks"]}) == sorted(risks)
        assert report["safe"] == (not risks)
    for name, code in pod_codes.items():
        assert code in [r["code"] for p in report["pods"] if p["name"] == name for r in p["reasons"]]


CORDON_VALUE = {"key": "node.kubernetes.io/unschedulable", "operator": "Equal", "value": "yes", "effect": "NoSchedule"}
CORDON_EQUAL = {"key": "node.kubernetes.io/unschedulable", "operator": "Equal", "effect": "NoSchedule"}
CORDON_NO_EXECUTE = {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoExecute"}


@pytest.mark.parametrize("toleration, tolerates", [
    (CORDON, True), (CORDON_EQUAL, True), (CORDON_VALUE, False), (CORDON_NO_EXECUTE, False)],
    ids=["exists", "equal-no-value", "equal-another-value", "another-effect"])
def test_the_surge_taints_the_drained_nodes_only_for_pods_the_cordon_lets_on(toleration, tolerates):
    """The surge taints the drained nodes while its pods start for a workload whose pods tolerate the
    cordon as the NodeUnschedulable filter judges it (operator and value included)."""
    plan = _drain.plan_drain(snapshot(N1, N2, *tolerating(toleration)), ["n1"], DrainOptions(surge=True), NOW)
    assert [s.tolerates_cordon for s in plan.surge.surges] == [tolerates]


FRONT = {"tier": "front"}


def front(name, count, pods):
    """A Deployment ``name`` under the PDB-shared label, with its pods {pod: node}."""
    labels = {**FRONT, "app": name}
    d = make_workload("Deployment", name, replicas=count, labels=labels)
    d["metadata"]["generation"] = 1
    d["status"] = {"observedGeneration": 1, "replicas": count, "updatedReplicas": count, "readyReplicas": count}
    r = make_workload("ReplicaSet", f"{name}-rs", replicas=count, labels=labels, owner=("Deployment", name))
    r["status"] = {"replicas": count, "readyReplicas": count}
    return [d, r] + [make_pod(p, node=n, labels=labels, cpu="100m", owner=("ReplicaSet", f"{name}-rs"))
                     for p, n in pods.items()]


def db(pods):
    labels = {**FRONT, "app": "db"}
    return [make_workload("StatefulSet", "db", replicas=len(pods), labels=labels)] + [
        make_pod(p, node=n, labels=labels, owner=("StatefulSet", "db")) for p, n in pods.items()]


SOLO = front("solo", 1, {"a-solo": "n1"})  # "a-solo" sorts first: before the surge it took the budget's wave 1
API = front("api", 3, {"api-a": "n1", "api-b": "n1", "api-c": "n2"})

# (id, objects, {pod: (action, wave)}, each PDB's (podsToEvict, waves, lostForGood))
LATER_WAVES = [
    ("a-surged-pod-takes-no-slot-of-a-budget-it-shares",
     [N1, N2, *SOLO, *API, make_pdb("front", selector=FRONT, max_unavailable=1, allowed=1, healthy=4, desired=3,
                                    expected=4)],
     {"a-solo": ("evict", 1), "api-a": ("evict", 1), "api-b": ("wait", 2)}, [(3, 2, 0)]),
    ("a-shared-budget-that-never-allows-still-blocks-the-pods-never-surged",
     [N1, N2, *SOLO, *db({"db-0": "n1", "db-1": "n2"}),
      make_pdb("front", selector=FRONT, min_available=3, allowed=0, healthy=3, desired=3, expected=3)],
     {"a-solo": ("evict", 1), "db-0": ("blocked", None)}, [(1, 1, 0)]),
    ("the-surge-eviction-spends-its-own-budget-in-wave-1", [N1, N2, *three(**MIN3)], {"a": ("evict", 1)},
     [(1, 1, 0)]),
    ("removed-by-the-scale-back-spends-no-disruption", [N1, N2, *three(**MAX0)], {"a": ("delete", 1)}, [(0, 0, 0)]),
]


@pytest.mark.parametrize("objects, actions, budgets", [s[1:] for s in LATER_WAVES], ids=[s[0] for s in LATER_WAVES])
def test_surge_pods_count_in_the_budgets_of_later_waves(objects, actions, budgets):
    report = plan_drain(snapshot(*objects), ["n1"], DrainOptions(surge=True), NOW)
    assert {p["name"]: (p["action"], p["wave"]) for p in report["pods"]} == actions
    assert [(b["podsToEvict"], b["waves"], b["lostForGood"]) for b in report["pdbs"]] == budgets
    codes = {p["name"]: [r["code"] for r in p["reasons"]] for p in report["pods"]}
    for name, (action, wave) in actions.items():
        if "SURGE" in codes[name]:  # its budget's numbers before the surge do not apply to it
            assert not {"PDB_ALLOWS", "PDB_WAIT"} & set(codes[name]), codes[name]
        elif wave and wave > 1:
            assert f"wave {wave}," in next(r["message"] for p in report["pods"] if p["name"] == name
                                           for r in p["reasons"] if r["code"] == "PDB_WAIT")


def test_surge_peak_and_wait_in_the_first_wave():
    report = plan_drain(snapshot(N1, N2, *three(**MIN3)), ["n1"], DrainOptions(surge=True), NOW)
    assert report["surge"]["peak"] == {"pods": 1, "cpu": "100m"}
    assert report["waves"][0]["readySeconds"] >= report["surge"]["workloads"][0]["expectedSeconds"] > 0


def test_without_surge_the_plan_names_what_surge_would_make_safe():
    plan = _drain.plan_drain(snapshot(N1, N2, *three(**MIN3)), ["n1"], DrainOptions(), NOW)
    assert not plan.safe and plan.surge is None
    assert plan.surgeable == ("Deployment default/web",)
    assert "surge" not in plan_drain(snapshot(N1, N2, *three(**MIN3)), ["n1"], DrainOptions(), NOW)


def test_wait_completed_waits_for_job_pods_instead_of_evicting_them():
    job = make_pod("job-x", owner=("Job", "batch"))
    objects = [N1, N2, make_workload("Job", "batch"), job]
    evicted = plan_drain(snapshot(*objects), ["n1"], DrainOptions(), NOW)
    waited = plan_drain(snapshot(*objects), ["n1"], DrainOptions(wait_completed=True), NOW)
    assert [p["action"] for p in evicted["pods"]] == ["evict"]
    assert [(p["action"], p["wave"]) for p in waited["pods"]] == [("wait", 1)]
    assert "WAIT_COMPLETED" in [r["code"] for r in waited["pods"][0]["reasons"]]


def test_check_surge_on_the_demo_dump_says_which_blocked_nodes_become_drainable():
    from tests.unit.cli_helpers import DEMO, DEMO_NOW, run_cli

    args = ["check", "--surge", "--ignore-daemonsets", "--delete-emptydir-data", "--snapshot", DEMO,
            "--as-of", DEMO_NOW]
    code, out, err = run_cli(args)
    assert "With --surge: no blocked node becomes drainable; still blocked: node-a2, node-b2, node-c1, node-d1." in out
    code, out, err = run_cli(args + ["-o", "json"])  # the schema is checked by the autouse fixture
    report = json.loads(out)
    assert report["assumes"]["surge"] is True
    assert [n["name"] for n in report["nodes"] if n["drainable"] and not n["drainableWithoutSurge"]] == []


def test_drain_dry_run_surge_cli(tmp_path):
    from tests.unit.cli_helpers import run_cli

    dump = tmp_path / "cluster.json"
    dump.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [N1, N2, *three(**MIN3)]}))
    code, out, err = run_cli(["drain", "n1", "--dry-run", "--snapshot", str(dump)])
    assert code == 3 and ("--surge would replace the pods of Deployment default/web before they go, and the drain "
                          "would be safe (make before break)") in err, err
    code, out, err = run_cli(["drain", "n1", "--dry-run", "--surge", "--snapshot", str(dump)])
    assert code == 0 and "Deployment/web  default      3 -> 4      scale        evict" in out, out
    code, out, err = run_cli(["drain", "n1", "--dry-run", "--surge", "--surge-limit", "0", "--snapshot", str(dump),
                              "-o", "json"])
    plan = json.loads(out)
    assert code == 3 and [r["code"] for r in plan["risks"]] == ["SURGE_LIMIT"]
    assert plan["options"]["surgeLimit"] == 0
    code, out, err = run_cli(["drain", "n1", "--dry-run", "--surge-limit", "1", "--snapshot", str(dump)])
    assert code == 2 and "--surge-limit needs --surge" in err


def test_rollout_dry_run_surge_shows_each_batch_surges_and_the_peak(tmp_path):
    from tests.unit.cli_helpers import run_cli

    dump = tmp_path / "cluster.json"
    pool = [N1, N2, make_node("n3"), *three(**MIN3)]
    dump.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": pool}))
    args = ["rollout", "n1", "n2", "--dry-run", "--snapshot", str(dump)]
    code, out, err = run_cli(args)
    assert code == 3 and "Surges" not in out and "Peak" not in out
    code, out, err = run_cli(args + ["--surge"])
    assert code == 0, out + err
    assert "Batch 1 surges (before its evictions):" in out and "Batch 2 surges (before its evictions):" in out
    assert "Deployment/web  default      3 -> 4      scale        evict       ~10s" in out  # n1: one pod
    assert "Deployment/web  default      3 -> 5      scale        evict       ~10s" in out  # n2: two pods
    assert "Peak extra capacity of the rollout (the largest batch): pods 2, cpu 200m" in out
    code, out, err = run_cli(args + ["--surge", "-o", "json"])  # the schema is checked by the autouse fixture
    plan = json.loads(out)
    assert plan["options"]["surge"] is True and plan["surgePeak"] == {"pods": 2, "cpu": "200m"}
    assert [[(w["name"], w["from"], w["to"], w["mechanism"]) for w in b["surge"]["workloads"]]
            for b in plan["batches"]] == [[("web", 3, 4, "scale")], [("web", 3, 5, "scale")]]
    assert [b["surge"]["peak"]["pods"] for b in plan["batches"]] == [1, 2]
    code, out, err = run_cli(args + ["-o", "json"])
    assert "surgePeak" not in json.loads(out) and all("surge" not in b for b in json.loads(out)["batches"])


def test_a_deployment_selected_only_by_match_expressions_is_watched_by_its_whole_selector():
    """An empty selector would watch every pod of the namespace: other workloads' Ready pods would count."""
    d = deployment(1)
    d["spec"]["selector"] = {"matchExpressions": [{"key": "app", "operator": "In", "values": ["web", "www"]},
                                                  {"key": "tier", "operator": "NotIn", "values": ["db"]}]}
    plan = _drain.plan_drain(snapshot(N1, N2, d, rs(1), web("a")), ["n1"], DrainOptions(surge=True), NOW)
    assert [s.selector for s in plan.surge.surges] == ["app in (web,www),tier notin (db)"]


@pytest.mark.parametrize("unread", ["horizontalpodautoscalers", "resourcequotas"])
def test_autoscalers_or_quotas_that_could_not_be_read_make_the_surge_not_safe(unread):
    """A least-privilege user: what could not be read is not judged, not taken as absent."""
    snap = snapshot(N1, N2, deployment(1), rs(1), web("a"))
    snap.unread[unread] = "forbidden"
    report = plan_drain(snap, ["n1"], DrainOptions(surge=True), NOW)
    assert [r["code"] for r in report["risks"]] == ["SURGE_NOT_JUDGED"] and not report["safe"]
    accepted = plan_drain(snap, ["n1"], DrainOptions(surge=True, accept_risks=frozenset({"SURGE_NOT_JUDGED"})), NOW)
    assert accepted["safe"]


def test_a_crash_looping_replica_is_not_counted_in_the_ready_count_the_surge_waits_for():
    b = web("b", "n2")
    b["status"]["conditions"] = [{"type": "Ready", "status": "False"}]
    plan = _drain.plan_drain(snapshot(N1, N2, deployment(2), rs(2), web("a"), b), ["n1"], DrainOptions(surge=True), NOW)
    assert [(s.from_replicas, s.to_replicas, s.ready_before) for s in plan.surge.surges] == [(2, 3, 1)]


def test_the_default_table_says_why_a_pod_is_not_surged(tmp_path):
    from tests.unit.cli_helpers import run_cli

    dump = tmp_path / "cluster.json"
    dump.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [N1, N2, *recreate()]}))
    code, out, err = run_cli(["drain", "n1", "--dry-run", "--surge", "--snapshot", str(dump)])
    assert "Not surged:\n  default/a: Deployment default/web has the Recreate strategy" in out, out


# (id, behavior.scaleDown, replicas at the restore, surge pods, seconds until they are gone (None: never))
SCALE_DOWNS = [
    ("default-window-then-all-at-once", None, 4, 1, 300),
    ("no-window", {"stabilizationWindowSeconds": 0}, 4, 2, 0),
    ("disabled", DISABLED, 4, 1, None),
    ("one-pod-per-ten-minutes", {"stabilizationWindowSeconds": 0, "policies": [
        {"type": "Pods", "value": 1, "periodSeconds": 600}]}, 5, 3, 1200),
    ("min-of-two-policies", {"selectPolicy": "Min", "stabilizationWindowSeconds": 60, "policies": [
        {"type": "Pods", "value": 2, "periodSeconds": 60}, {"type": "Percent", "value": 10, "periodSeconds": 120}]},
     10, 2, 180),
]


@pytest.mark.parametrize("rules, count, k, seconds", [s[1:] for s in SCALE_DOWNS], ids=[s[0] for s in SCALE_DOWNS])
def test_how_long_the_autoscaler_takes_to_remove_the_surge_pods_once_its_minimum_is_restored(rules, count, k, seconds):
    from kubectl_safety.analysis.surge import scale_down_seconds
    from kubectl_safety.model.workloads import HorizontalPodAutoscaler

    assert scale_down_seconds(HorizontalPodAutoscaler(hpa(1, 10, rules)), count, k) == seconds


def _dump(tmp_path, *objects):
    dump = tmp_path / "cluster.json"
    dump.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": list(objects)}))
    return str(dump)


def test_check_without_surge_says_which_blocked_nodes_surge_would_make_drainable(tmp_path):
    from tests.unit.cli_helpers import run_cli

    db = sts_pod()  # db-0 on n1, never surged: n1 stays blocked
    for p in db[2:4]:
        p["spec"]["nodeName"] = "n3"
    dump = _dump(tmp_path, N1, N2, make_node("n3"), *three(**MIN3), *db)
    code, out, err = run_cli(["check", "--snapshot", dump, "-o", "json"])  # the schema is checked by the fixture
    nodes = {n["name"]: n.get("surgeable") for n in json.loads(out)["nodes"]}
    web = ["Deployment default/web"]
    assert nodes == {"n1": {"workloads": web, "unblocks": False}, "n2": {"workloads": web, "unblocks": True},
                     "n3": None}, nodes
    code, out, err = run_cli(["check", "--snapshot", dump])
    assert ("--surge would make drainable: n2 (Deployment default/web); would not make drainable: n1 "
            "(Deployment default/web).") in out, out
    code, out, err = run_cli(["drain", "n2", "--dry-run", "--snapshot", dump, "-o", "json"])
    assert json.loads(out)["surgeable"] == {"workloads": web, "unblocks": True}


def test_rollout_without_surge_says_which_blocked_batches_surge_would_make_safe(tmp_path):
    from tests.unit.cli_helpers import run_cli

    dump = _dump(tmp_path, N1, N2, make_node("n3"), *three(**MIN3))
    code, out, err = run_cli(["rollout", "n1", "--dry-run", "--snapshot", dump])
    assert code == 3 and "--surge would make safe: batch 1 (Deployment default/web)." in out, out
    code, out, err = run_cli(["rollout", "n1", "--dry-run", "--snapshot", dump, "-o", "json"])
    assert json.loads(out)["batches"][0]["drain"]["surgeable"] == {"workloads": ["Deployment default/web"],
                                                                   "unblocks": True}


def test_rollout_surge_that_was_needed_but_impossible_says_why_not_none_needed(tmp_path):
    from tests.unit.cli_helpers import run_cli

    dump = _dump(tmp_path, N1, N2, make_node("n3"), *sts_pod())
    code, out, err = run_cli(["rollout", "n1", "--dry-run", "--surge", "--snapshot", dump])
    assert code == 3 and "Surges: none needed" not in out, out
    assert "Surges: none possible:\n  default/db-0: StatefulSet default/db is never surged" in out, out


def _job():
    return [make_workload("Job", "batch"), make_pod("a", owner=("Job", "batch"))]


# (id, objects, options, what the plan says of pod "a": action, waits for, blocked by, returns, surged)
DECISIONS = [
    ("a-job-pod-waited-for-until-it-completes", [N1, N2, *_job()], {"wait_completed": True},
     ("wait", "completion", "none", False, False)),
    ("an-unmanaged-pod-blocked-by-kubectl-s-filter", [N1, N2, make_pod("a", owner=None)], {},
     ("blocked", "gone", "kubectl-filter", False, False)),
    ("a-pod-whose-budget-never-allows-blocked-by-the-eviction-api", [N1, N2, *three(**MIN3)], {},
     ("blocked", "gone", "eviction-api", False, False)),
    ("a-replacement-that-tolerates-the-cordon-returns-to-the-node", [N1, N2, *tolerating(CORDON)], {},
     ("evict", "gone", "none", True, False)),
    ("a-surged-pod-goes-with-its-surge-and-does-not-return", [N1, N2, *tolerating(CORDON)], {"surge": True},
     ("evict", "gone", "none", False, True)),
]


@pytest.mark.parametrize("id,objects,options,expected", DECISIONS, ids=[d[0] for d in DECISIONS])
def test_the_plan_says_what_the_engine_does_with_each_pod(id, objects, options, expected):
    plan = _drain.plan_drain(snapshot(*objects), ["n1"], DrainOptions(**options), NOW)
    a = next(p for p in plan.pods if p.name == "a")
    assert (a.action.value, a.waits_for.value, a.blocked_by.value, a.returns, a.surged) == expected
    assert [p.ref for p in plan.pods if p.surged] == [f"{s.namespace}/{n}" for s in plan.surges for n in s.pods]
