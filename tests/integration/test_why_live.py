"""`why pod|node` against the real control plane: each cause produced for real (the scheduler's preemption,
evictions by `kubectl drain`, by kubectl-safety and by a descheduler-like client, the taint manager, pod GC,
a Deployment scaled down, a plain delete whose evidence is gone), then `why` run live and on a dump taken
right after (`kubectl get nodes,pods,events -A -o json --show-managed-fields`); the answer's actor and time
are compared with what the test did, within the events' resolution (core/v1 events: seconds)."""

from __future__ import annotations

import json
import uuid
from datetime import datetime, timedelta, timezone

from cluster_helpers import (create, deployment, get_json, place_on, pod, pool_nodes, pool_web, priority_class,
                             wait_pods_running, wait_until)

from tests.unit.cli_helpers import run_cli

SLACK = timedelta(seconds=2)  # core/v1 event times are whole seconds; the test's clock and the server's agree


def now():
    return datetime.now(timezone.utc)


def why(cluster, *args, snapshot=None):
    source = ["--snapshot", str(snapshot)] if snapshot else ["--kubeconfig", str(cluster.kubeconfig)]
    code, out, err = run_cli(["why", *args, "-o", "json", *source])
    assert out, err
    return code, json.loads(out)


def dump(cluster, tmp_path):
    path = tmp_path / "dump.json"
    path.write_text(cluster.kubectl("get", "nodes,pods,events", "-A", "-o", "json", "--show-managed-fields").stdout)
    return path


def answered(cluster, tmp_path, args, code, actor, before, after, scenario):
    """``why`` live and on a dump agree on the cause and actor, and its time lies between ``before`` and
    ``after`` (what the test did); the scenario's row is printed for the report."""
    answers = []
    for snapshot in (None, dump(cluster, tmp_path)):
        rc, r = why(cluster, *args, snapshot=snapshot)
        assert (rc, r["cause"]["code"]) == ((3 if code == "UNKNOWN" else 0), code), json.dumps(r, indent=1)
        assert actor in r["cause"]["actor"], r["cause"]
        answers.append(r)
    live, offline = answers
    assert offline["cause"] == live["cause"]
    at = live["cause"]["at"]
    if at is not None:
        at = datetime.fromisoformat(at.replace("Z", "+00:00"))
        assert before - SLACK <= at <= after + SLACK, (at, before, after)
    diff = "-" if at is None else f"{(at - before).total_seconds():+.1f}s"
    text = run_cli(["why", *args, "--snapshot", str(snapshot)])[1]
    print(f"\nTEXT kubectl safety why {' '.join(args)}\n{text}END TEXT")
    print(f"\nSCENARIO | {scenario} | {live['cause']['code']} | {live['cause']['actor'] or '-'} | "
          f"{live['cause']['summary']} | at-minus-action {diff}")
    return live


def gone(cluster, namespace, name, timeout=90):
    def absent():
        result = cluster.kubectl("get", "pod", name, "-n", namespace, "--ignore-not-found", "-o", "name")
        return result.stdout.strip() == ""

    wait_until(absent, timeout, f"pod {namespace}/{name} gone")


def only_pod(cluster, namespace, selector):
    return wait_pods_running(cluster, namespace, selector, count=1, ready=False)[0]["metadata"]["name"]


def test_why_preempted_by_the_scheduler(cluster, namespace, make_node, tmp_path):
    node = pool_nodes(make_node, namespace, 1, "why")[0]
    low, high = f"why-low-{namespace[-6:]}", f"why-high-{namespace[-6:]}"
    create(cluster, None, priority_class(low, 10), priority_class(high, 1000))
    try:
        place = {"node_selector": {"kubernetes.io/hostname": node}, "requests": {"cpu": "3"}}
        create(cluster, namespace, pod("victim", priority_class=low, **place))
        wait_pods_running(cluster, namespace, "app=victim", count=1, ready=False)
        before = now()
        create(cluster, namespace, pod("big", priority_class=high, **place))
        gone(cluster, namespace, "victim")
        wait_pods_running(cluster, namespace, "app=big", count=1, ready=False)
        r = answered(cluster, tmp_path, ("pod", "victim", "-n", namespace), "PREEMPTED", "default-scheduler",
                     before, now(), "preempted by the scheduler (pod gone)")
        assert f"for pod {namespace}/big on node {node}" in r["cause"]["summary"]
        assert r["cause"]["details"]["preemptorPriority"] == 1000
    finally:
        cluster.kubectl("delete", "priorityclass", low, high, "--ignore-not-found", check=False)


