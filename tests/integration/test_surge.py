"""`drain --surge` (make before break) on the real control plane.

Each scenario records, with a watch, the Ready count of the surged workload for the whole run: it
never falls below its count before the drain. The figures (minimum Ready, drain time with and
without --surge) are printed for the report (``-s``).
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time

import pytest

from cluster_helpers import (ReadyRecorder, autoscaler, create, deployment, get_json, pdb, place_on, pods_by_uid,
                             set_node_ready, wait_pdb_settled, wait_pods_running, wait_until)
from kubectl_safety.analysis.surge import ANNOTATION, DELETION_COST, LOWEST_COST, TAINT
from kubectl_safety.engine.rollout import ANNOTATION_SURGES
from tests.unit.cli_helpers import run_cli

UNSCHEDULABLE = {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"}


def safety(cluster, command, *args):
    started = time.monotonic()
    code, out, err = run_cli([command, *args, "--kubeconfig", str(cluster.kubeconfig), "-o", "json"])
    return code, (json.loads(out) if out.strip() else None), err, time.monotonic() - started


def pool(make_node, namespace, count, **kwargs):
    return [make_node(f"s{i}-{namespace[-6:]}", labels={"pool": namespace}, **kwargs)["metadata"]["name"]
            for i in range(count)]


def web(namespace, replicas, **spec):
    return deployment("web", replicas, node_selector={"pool": namespace}, requests={"cpu": "100m"}, **spec)


def replicas(cluster, namespace, name="web"):
    obj = get_json(cluster, f"deployment/{name}", "-n", namespace)
    return obj["spec"]["replicas"], (obj["metadata"].get("annotations") or {}).get(ANNOTATION)


def on_node(cluster, namespace, node):
    return [p for p in pods_by_uid(cluster, namespace).values() if p["spec"].get("nodeName") == node
            and not p["metadata"].get("deletionTimestamp")]


def drained_with_surge(cluster, namespace, node, before, *extra):
    wait_pods_running(cluster, namespace, "app=web", count=before)  # Ready: an unready pod is not surged
    with ReadyRecorder(cluster, namespace, "app=web") as ready:
        code, report, err, seconds = safety(cluster, "drain", node, "--surge", "--yes", "--timeout", "120s", *extra)
    assert code == 0, err
    assert report["drained"] and report["surge"]["status"] == "done", report
    assert ready.minimum >= before, ready.counts
    assert replicas(cluster, namespace) == (before, None)  # restored, the record gone
    assert on_node(cluster, namespace, node) == []
    assert keys_left(cluster, namespace, [node]) == []
    return report, ready, seconds, err


def keys_left(cluster, namespace, nodes):
    """Every key of the tool's still on an object a surge touches: the namespace's Deployments, their
    ReplicaSets, autoscalers and pods, and the drained nodes ("Kind name: key")."""
    left = []
    objects = [o for kind in ("deployments", "replicasets", "horizontalpodautoscalers", "pods")
               for o in get_json(cluster, kind, "-n", namespace)["items"]]
    objects += [get_json(cluster, f"node/{n}") for n in nodes]
    for o in objects:
        meta = o["metadata"]
        where = f"{o['kind']} {meta['name']}"
        keys = [*(meta.get("annotations") or {}), *(meta.get("labels") or {}),
                *(t["key"] for t in (o.get("spec") or {}).get("taints") or ())]
        left += [f"{where}: {k}" for k in keys if k.startswith("safety.kubectl.io/")]
        if (meta.get("annotations") or {}).get(DELETION_COST) == LOWEST_COST:
            left.append(f"{where}: {DELETION_COST}")
    return left


# -- scenarios ------------------------------------------------------------------------------------
def test_single_replica_without_pdb_never_drops_to_zero(cluster, namespace, make_node, audit):
    nodes = pool(make_node, namespace, 2)
    place_on(cluster, namespace, nodes[1:], [web(namespace, 1)], 1)
    wait_pods_running(cluster, namespace, "app=web", count=1)  # Ready: an unready pod has nothing to surge
    code, plan, err, _ = safety(cluster, "drain", nodes[0], "--surge", "--dry-run")
    assert code == 0, (plan, err)
    assert [(w["from"], w["to"], w["mechanism"], w["removal"]) for w in plan["surge"]["workloads"]] == \
        [(1, 2, "scale", "evict")]
    started = audit.now()
    report, ready, seconds, err = drained_with_surge(cluster, namespace, nodes[0], 1)
    mine = [e for e in audit.mutating_requests(started, user_agent_contains="kubectl-safety/")
            if (e.namespace == namespace or e.resource == "nodes") and e.code < 300]  # a 409 is read and retried
    sequence = [f"{e.verb} {e.resource}" + (f" {e.name}" if e.resource != "pods/eviction" else "") for e in mine]
    print(f"\nsingle replica --surge: min Ready {ready.minimum} (before 1), {seconds:.1f}s; requests: {sequence}")
    kinds = [(e.verb, e.resource) for e in mine]
    assert kinds.index(("patch", "deployments")) < kinds.index(("create", "pods/eviction"))  # make before break
    assert [k for k in kinds if k[1] == "deployments"] == [("patch", "deployments")] * 2  # raised, restored



def test_single_replica_without_surge_for_comparison(cluster, namespace, make_node):
    """The same drain without --surge: the one replica is down while it moves (the figure to compare)."""
    nodes = pool(make_node, namespace, 2)
    place_on(cluster, namespace, nodes[1:], [web(namespace, 1)], 1)
    with ReadyRecorder(cluster, namespace, "app=web") as plain:
        code, report, err, seconds = safety(cluster, "drain", nodes[0], "--yes", "--timeout", "120s")
    assert code == 0, err
    print(f"\nsingle replica without --surge: min Ready {plain.minimum} (before 1), {seconds:.1f}s; {err}")


def test_min_available_equal_to_replicas_drains_with_surge(cluster, namespace, make_node, audit):
    nodes = pool(make_node, namespace, 2)
    place_on(cluster, namespace, nodes[1:], [web(namespace, 3), pdb("web", {"app": "web"}, min_available=3)], 3)
    wait_pdb_settled(cluster, namespace, "web", current_healthy=3, disruptions_allowed=0)
    code, plan, err, plain_seconds = safety(cluster, "drain", nodes[0], "--yes")
    assert code == 3 and "PDB_NEVER_ALLOWS" in err and "--surge would" in err, err
    report, ready, seconds, _ = drained_with_surge(cluster, namespace, nodes[0], 3)
    assert len(report["evicted"]) == 3
    pdb_now = get_json(cluster, "pdb/web", "-n", namespace)["status"]
    print(f"\nminAvailable 3 of 3 --surge: min Ready {ready.minimum} (before 3), {seconds:.1f}s; "
          f"without --surge refused in {plain_seconds:.1f}s")
    assert pdb_now["desiredHealthy"] == 3


def test_max_unavailable_zero_goes_by_deletion_cost_and_scale_back(cluster, namespace, make_node, audit):
    nodes = pool(make_node, namespace, 2)
    place_on(cluster, namespace, nodes[1:], [web(namespace, 2), pdb("web", {"app": "web"}, max_unavailable=0)], 2)
    wait_pdb_settled(cluster, namespace, "web", current_healthy=2, disruptions_allowed=0)
    started = audit.now()
    report, ready, seconds, err = drained_with_surge(cluster, namespace, nodes[0], 2)
    mine = audit.mutating_requests(started, user_agent_contains="kubectl-safety/")
    assert not [e for e in mine if e.resource == "pods/eviction"]  # the PDB never allows one: none sent
    assert len([e for e in mine if (e.verb, e.resource) == ("patch", "pods")]) == 2  # the deletion cost
    assert sorted(report["surge"]["removedByScaleBack"]) == sorted(report["evicted"])
    print(f"\nmaxUnavailable 0 --surge: min Ready {ready.minimum} (before 2), {seconds:.1f}s")


def test_statefulset_is_reported_never_surged(cluster, namespace, make_node, audit):
    nodes = pool(make_node, namespace, 2)
    labels = {"app": "db"}
    sts = {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db"},
           "spec": {"replicas": 1, "serviceName": "db", "selector": {"matchLabels": labels},
                    "template": web(namespace, 1)["spec"]["template"] | {"metadata": {"labels": labels}}}}
    place_on(cluster, namespace, nodes[1:], [sts, pdb("db", labels, min_available=1)], 1)
    wait_pdb_settled(cluster, namespace, "db", current_healthy=1, disruptions_allowed=0)
    started = audit.now()
    code, plan, err, _ = safety(cluster, "drain", nodes[0], "--surge", "--yes")
    assert code == 3, err
    assert plan["surge"]["workloads"] == []
    reasons = {r["code"]: r["message"] for p in plan["pods"] for r in p["reasons"]}
    assert "PDB_NEVER_ALLOWS" in reasons and "never surged" in reasons["SURGE_NOT_POSSIBLE"]
    assert audit.mutating_requests(started, user_agent_contains="kubectl-safety/") == []


def test_surge_pods_of_a_workload_tolerating_the_cordon_do_not_land_on_the_node(cluster, namespace, make_node):
    nodes = pool(make_node, namespace, 2)
    # a cordon does not keep a pod that tolerates it off the spare node: a taint it does not tolerate does
    cluster.kubectl("taint", "node", nodes[1], "placement=hold:NoSchedule")
    create(cluster, namespace, web(namespace, 1, tolerations=[UNSCHEDULABLE]))
    wait_pods_running(cluster, namespace, count=1, ready=False)
    cluster.kubectl("taint", "node", nodes[1], "placement=hold:NoSchedule-")
    assert [p["spec"]["nodeName"] for p in pods_by_uid(cluster, namespace).values()] == [nodes[0]]
    report, ready, seconds, err = drained_with_surge(cluster, namespace, nodes[0], 1)
    assert "tainted" in err and report["appeared"] == []
    taints = get_json(cluster, f"node/{nodes[0]}")["spec"].get("taints") or []
    assert not [t for t in taints if t["key"] == TAINT]  # lifted once the surge is done
    print(f"\ntolerates the cordon --surge: min Ready {ready.minimum} (before 1), {seconds:.1f}s")


def test_no_room_for_the_surge_pods_is_refused_before_anything_changes(cluster, namespace, make_node, audit):
    drained = pool(make_node, namespace, 1)[0]
    small = make_node(f"small-{namespace[-6:]}", labels={"pool": namespace}, cpu="250m")["metadata"]["name"]
    place_on(cluster, namespace, [small], [web(namespace, 3), pdb("web", {"app": "web"}, min_available=3)], 3)
    wait_pdb_settled(cluster, namespace, "web", current_healthy=3, disruptions_allowed=0)
    started = audit.now()
    code, plan, err, _ = safety(cluster, "drain", drained, "--surge", "--yes")
    assert code == 3 and "SURGE_UNPLACEABLE" in err, err
    assert audit.mutating_requests(started, user_agent_contains="kubectl-safety/") == []
    assert replicas(cluster, namespace) == (3, None)


def test_a_budget_shared_with_a_surged_workload_is_spent_by_the_others_as_before(cluster, namespace, make_node,
                                                                                  audit):
    """One PDB (maxUnavailable 1) over a surged single replica and a 3-replica Deployment with two pods on
    the node: the surge pod replaces the surged one in the budget's healthy count, so the other pods'
    evictions take waves 1 and 2 (not 2 and 3), and the PDB never has fewer Ready pods than it needs."""
    nodes = pool(make_node, namespace, 2)
    front = {"tier": "front"}
    spec = {"node_selector": {"pool": namespace}, "requests": {"cpu": "100m"}}
    # "a-solo" sorts before "api": without the surge taking no slot, it would take the budget's wave 1
    place_on(cluster, namespace, [nodes[0]], [deployment("api", 1, {**front, "app": "api"}, **spec)], 1)
    cluster.kubectl("cordon", nodes[1])
    cluster.kubectl("scale", "deployment/api", "--replicas=3", "-n", namespace)
    create(cluster, namespace, deployment("a-solo", 1, {**front, "app": "a-solo"}, **spec),
           pdb("front", front, max_unavailable=1))
    wait_pods_running(cluster, namespace, "tier=front", count=4)
    cluster.kubectl("uncordon", nodes[1])
    wait_pdb_settled(cluster, namespace, "front", current_healthy=4, disruptions_allowed=1, expected_pods=4)
    code, plan, err, _ = safety(cluster, "drain", nodes[0], "--surge", "--dry-run")
    assert code == 0, (plan, err)
    assert [(w["name"], w["from"], w["to"], w["removal"]) for w in plan["surge"]["workloads"]] == \
        [("a-solo", 1, 2, "evict")]
    waves = sorted((p["name"].rsplit("-", 2)[0], p["action"], p["wave"]) for p in plan["pods"])
    assert waves == [("a-solo", "evict", 1), ("api", "evict", 1), ("api", "wait", 2)], waves
    assert [(b["podsToEvict"], b["waves"]) for b in plan["pdbs"]] == [(3, 2)]
    first = next(p["name"] for p in plan["pods"] if p["name"].startswith("api-") and p["wave"] == 1)
    started = audit.now()
    with ReadyRecorder(cluster, namespace, "tier=front", group=lambda p: p["metadata"]["labels"]["app"]) as ready:
        code, report, err, seconds = safety(cluster, "drain", nodes[0], "--surge", "--yes", "--timeout", "120s")
    assert code == 0, err
    assert report["drained"] and report["surge"]["status"] == "done", report
    evicted = [e.name for e in audit.mutating_requests(started, user_agent_contains="kubectl-safety/")
               if e.resource == "pods/eviction" and e.namespace == namespace and e.code < 300]  # a 429 is retried
    assert evicted[0].startswith("a-solo-") and evicted[1] == first, evicted  # the surge first, then wave 1
    totals = [sum(c.values()) for c in ready.counts]
    assert ready.lowest("a-solo") >= 1 and min(totals) >= 3, ready.counts  # desiredHealthy 3 of 4
    assert on_node(cluster, namespace, nodes[0]) == []
    assert replicas(cluster, namespace, "a-solo") == (1, None)
    print(f"\nshared PDB, one workload surged: min Ready a-solo {ready.lowest('a-solo')} (before 1), "
          f"PDB {min(totals)} (needs 3), {seconds:.1f}s")


def quiet_pool(cluster, namespace, make_node, **spec):
    """(a kwok node running web's one pod, a Ready node no kubelet runs: a pod there is Ready only when
    ``make_ready`` says so)."""
    drained = pool(make_node, namespace, 1)[0]
    place_on(cluster, namespace, [], [web(namespace, 1, **spec)], 1)
    quiet = make_node(f"quiet-{namespace[-6:]}", labels={"pool": namespace}, ready=False)["metadata"]["name"]
    set_node_ready(cluster, quiet, True)
    wait_until(lambda: not [t for t in get_json(cluster, f"node/{quiet}")["spec"].get("taints") or []
                            if t["key"].startswith("node.kubernetes.io/")], 60, "the quiet node untainted")
    return drained, quiet


def make_ready(cluster, namespace, name):
    ready = json.dumps({"status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}})
    cluster.kubectl("patch", "pod", name, "-n", namespace, "--subresource=status", "--type=strategic", "-p", ready)


def drain_in_background(cluster, node):
    """``drain NODE --surge --yes -o json`` in a process, once it waits for the surge pods."""
    return in_background(cluster, "drain", node, "--surge", "--yes", "--timeout", "120s")


def in_background(cluster, *args):
    """``kubectl safety ARGS -o json`` in a process, once it waits for the surge pods."""
    cmd = [sys.executable, "-m", "kubectl_safety", *args, "--kubeconfig", str(cluster.kubeconfig), "-o", "json"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines = []
    reader = threading.Thread(target=lambda: lines.extend(proc.stderr), daemon=True)
    reader.start()
    try:
        wait_until(lambda: any("waiting for the surge pods" in line for line in lines), 60, "the surge wait")
    except AssertionError:
        proc.kill()
        raise AssertionError(f"no surge wait: {proc.stdout.read()[-3000:]} {lines}") from None
    return proc, lines, reader


def test_a_count_changed_by_someone_else_meanwhile_is_reported_not_overwritten(cluster, namespace, make_node):
    drained, quiet = quiet_pool(cluster, namespace, make_node)
    proc, lines, reader = drain_in_background(cluster, drained)
    cluster.kubectl("scale", "deployment/web", "--replicas=3", "-n", namespace)  # someone else, meanwhile
    wait_until(lambda: len([p for p in pods_by_uid(cluster, namespace).values()
                            if p["spec"].get("nodeName") == quiet]) == 2, 60, "two pods on the quiet node")
    for p in pods_by_uid(cluster, namespace).values():
        if p["spec"].get("nodeName") == quiet:
            make_ready(cluster, namespace, p["metadata"]["name"])
    out, _ = proc.communicate(timeout=90)
    reader.join(5)
    report = json.loads(out)
    assert proc.returncode == 0, lines
    assert report["surge"]["restored"] == [] and "replicas 3, not 2" in report["surge"]["changedByOthers"][0]
    assert replicas(cluster, namespace) == (3, None)  # left as the other writer set it; the record gone


def test_interrupted_by_sigterm_while_surge_pods_start_then_resumed(cluster, namespace, make_node, audit):
    """The surge pod lands on a node no kubelet runs (Ready set by the test): it is not Ready until the
    test says so. SIGTERM during that wait leaves the record; the same command run again finishes."""
    drained, quiet = quiet_pool(cluster, namespace, make_node)
    old = [p["metadata"]["uid"] for p in on_node(cluster, namespace, drained)]
    started = audit.now()
    with ReadyRecorder(cluster, namespace, "app=web") as ready:
        proc, lines, reader = drain_in_background(cluster, drained)
        proc.send_signal(signal.SIGTERM)
        out = proc.stdout.read()
        assert proc.wait(timeout=30) == 130, lines
        reader.join(5)
        report = json.loads(out)
        assert report["status"] == "interrupted" and report["surge"]["status"] == "interrupted"
        count, record = replicas(cluster, namespace)
        assert count == 2 and json.loads(record)["replicas"] == 1  # left surged, the original recorded
        code, check, err, _ = safety(cluster, "check", "-l", f"pool={namespace}")
        assert "SURGE_LEFT" in {f["code"] for f in check["findings"]}, check["findings"]
        new = [p for p in pods_by_uid(cluster, namespace).values() if p["spec"].get("nodeName") == quiet]
        assert len(new) == 1
        make_ready(cluster, namespace, new[0]["metadata"]["name"])
        code, report, err, seconds = safety(cluster, "drain", drained, "--surge", "--yes", "--timeout", "90s")
    assert code == 0, err
    assert "resumed" in " ".join(report["surge"]["raised"])
    assert replicas(cluster, namespace) == (1, None)
    assert ready.minimum >= 1, ready.counts
    evictions = [e for e in audit.mutating_requests(started, user_agent_contains="kubectl-safety/")
                 if e.resource == "pods/eviction" and e.code == 201]
    assert len(evictions) == 1 and pods_by_uid(cluster, namespace).keys().isdisjoint(old)  # evicted once
    raises = [e for e in audit.mutating_requests(started, user_agent_contains="kubectl-safety/")
              if e.resource == "deployments" and e.code < 300]  # a 409 conflict is read again and retried
    # raised once (the rerun found the record), restored once
    assert len(raises) == 2, [(e.verb, e.code, e.received.isoformat()) for e in raises]


def test_rollout_with_surge_of_a_three_node_pool(cluster, namespace, make_node, audit):
    nodes = pool(make_node, namespace, 3)
    spare = make_node(f"spare-{namespace[-6:]}", labels={"pool": namespace})["metadata"]["name"]
    place_on(cluster, namespace, [spare], [web(namespace, 3), pdb("web", {"app": "web"}, min_available=3)], 3)
    wait_pdb_settled(cluster, namespace, "web", current_healthy=3, disruptions_allowed=0)
    with ReadyRecorder(cluster, namespace, "app=web") as ready:
        code, report, err, seconds = safety(cluster, "rollout", *nodes, "--surge", "--yes", "--no-precordon",
                                            "--lease-namespace", namespace, "--timeout", "300s")
    assert code == 0, err
    assert ready.minimum >= 3, ready.counts
    assert replicas(cluster, namespace) == (3, None)
    surged = [x for n in report["nodes"] for x in n.get("surges") or []]  # recorded in the rollout's state
    assert surged and all(x.startswith(f"Deployment {namespace}/web 3->") for x in surged), report["nodes"]
    print(f"\nrollout --surge of 3 nodes: min Ready {ready.minimum} (before 3), {seconds:.1f}s")


def test_rollout_interrupted_by_sigterm_while_surge_pods_start_then_resumed(cluster, namespace, make_node, audit):
    """The batch's surge pod lands on a node no kubelet runs (Ready set by the test). SIGTERM during that
    wait leaves the Deployment surged with its count and the batch's surges recorded; the same rollout
    run again finishes: the count restored exactly, each old pod evicted once."""
    drained, quiet = quiet_pool(cluster, namespace, make_node)
    old = sorted(p["metadata"]["name"] for p in on_node(cluster, namespace, drained))
    rollout = ("rollout", drained, "--surge", "--yes", "--no-precordon", "--lease-namespace", namespace,
               "--timeout", "300s")
    surges = [f"Deployment {namespace}/web 1->2"]
    started = audit.now()
    with ReadyRecorder(cluster, namespace, "app=web") as ready:
        proc, lines, reader = in_background(cluster, *rollout)
        proc.send_signal(signal.SIGTERM)
        out = proc.stdout.read()
        assert proc.wait(timeout=30) == 130, lines
        reader.join(5)
        report = json.loads(out)
        assert report["status"] == "interrupted" and report["nodes"][0]["surges"] == surges, report
        count, record = replicas(cluster, namespace)
        assert count == 2 and json.loads(record)["replicas"] == 1  # left surged, the original recorded
        annotations = get_json(cluster, f"node/{drained}")["metadata"]["annotations"]
        assert json.loads(annotations[ANNOTATION_SURGES]) == surges  # in the rollout's node state
        new = [p for p in pods_by_uid(cluster, namespace).values() if p["spec"].get("nodeName") == quiet]
        assert len(new) == 1
        make_ready(cluster, namespace, new[0]["metadata"]["name"])
        code, report, err, seconds = safety(cluster, *rollout)
    assert code == 0, err
    assert report["status"] == "done" and report["resumed"], report
    assert report["nodes"][0]["surges"] == surges, report["nodes"]
    assert replicas(cluster, namespace) == (1, None)  # restored exactly, the record gone
    code, check, err, _ = safety(cluster, "check", "-l", f"pool={namespace}")
    assert "SURGE_LEFT" not in {f["code"] for f in check["findings"]}, check["findings"]  # nor on its ReplicaSet
    assert ready.minimum >= 1, ready.counts
    mine = [e for e in audit.mutating_requests(started, user_agent_contains="kubectl-safety/") if e.code < 300]
    assert sorted(e.name for e in mine if e.resource == "pods/eviction") == old  # each evicted exactly once
    writes = [(e.verb, e.code, e.received.isoformat()) for e in mine if e.resource == "deployments"]
    assert len(writes) == 2, writes  # raised once (the rerun found the record), restored once
    # scaled through the Deployment only: the one ReplicaSet write removes the record the controller copied
    assert [e.verb for e in mine if e.resource == "replicasets"] == ["patch"]
    assert keys_left(cluster, namespace, [drained, quiet]) == []
    print(f"\nrollout --surge interrupted and resumed: min Ready {ready.minimum} (before 1), "
          f"resumed run {seconds:.1f}s")


@pytest.fixture(scope="module")
def metrics(cluster, tmp_path_factory):
    from metrics_api import MetricsAPI

    api = MetricsAPI(cluster, tmp_path_factory.mktemp("metrics")).start()
    yield api
    api.stop()


def test_hpa_managed_deployment_surges_through_min_replicas(cluster, namespace, make_node, metrics, audit):
    """The autoscaler acts (fixed usage 10% of requests: it undoes a direct scale at once), so the surge
    raises its minReplicas, never the Deployment's count, and restores it."""
    nodes = pool(make_node, namespace, 2)
    place_on(cluster, namespace, nodes[1:], [web(namespace, 1)], 1)
    create(cluster, namespace, autoscaler("web", 1, 4, {"stabilizationWindowSeconds": 0}))

    def acting():
        status = get_json(cluster, "hpa/web", "-n", namespace).get("status") or {}
        return any(c["type"] == "ScalingActive" and c["status"] == "True" for c in status.get("conditions", []))

    wait_until(acting, 90, "the autoscaler to read the metrics")
    cluster.kubectl("scale", "deployment/web", "--replicas=2", "-n", namespace)  # a direct scale is undone
    wait_until(lambda: replicas(cluster, namespace)[0] == 1, 90, "the autoscaler to undo a direct scale")
    wait_pods_running(cluster, namespace, "app=web", count=1)
    code, plan, err, _ = safety(cluster, "drain", nodes[0], "--surge", "--dry-run")
    assert [(w["mechanism"], w["autoscaler"]) for w in plan["surge"]["workloads"]] == \
        [("hpa-min", {"name": "web", "minReplicasFrom": 1, "minReplicasTo": 2})], err
    started = audit.now()
    with ReadyRecorder(cluster, namespace, "app=web") as ready:
        code, report, err, seconds = safety(cluster, "drain", nodes[0], "--surge", "--yes", "--timeout", "180s")
        assert code == 0, err
        assert ready.minimum >= 1, ready.counts
    assert get_json(cluster, "hpa/web", "-n", namespace)["spec"]["minReplicas"] == 1  # restored exactly
    assert replicas(cluster, namespace)[1] is None
    writes = [(e.verb, e.resource) for e in audit.mutating_requests(started, user_agent_contains="kubectl-safety/")
              if e.code < 300 and e.namespace == namespace]
    assert writes.count(("patch", "horizontalpodautoscalers")) == 2  # raised, restored
    assert on_node(cluster, namespace, nodes[0]) == []
    assert keys_left(cluster, namespace, nodes) == []
    print(f"\nHPA-managed --surge: min Ready {ready.minimum} (before 1), {seconds:.1f}s; "
          f"metrics requests served {metrics.requests}")


