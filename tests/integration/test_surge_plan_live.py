"""What a `--surge` plan says before anything changes, on the real control plane: the surges it refuses or
warns of (a surge pod the scheduler could put back on the node, a scale-back the ReplicaSet controller would
take from another pod, an autoscaler that never scales down, a GitOps-managed count), and what `check` and
`rollout` say `--surge` would unblock. Each scenario records the Ready count of the workload throughout.
"""

from __future__ import annotations

import json

from cluster_helpers import (ReadyRecorder, autoscaler, create, get_json, pdb, place_on, pods_by_uid, set_node_ready,
                             wait_pdb_settled, wait_pods_running, wait_until)
from test_surge import metrics, on_node, pool, replicas, safety, web  # noqa: F401  (metrics: a fixture)

EVERY_TAINT = [{"operator": "Exists"}]


def writes(audit, since, namespace):
    return [(e.verb, e.resource, e.name) for e in audit.mutating_requests(since, user_agent_contains="kubectl-safety/")
            if e.namespace == namespace or e.resource == "nodes"]


def risk_codes(plan):
    return sorted({r["code"] for r in plan["risks"] if not r["accepted"]})


def test_a_workload_tolerating_every_taint_is_not_surged_its_surge_pod_could_land_on_the_drained_node(
        cluster, namespace, make_node, audit):
    """Before: a SAFE plan, then a surge pod on the drained node and a wait that never ends."""
    drained = make_node(f"s0-{namespace[-6:]}", labels={"pool": namespace})["metadata"]["name"]
    create(cluster, namespace, web(namespace, 1, tolerations=EVERY_TAINT))  # the only pool node: it lands there
    wait_pods_running(cluster, namespace, "app=web", count=1)
    make_node(f"s1-{namespace[-6:]}", labels={"pool": namespace})
    started = audit.now()
    with ReadyRecorder(cluster, namespace, "app=web") as ready:
        code, plan, err, _ = safety(cluster, "drain", drained, "--surge", "--dry-run")
        assert code == 3 and plan["surge"]["workloads"] == [], (plan, err)
        reasons = {r["code"]: r["message"] for p in plan["pods"] for r in p["reasons"]}
        assert f"can put its surge pod on {drained}" in reasons["SURGE_NOT_POSSIBLE"], reasons
        assert risk_codes(plan) == ["REPLACEMENT_RETURNS_TO_NODE"]
        code, report, err, seconds = safety(cluster, "drain", drained, "--surge", "--yes", "--timeout", "60s")
    assert code == 3 and "nothing was changed" in err, err
    assert writes(audit, started, namespace) == []
    assert replicas(cluster, namespace) == (1, None) and ready.minimum == 1, ready.counts
    print(f"\ntolerates every taint: refused before any change in {seconds:.1f}s; min Ready {ready.minimum}")


def test_a_scale_back_the_controller_would_take_from_a_not_ready_sibling_is_refused_and_checked_live(
        cluster, namespace, make_node, audit):
    """Two replicas under maxUnavailable 0: one Ready on the drained node, one Pending on a node no kubelet
    runs. The ReplicaSet controller removes the Pending one first, whatever the deletion cost: the plan
    refuses (SURGE_SCALE_BACK); accepted, the drain says which pod went and which stayed."""
    drained = pool(make_node, namespace, 1)[0]
    place_on(cluster, namespace, [], [web(namespace, 1)], 1)
    wait_pods_running(cluster, namespace, "app=web", count=1)
    quiet = make_node(f"quiet-{namespace[-6:]}", labels={"pool": namespace}, ready=False)["metadata"]["name"]
    set_node_ready(cluster, quiet, True)
    wait_until(lambda: not [t for t in get_json(cluster, f"node/{quiet}")["spec"].get("taints") or []
                            if t["key"].startswith("node.kubernetes.io/")], 60, "the quiet node untainted")
    cluster.kubectl("cordon", drained)
    cluster.kubectl("scale", "deployment/web", "--replicas=2", "-n", namespace)
    wait_until(lambda: len([p for p in pods_by_uid(cluster, namespace).values()
                            if p["spec"].get("nodeName") == quiet]) == 1, 60, "a pod bound to the quiet node")
    cluster.kubectl("uncordon", drained)
    cluster.kubectl("cordon", quiet)  # the surge pod goes to the spare node
    spare = make_node(f"spare-{namespace[-6:]}", labels={"pool": namespace})["metadata"]["name"]
    create(cluster, namespace, pdb("web", {"app": "web"}, max_unavailable=0))
    wait_pdb_settled(cluster, namespace, "web", current_healthy=1, disruptions_allowed=0, expected_pods=2)
    sibling = next(p["metadata"]["name"] for p in pods_by_uid(cluster, namespace).values()
                   if p["spec"].get("nodeName") == quiet)
    old = on_node(cluster, namespace, drained)[0]["metadata"]["name"]
    code, plan, err, _ = safety(cluster, "drain", drained, "--surge", "--dry-run")
    assert code == 3 and risk_codes(plan) == ["SURGE_SCALE_BACK"], (plan["risks"], err)
    message = next(r["message"] for r in plan["risks"] if r["code"] == "SURGE_SCALE_BACK")
    assert f"{namespace}/{sibling} (Pending)" in message and f"{namespace}/{old} would stay" in message, message
    with ReadyRecorder(cluster, namespace, "app=web") as ready:
        code, report, err, seconds = safety(cluster, "drain", drained, "--surge", "--yes", "--timeout", "90s",
                                            "--accept-risk", "surge-scale-back")
    assert code == 4 and report["surge"]["status"] == "failed", (code, report, err)
    assert f"{namespace}/{sibling} went, {namespace}/{old} stayed on the drained nodes" in report["surge"]["message"]
    assert [p["metadata"]["name"] for p in on_node(cluster, namespace, drained)] == [old]  # as the plan said
    assert ready.minimum >= 1, ready.counts
    print(f"\nscale-back with a Pending sibling: refused; accepted, {sibling} went, {old} stayed "
          f"(as planned) in {seconds:.1f}s; min Ready {ready.minimum}; spare {spare}")