def test_why_preempted_replicaset_pod_gone_names_its_priority_from_its_owners_class(cluster, namespace, make_node,
                                                                                   tmp_path):
    node = pool_nodes(make_node, namespace, 1, "why")[0]
    low, high = f"why-low-{namespace[-6:]}", f"why-high-{namespace[-6:]}"
    create(cluster, None, priority_class(low, 10), priority_class(high, 1000))
    try:
        place = {"node_selector": {"kubernetes.io/hostname": node}, "requests": {"cpu": "3"}}
        labels = {"app": "victim"}
        create(cluster, namespace, {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "victim"},
                                    "spec": {"replicas": 1, "selector": {"matchLabels": labels},
                                             "template": {"metadata": {"labels": labels}, "spec": pod(
                                                 "victim", priority_class=low, **place)["spec"]}}})
        name = only_pod(cluster, namespace, "app=victim")
        create(cluster, namespace, pod("big", priority_class=high, **place))
        gone(cluster, namespace, name)
        wait_pods_running(cluster, namespace, "app=big", count=1, ready=False)
        path = tmp_path / "dump.json"
        path.write_text(cluster.kubectl("get", "nodes,pods,events,replicasets,priorityclasses", "-A", "-o", "json",
                                        "--show-managed-fields").stdout)
        for snapshot in (None, path):
            rc, r = why(cluster, "pod", name, "-n", namespace, snapshot=snapshot)
            details = r["cause"]["details"]
            assert (rc, r["cause"]["code"], details["victimPriority"]) == (0, "PREEMPTED", 10), r["cause"]
            assert details["victimPrioritySource"] == f"ReplicaSet/victim template: class {low}"
            assert f"for pod {namespace}/big on node {node} (priority 10 < 1000)" in r["cause"]["summary"]
    finally:
        cluster.kubectl("delete", "priorityclass", low, high, "--ignore-not-found", check=False)


def test_why_evicted_by_kubectl_safety_drain_and_why_node_names_it(cluster, namespace, make_node, tmp_path):
    nodes = pool_nodes(make_node, namespace, 2, "why")
    place_on(cluster, namespace, nodes[1:], [pool_web(1, namespace)], 1)
    name = only_pod(cluster, namespace, "app=web")
    before = now()
    code, out, err = run_cli(["drain", nodes[0], "--yes", "--timeout", "60s", "--kubeconfig", str(cluster.kubeconfig)])
    assert code == 0, err
    gone(cluster, namespace, name)
    after = now()
    r = answered(cluster, tmp_path, ("pod", name, "-n", namespace), "EVICTION_API", "kubectl-safety drain",
                 before, after, "evicted by kubectl-safety drain (pod gone)")
    assert f"evicted from node {nodes[0]} (wave 1)" in r["cause"]["summary"]
    answered(cluster, tmp_path, ("node", nodes[0]), "CORDONED", "kubectl-safety drain", before, after,
             "node cordoned by kubectl-safety drain")