def side_pod_beside(cluster, namespace, nodes):
    """``side``, two replicas: one on nodes[0] beside web's, one on nodes[1] (not surged: it keeps a Ready
    pod on a node that stays)."""
    spec = {"node_selector": {"pool": namespace}, "requests": {"cpu": "100m"}}
    place_on(cluster, namespace, nodes[1:], [web(namespace, 1), deployment("side", 1, **spec)], 2)
    cluster.kubectl("cordon", nodes[0])
    cluster.kubectl("scale", "deployment/side", "--replicas=2", "-n", namespace)
    wait_pods_running(cluster, namespace, "app=side", count=2)
    cluster.kubectl("uncordon", nodes[0])


def test_a_surge_drain_reports_no_planned_pod_as_appeared(cluster, namespace, make_node):
    """web is surged, side's pod beside it is evicted after: it was on the node when the drain was
    planned, so no line calls it appeared."""
    nodes = pool(make_node, namespace, 2)
    side_pod_beside(cluster, namespace, nodes)
    report, ready, seconds, err = drained_with_surge(cluster, namespace, nodes[0], 1)
    assert len(report["evicted"]) == 2 and report["appeared"] == [], report
    assert "appeared" not in err, err
    print(f"\nsurge with a planned pod beside it: min Ready {ready.minimum} (before 1), {seconds:.1f}s")