def test_an_autoscaler_that_never_scales_down_is_said_before_and_leaves_what_the_plan_said(
        cluster, namespace, make_node, metrics, audit):
    """behavior.scaleDown.selectPolicy Disabled: the autoscaler raises the count when minReplicas is raised,
    never lowers it when restored. The plan names it (SURGE_HPA_NO_SCALE_DOWN); accepted, the workload keeps
    the surge's count, and the autoscaler says it holds it (ScalingLimited: ScaleDownLimit)."""
    nodes = pool(make_node, namespace, 2)
    place_on(cluster, namespace, nodes[1:], [web(namespace, 1)], 1)
    create(cluster, namespace, autoscaler("web", 1, 4, {"selectPolicy": "Disabled", "stabilizationWindowSeconds": 0}))

    def condition(kind, reason=None):
        status = get_json(cluster, "hpa/web", "-n", namespace).get("status") or {}
        return any(c["type"] == kind and c["status"] == "True" and (reason is None or c.get("reason") == reason)
                   for c in status.get("conditions", []))

    wait_until(lambda: condition("ScalingActive"), 90, "the autoscaler to read the metrics")
    wait_pods_running(cluster, namespace, "app=web", count=1)
    started = audit.now()
    code, plan, err, _ = safety(cluster, "drain", nodes[0], "--surge", "--dry-run")
    assert code == 3 and risk_codes(plan) == ["SURGE_HPA_NO_SCALE_DOWN"], (plan["risks"], err)
    message = next(r["message"] for r in plan["risks"] if r["code"] == "SURGE_HPA_NO_SCALE_DOWN")
    assert "keeps 2 replicas; 1 more than before the surge" in message, message
    assert writes(audit, started, namespace) == []
    with ReadyRecorder(cluster, namespace, "app=web") as ready:
        code, report, err, seconds = safety(cluster, "drain", nodes[0], "--surge", "--yes", "--timeout", "180s",
                                            "--accept-risk", "hpa-no-scale-down")
        assert code == 0, err
        assert get_json(cluster, "hpa/web", "-n", namespace)["spec"]["minReplicas"] == 1  # restored
        wait_until(lambda: condition("ScalingLimited", "ScaleDownLimit"), 90,
                   "the autoscaler to hold the count (scale-down disabled)")
    assert replicas(cluster, namespace) == (2, None)  # what the plan said the surge leaves
    assert ready.minimum >= 1, ready.counts
    assert on_node(cluster, namespace, nodes[0]) == []
    print(f"\nHPA scale-down Disabled: named before; accepted, left at 2 replicas as planned, {seconds:.1f}s; "
          f"min Ready {ready.minimum}")


def test_argo_cd_label_tracking_is_gitops_managed(cluster, namespace, make_node, audit):
    nodes = pool(make_node, namespace, 2)
    tracked = web(namespace, 1)
    tracked["metadata"]["labels"] = {"app.kubernetes.io/instance": "shop"}  # Argo CD's default before v3
    place_on(cluster, namespace, nodes[1:], [tracked], 1)
    wait_pods_running(cluster, namespace, "app=web", count=1)
    started = audit.now()
    with ReadyRecorder(cluster, namespace, "app=web") as ready:
        code, plan, err, _ = safety(cluster, "drain", nodes[0], "--surge", "--yes")
    assert code == 3 and risk_codes(plan) == ["SURGE_GITOPS"], (plan["risks"], err)
    assert "app.kubernetes.io/instance=shop" in plan["risks"][0]["message"]
    assert writes(audit, started, namespace) == [] and ready.minimum == 1, ready.counts


def test_check_and_rollout_without_surge_say_what_it_would_unblock(cluster, namespace, make_node):
    nodes = pool(make_node, namespace, 3)
    place_on(cluster, namespace, nodes[1:], [web(namespace, 2), pdb("web", {"app": "web"}, min_available=2)], 2)
    wait_pdb_settled(cluster, namespace, "web", current_healthy=2, disruptions_allowed=0)
    with ReadyRecorder(cluster, namespace, "app=web") as ready:
        code, check, err, _ = safety(cluster, "check", "-l", f"pool={namespace}")
        code, rollout, err, _ = safety(cluster, "rollout", nodes[0], "--dry-run", "--lease-namespace", namespace)
    surgeable = {n["name"]: n.get("surgeable") for n in check["nodes"]}
    assert surgeable[nodes[0]] == {"workloads": [f"Deployment {namespace}/web"], "unblocks": True}, surgeable
    assert code == 3 and rollout["batches"][0]["drain"]["surgeable"]["unblocks"] is True, rollout["batches"]
    assert ready.minimum == 2, ready.counts
    print(f"\ncheck/rollout without --surge: {json.dumps(surgeable[nodes[0]])}")