def test_why_evicted_by_kubectl_drain_names_only_the_audit_log(cluster, namespace, make_node, tmp_path):
    nodes = pool_nodes(make_node, namespace, 2, "why")
    held = {**pool_web(1, namespace)}
    held["spec"]["template"]["metadata"]["finalizers"] = ["example.com/hold"]  # terminating while the test reads
    place_on(cluster, namespace, nodes[1:], [held], 1)
    name = only_pod(cluster, namespace, "app=web")
    before = now()
    result = cluster.kubectl("drain", nodes[0], "--ignore-daemonsets", "--timeout=5s", check=False, timeout=60)
    try:
        wait_until(lambda: get_json(cluster, "pod", name, "-n", namespace)["metadata"].get("deletionTimestamp"),
                   60, "the evicted pod terminating")
        after = now()
        r = answered(cluster, tmp_path, ("pod", name, "-n", namespace), "EVICTION_API", "", before, after,
                     "evicted by kubectl drain (pod terminating)")
        assert r["cause"]["actor"] == "" and "subresource=eviction" in r["cause"]["unanswered"]
        answered(cluster, tmp_path, ("node", nodes[0]), "CORDONED", "kubectl (cordon or drain)", before, after,
                 "node cordoned by kubectl drain (managedFields)")
    finally:
        cluster.kubectl("patch", "pod", name, "-n", namespace, "--type=json",
                        "-p", '[{"op":"remove","path":"/metadata/finalizers"}]', check=False)
    assert result.returncode in (0, 1)


def test_why_evicted_by_a_descheduler_like_client_naming_itself(cluster, namespace, make_node, tmp_path):
    nodes = pool_nodes(make_node, namespace, 2, "why")
    place_on(cluster, namespace, nodes[1:], [pool_web(1, namespace)], 1)
    target = get_json(cluster, "pods", "-n", namespace, "-l", "app=web")["items"][0]
    name, uid = target["metadata"]["name"], target["metadata"]["uid"]
    before = now()
    eviction = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": name, "namespace": namespace}}
    cluster.kubectl("create", "--raw", f"/api/v1/namespaces/{namespace}/pods/{name}/eviction", "-f", "-",
                    input=json.dumps(eviction))
    stamp = now()
    event = {"apiVersion": "events.k8s.io/v1", "kind": "Event",
             "metadata": {"name": f"{name}.{uuid.uuid4().hex[:12]}", "namespace": namespace},
             "eventTime": stamp.strftime("%Y-%m-%dT%H:%M:%S.%fZ"), "reportingController": "sigs.k8s.io.descheduler",
             "reportingInstance": "sigs.k8s.io.descheduler-test", "action": "Descheduled", "type": "Normal",
             "reason": "RemovePodsViolatingNodeTaints", "note": f"pod eviction from {nodes[0]} node by "
             "sigs.k8s.io/descheduler", "regarding": {"apiVersion": "v1", "kind": "Pod", "namespace": namespace,
                                                      "name": name, "uid": uid}}
    create(cluster, namespace, event)
    gone(cluster, namespace, name)
    answered(cluster, tmp_path, ("pod", name, "-n", namespace), "EVICTION_API", "the descheduler", before, now(),
             "evicted by a descheduler-like client with its event (pod gone)")


def test_why_deleted_by_the_taint_manager(cluster, namespace, make_node, tmp_path):
    node = pool_nodes(make_node, namespace, 1, "why")[0]
    create(cluster, namespace, pod("tainted", node_selector={"kubernetes.io/hostname": node}))
    wait_pods_running(cluster, namespace, "app=tainted", count=1, ready=False)
    before = now()
    cluster.kubectl("taint", "node", node, "example.com/maintenance=now:NoExecute")
    gone(cluster, namespace, "tainted")
    r = answered(cluster, tmp_path, ("pod", "tainted", "-n", namespace), "TAINT_MANAGER",
                 "taint-eviction-controller", before, now(), "deleted by the taint manager (pod gone)")
    assert "example.com/maintenance=now:NoExecute" in r["cause"]["summary"]


def test_why_deleted_by_pod_gc_after_its_node_was_deleted(cluster, namespace, make_node, tmp_path):
    node = pool_nodes(make_node, namespace, 2, "why")[0]  # the other stays: the dump holds nodes
    create(cluster, namespace, pod("orphan", node_selector={"kubernetes.io/hostname": node}))
    wait_pods_running(cluster, namespace, "app=orphan", count=1, ready=False)
    before = now()
    cluster.kubectl("delete", "node", node)
    gone(cluster, namespace, "orphan", timeout=150)  # pod GC: 40 s of quarantine, a pass every 20 s
    r = answered(cluster, tmp_path, ("pod", "orphan", "-n", namespace), "POD_GC", "pod-garbage-collector",
                 before, now(), "pod GC after its node was deleted (pod gone)")
    assert r["cause"]["confidence"] == "low" and "audit log" in r["cause"]["unanswered"]