def test_a_surge_leaves_none_of_its_keys_on_the_objects_it_touched(cluster, namespace, make_node):
    """A workload that tolerates the cordon (the node tainted) under maxUnavailable 0 (the old pods marked
    with the deletion cost): the Deployment, the ReplicaSet the controller copied the record to, the pods
    and the node carry none of the tool's keys once the drain is done."""
    nodes = pool(make_node, namespace, 2)
    place_on(cluster, namespace, nodes[1:], [web(namespace, 2, tolerations=[UNSCHEDULABLE]),
                                             pdb("web", {"app": "web"}, max_unavailable=0)], 2)
    wait_pdb_settled(cluster, namespace, "web", current_healthy=2, disruptions_allowed=0)
    report, ready, seconds, err = drained_with_surge(cluster, namespace, nodes[0], 2)  # no key left
    assert report["surge"]["removedByScaleBack"] and "tainted" in err, (report, err)
    print(f"\nno key left after --surge: min Ready {ready.minimum} (before 2), {seconds:.1f}s")


def surge_pod_pending(cluster, namespace, quiet):
    """The surge pod on ``quiet`` deleted with ``quiet`` tainted: its replacement waits, unschedulable."""
    cluster.kubectl("taint", "node", quiet, "placement=hold:NoSchedule")
    for p in pods_by_uid(cluster, namespace).values():
        if p["spec"].get("nodeName") == quiet:
            cluster.kubectl("delete", "pod", p["metadata"]["name"], "-n", namespace, "--grace-period=0", "--force")

    def unschedulable():
        return [p for p in pods_by_uid(cluster, namespace).values() if not p["spec"].get("nodeName") and any(
            c["type"] == "PodScheduled" and c.get("reason") == "Unschedulable"
            for c in (p.get("status") or {}).get("conditions") or ())]

    wait_until(unschedulable, 60, "the surge pod pending, unschedulable")


def surge_taint(cluster, node):
    return [t for t in get_json(cluster, f"node/{node}")["spec"].get("taints") or [] if t["key"] == TAINT]


def interrupted(proc, lines, reader, sig=signal.SIGTERM):
    proc.send_signal(sig)
    out = proc.stdout.read()
    code = proc.wait(timeout=30)
    reader.join(5)
    return code, (json.loads(out) if out.strip() else None)


def ready_on_quiet(cluster, namespace, quiet):
    """Once ``quiet`` takes pods again: web's surge pod lands there, and is made Ready."""
    wait_until(lambda: [p for p in pods_by_uid(cluster, namespace).values() if p["spec"].get("nodeName") == quiet
                        and not p["metadata"].get("deletionTimestamp")], 60, "the surge pod on the quiet node")
    for p in pods_by_uid(cluster, namespace).values():
        if p["spec"].get("nodeName") == quiet:
            make_ready(cluster, namespace, p["metadata"]["name"])


def test_an_interrupted_surge_of_a_workload_tolerating_the_cordon_finishes_when_run_again(cluster, namespace,
                                                                                           make_node):
    """SIGTERM while the surge pod of a workload that tolerates the cordon is pending: the drained node
    keeps the surge taint (the pod cannot start there), and the same command run again finishes: the
    count restored exactly, no key left, never fewer Ready pods than before."""
    drained, quiet = quiet_pool(cluster, namespace, make_node, tolerations=[UNSCHEDULABLE])
    with ReadyRecorder(cluster, namespace, "app=web") as ready:
        proc, lines, reader = drain_in_background(cluster, drained)
        surge_pod_pending(cluster, namespace, quiet)
        code, report = interrupted(proc, lines, reader)
        assert code == 130 and report["surge"]["status"] == "interrupted", lines
        assert surge_taint(cluster, drained), report["surge"]  # the pending surge pod cannot start there
        assert "keeps the taint" in report["surge"]["message"]
        assert replicas(cluster, namespace)[0] == 2
        cluster.kubectl("taint", "node", quiet, "placement=hold:NoSchedule-")
        ready_on_quiet(cluster, namespace, quiet)  # not on the drained node
        code, report, err, seconds = safety(cluster, "drain", drained, "--surge", "--yes", "--timeout", "90s")
    assert code == 0, err
    assert report["surge"]["status"] == "done" and "resumed" in " ".join(report["surge"]["raised"]), report
    assert replicas(cluster, namespace) == (1, None)
    assert keys_left(cluster, namespace, [drained, quiet]) == []
    assert on_node(cluster, namespace, drained) == []
    assert ready.minimum >= 1, ready.counts
    print(f"\ntolerating the cordon, SIGTERM then run again: min Ready {ready.minimum} (before 1), "
          f"rerun {seconds:.1f}s")