def test_why_deleted_by_a_deployment_scale_down(cluster, namespace, make_node, tmp_path):
    pool_nodes(make_node, namespace, 1, "why")
    create(cluster, namespace, pool_web(2, namespace))
    names = {p["metadata"]["name"] for p in wait_pods_running(cluster, namespace, "app=web", count=2, ready=False)}
    before = now()
    cluster.kubectl("scale", "deployment", "web", "-n", namespace, "--replicas=1")
    left = wait_until(lambda: (lambda n: n if len(n) == 1 else None)(
        {p["metadata"]["name"] for p in get_json(cluster, "pods", "-n", namespace, "-l", "app=web")["items"]}),
        60, "one pod left")
    removed = (names - left).pop()
    gone(cluster, namespace, removed)
    r = answered(cluster, tmp_path, ("pod", removed, "-n", namespace), "DELETED", "replicaset-controller",
                 before, now(), "deleted by a Deployment scale-down (pod gone)")
    assert r["cause"]["details"]["owner"].startswith("ReplicaSet/web-")


def test_why_a_plain_delete_without_evidence_is_unknown_and_names_the_audit_query(cluster, namespace, make_node,
                                                                                 tmp_path):
    node = pool_nodes(make_node, namespace, 1, "why")[0]
    create(cluster, namespace, pod("plain", node_selector={"kubernetes.io/hostname": node}))
    wait_pods_running(cluster, namespace, "app=plain", count=1, ready=False)
    before = now()
    cluster.kubectl("delete", "pod", "plain", "-n", namespace)
    gone(cluster, namespace, "plain")
    r = answered(cluster, tmp_path, ("pod", "plain", "-n", namespace), "UNKNOWN", "", before, now(),
                 "plain kubectl delete: no evidence left (pod gone)")
    assert "verb=delete" in r["cause"]["unanswered"] and "objectRef.name=plain" in r["cause"]["unanswered"]
    cluster.kubectl("delete", "events", "-n", namespace, "--field-selector",
                    "involvedObject.kind=Pod,involvedObject.name=plain")
    code, out, err = run_cli(["why", "pod", "plain", "-n", namespace, "--kubeconfig", str(cluster.kubeconfig)])
    assert (code, out) == (1, "") and "no event names it" in err  # expired: nothing names it any more


def test_why_node_names_kureds_lock_on_its_daemonset(cluster, namespace, make_node, tmp_path):
    node = make_node()["metadata"]["name"]
    cluster.kubectl("cordon", node)
    created = now().strftime("%Y-%m-%dT%H:%M:%SZ")
    lock = json.dumps({"nodeID": node, "metadata": {"unschedulable": False}, "created": created, "TTL": 0})
    labels = {"app": "kured"}
    create(cluster, namespace, {
        "apiVersion": "apps/v1", "kind": "DaemonSet",
        "metadata": {"name": "kured", "annotations": {"weave.works/kured-node-lock": lock}},
        "spec": {"selector": {"matchLabels": labels}, "template": {"metadata": {"labels": labels}, "spec": {
            "nodeSelector": {"kured-test": "no-such-node"}, "containers": [{"name": "kured", "image": "kured"}]}}}})
    path = tmp_path / "dump.json"
    path.write_text(cluster.kubectl("get", "nodes,pods,events,daemonsets", "-A", "-o", "json",
                                    "--show-managed-fields").stdout)
    answers = [why(cluster, "node", node), why(cluster, "node", node, snapshot=path)]
    for code, r in answers:
        cause = r["cause"]
        assert (code, cause["code"], cause["actor"]) == (0, "CORDONED", "kured"), cause
        assert f"kured's lock weave.works/kured-node-lock on DaemonSet {namespace}/kured" in cause["summary"]
        assert cause["at"] == created
        assert any(e["reason"] == f"weave.works/kured-node-lock on DaemonSet {namespace}/kured" for e in r["evidence"])