def test_a_surge_pod_that_started_on_the_drained_node_is_sent_elsewhere_when_run_again(cluster, namespace,
                                                                                        make_node):
    """The surge taint lifted by hand after an interrupt: web's pending surge pod (it tolerates the cordon)
    starts on the drained node. The same command run again taints the node again, evicts that pod first
    (its controller starts it again elsewhere), then finishes."""
    drained, quiet = quiet_pool(cluster, namespace, make_node, tolerations=[UNSCHEDULABLE])
    with ReadyRecorder(cluster, namespace, "app=web") as ready:
        proc, lines, reader = drain_in_background(cluster, drained)
        surge_pod_pending(cluster, namespace, quiet)
        code, _ = interrupted(proc, lines, reader)
        assert code == 130, lines
        cluster.kubectl("taint", "node", drained, f"{TAINT}:NoSchedule-")
        wait_until(lambda: len(on_node(cluster, namespace, drained)) == 2, 60, "the surge pod on the drained node")
        cluster.kubectl("taint", "node", quiet, "placement=hold:NoSchedule-")
        proc, lines, reader = drain_in_background(cluster, drained)
        ready_on_quiet(cluster, namespace, quiet)
        out, _ = proc.communicate(timeout=90)
        reader.join(5)
    assert proc.returncode == 0, lines
    assert json.loads(out)["surge"]["status"] == "done"
    assert replicas(cluster, namespace) == (1, None)
    assert keys_left(cluster, namespace, [drained, quiet]) == [] and on_node(cluster, namespace, drained) == []
    assert ready.minimum >= 1, ready.counts
    print(f"\nsurge pod on the drained node, run again: min Ready {ready.minimum} (before 1)")


def test_a_drain_without_surge_after_an_interrupted_surge_finishes_it(cluster, namespace, make_node):
    """SIGTERM leaves web surged (2, its record naming the node); `drain NODE --yes` without --surge
    finishes that surge: the count restored, the record gone, and only then "drained"."""
    drained, quiet = quiet_pool(cluster, namespace, make_node)
    with ReadyRecorder(cluster, namespace, "app=web") as ready:
        proc, lines, reader = drain_in_background(cluster, drained)
        code, report = interrupted(proc, lines, reader)
        assert code == 130 and replicas(cluster, namespace)[0] == 2, lines
        ready_on_quiet(cluster, namespace, quiet)
        code, report, err, seconds = safety(cluster, "drain", drained, "--yes", "--timeout", "90s")
    assert code == 0, err
    assert report["drained"] and report["surge"]["status"] == "done", report
    assert replicas(cluster, namespace) == (1, None)
    assert keys_left(cluster, namespace, [drained, quiet]) == []
    assert ready.minimum >= 1, ready.counts
    print(f"\nplain drain after an interrupted surge: min Ready {ready.minimum} (before 1), {seconds:.1f}s")


def test_a_killed_surge_leaves_its_taint_named_by_check_with_how_to_clear_it(cluster, namespace, make_node):
    """SIGKILL leaves the surge taint, which `kubectl uncordon` does not lift: check names it (SURGE_LEFT)
    with the command that lifts it, and running the drain again finishes and lifts it."""
    drained, quiet = quiet_pool(cluster, namespace, make_node, tolerations=[UNSCHEDULABLE])
    with ReadyRecorder(cluster, namespace, "app=web") as ready:
        proc, lines, reader = drain_in_background(cluster, drained)
        code, _ = interrupted(proc, lines, reader, signal.SIGKILL)
        assert code == -signal.SIGKILL
        cluster.kubectl("uncordon", drained)
        assert surge_taint(cluster, drained)
        code, check, err, _ = safety(cluster, "check", "-l", f"pool={namespace}")
        left = [f["message"] for f in check["findings"] + check.get("otherFindings", [])
                if f["code"] == "SURGE_LEFT"]
        assert any(f"kubectl taint node {drained} {TAINT}:NoSchedule-" in m for m in left), left
        ready_on_quiet(cluster, namespace, quiet)
        code, report, err, seconds = safety(cluster, "drain", drained, "--surge", "--yes", "--timeout", "90s")
    assert code == 0, err
    assert not surge_taint(cluster, drained) and replicas(cluster, namespace) == (1, None)
    assert keys_left(cluster, namespace, [drained, quiet]) == []
    code, check, err, _ = safety(cluster, "check", "-l", f"pool={namespace}")
    assert "SURGE_LEFT" not in {f["code"] for f in check["findings"]}, check["findings"]
    assert ready.minimum >= 1, ready.counts
    print(f"\nSIGKILL, check, run again: min Ready {ready.minimum} (before 1), rerun {seconds:.1f}s")
