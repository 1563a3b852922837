"""`delete pod` on the real control plane: refusal without --confirm, force delete, Event, RBAC."""

from __future__ import annotations

import json

from cluster_helpers import create, get_json, pod, wait_pods_running, wait_until

from tests.unit.cli_helpers import run_cli


def safety(cluster, *args):
    """Run ``kubectl safety delete pod ARGS -o json`` in-process against the cluster."""
    return run_cli(["delete", "pod", *args, "--kubeconfig", str(cluster.kubeconfig), "-o", "json"])


def statefulset(name: str, node: str) -> dict:
    """A one-replica StatefulSet whose pod is bound straight to ``node`` (no scheduler involved)."""
    labels = {"app": name}
    spec = pod(name, labels, node_name=node)["spec"]
    return {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": name},
            "spec": {"replicas": 1, "serviceName": name, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels}, "spec": spec}}}


def uid_of(cluster, namespace, name):
    out = cluster.kubectl("get", "pod", name, "-n", namespace, "-o", "json", check=False)
    return json.loads(out.stdout)["metadata"]["uid"] if out.returncode == 0 else None


def test_statefulset_pod_on_notready_node_refused_then_force_deleted(cluster, namespace, make_node, audit):
    node = make_node(ready=False)["metadata"]["name"]
    create(cluster, namespace, statefulset("db", node))
    old_uid = wait_until(lambda: uid_of(cluster, namespace, "db-0"), 60, "pod db-0 to be created")

    refused_at = audit.now()
    code, out, err = safety(cluster, "db-0", "-n", namespace, "--force")
    assert code == 3, err
    assert "force deletion needs --confirm" in err
    report = json.loads(out)
    entry = report["pods"][0]
    assert (report["kind"], entry["action"]) == ("ForceDeleteAssessment", "refused")
    assert entry["node"]["state"] in ("NotReady", "Unknown") and entry["forceNeeded"] is True
    assert {"STATEFULSET_IDENTITY", "NODE_PARTITIONED"} <= {r["code"] for r in entry["risks"]}
    assert uid_of(cluster, namespace, "db-0") == old_uid

    confirmed_at = audit.now()
    code, out, err = safety(cluster, "db-0", "-n", namespace, "--force", "--confirm", "--reason", "node fenced by test")
    assert code == 0, err
    entry = json.loads(out)["pods"][0]
    assert (entry["action"], entry["event"]["recorded"]) == ("forceDeleted", True)

    # The confirmed run's requests reach the audit log, so an empty window before it is meaningful.
    mutations = wait_until(lambda: [(e.verb, e.resource, e.name, e.code) for e in
                                    audit.mutating_requests(confirmed_at, user_agent_contains="kubectl-safety/")
                                    if e.resource == "events" or e.name == "db-0"] or None, 15,
                           "the force delete in the audit log")
    assert mutations[0] == ("delete", "pods", "db-0", 200)
    assert ("create", "events") == mutations[1][:2]
    assert [e for e in audit.mutating_requests(refused_at, user_agent_contains="kubectl-safety/")
            if e.received < confirmed_at] == []

    events = get_json(cluster, "events", "-n", namespace, "--field-selector", "reason=ForceDeleted")["items"]
    user = cluster.kubectl("config", "view", "--minify", "-o", "jsonpath={.contexts[0].context.user}").stdout
    assert len(events) == 1
    assert events[0]["involvedObject"]["uid"] == old_uid
    assert f"force deleted by {user}" in events[0]["message"] and "node fenced by test" in events[0]["message"]

    def replaced():
        uid = uid_of(cluster, namespace, "db-0")
        return uid if uid not in (None, old_uid) else None

    wait_until(replaced, 60, "the StatefulSet to recreate db-0 (a new uid)")


def test_pod_on_ready_node_force_not_needed(cluster, namespace, make_node, audit):
    node = make_node()["metadata"]["name"]
    create(cluster, namespace, pod("web", node_name=node))
    wait_pods_running(cluster, namespace, "app=web", count=1)

    since = audit.now()
    code, out, err = safety(cluster, "web", "-n", namespace, "--force")
    assert code == 3, err
    entry = json.loads(out)["pods"][0]
    assert entry["node"]["state"] == "Ready" and entry["forceNeeded"] is False
    assert "force is not needed" in entry["verdict"]
    assert "NODE_READY" in {r["code"] for r in entry["risks"]}

    code, out, err = safety(cluster, "web", "-n", namespace, "--wait")
    assert code == 0, err
    entry = json.loads(out)["pods"][0]
    assert (entry["action"], entry["gone"]) == ("deleted", True)
    deletes = wait_until(lambda: [e for e in audit.mutating_requests(since, user_agent_contains="kubectl-safety/")
                                  if e.resource == "pods"] or None, 15, "the graceful delete in the audit log")
    assert [(e.verb, e.name) for e in deletes] == [("delete", "web")]


def test_graceful_delete_leaves_an_event_and_why_names_kubectl_safety(cluster, namespace, make_node):
    node = make_node()["metadata"]["name"]
    create(cluster, namespace, pod("web", node_name=node))
    wait_pods_running(cluster, namespace, "app=web", count=1)
    uid = uid_of(cluster, namespace, "web")

    code, out, err = safety(cluster, "web", "-n", namespace, "--wait")
    assert code == 0, err
    assert (json.loads(out)["pods"][0]["action"], "warning" in err) == ("deleted", False)
    events = get_json(cluster, "events.v1.events.k8s.io", "-n", namespace,
                      "--field-selector", "reason=Deleted")["items"]
    assert [(e["reportingController"], e["action"], e["regarding"]["uid"], e["note"]) for e in events] == [
        ("safety.kubectl.io", "Delete", uid, f"delete pod: deleted from node {node}")]

    code, out, err = run_cli(["why", "pod", "web", "-n", namespace, "-o", "json",
                              "--kubeconfig", str(cluster.kubeconfig)])
    cause = json.loads(out)["cause"]
    assert (code, cause["code"], cause["actor"]) == (0, "DELETED", "kubectl-safety delete pod"), err
    assert f"deleted from node {node}" in cause["summary"]


def test_user_without_delete_rights_gets_a_forbidden_line(cluster, namespace, make_node):
    node = make_node()["metadata"]["name"]
    create(cluster, namespace, pod("victim", node_name=node))
    cluster.kubectl("create", "role", "viewer", "--verb=get,list,watch", "--resource=pods", "-n", namespace)
    cluster.kubectl("create", "rolebinding", "viewer", "--role=viewer", "--user=viewer", "-n", namespace)

    code, out, err = safety(cluster, "victim", "-n", namespace, "--as", "viewer")
    assert code == 1
    assert ('error: Error from server (Forbidden): pods "victim" is forbidden: User "viewer" cannot delete '
            f'resource "pods" in API group "" in the namespace "{namespace}"') in err
    assert json.loads(out)["pods"][0]["action"] == "failed"
    assert uid_of(cluster, namespace, "victim") is not None


def test_deleted_node_object_is_treated_as_gone(cluster, namespace, make_node):
    node = make_node(ready=False)["metadata"]["name"]
    create(cluster, namespace, pod("orphan", node_name=node))
    cluster.kubectl("delete", "node", node)

    code, out, err = safety(cluster, "orphan", "-n", namespace, "--force")
    assert code == 3, err
    entry = json.loads(out)["pods"][0]
    assert entry["node"]["state"] == "Gone"
    assert "NODE_GONE" in {r["code"] for r in entry["risks"]}
    assert "Node object is gone" in entry["verdict"]


OUT_OF_SERVICE = {"key": "node.kubernetes.io/out-of-service", "value": "nodeshutdown", "effect": "NoExecute"}


def test_pod_on_out_of_service_node_needs_no_force_the_pod_gc_deletes_it(cluster, namespace, make_node):
    """``gcTerminating``: on a NotReady node with the out-of-service taint a graceful delete is enough,
    the pod GC force-deletes the terminating pod (no kubelet answers here)."""
    node = make_node(ready=False, taints=[OUT_OF_SERVICE])["metadata"]["name"]
    obj = pod("stuck", node_name=node)
    obj["spec"]["terminationGracePeriodSeconds"] = 300  # longer than the wait: only the pod GC can end it
    obj["spec"]["tolerations"] = [{**OUT_OF_SERVICE, "operator": "Equal"}]  # not evicted by the taint itself
    create(cluster, namespace, obj)
    old_uid = wait_until(lambda: uid_of(cluster, namespace, "stuck"), 60, "pod stuck to be created")

    code, out, err = safety(cluster, "stuck", "-n", namespace, "--force")
    assert code == 3, err
    entry = json.loads(out)["pods"][0]
    assert entry["node"]["state"] in ("NotReady", "Unknown") and entry["forceNeeded"] is False, entry
    assert "pod garbage collector" in entry["verdict"]
    assert "NODE_OUT_OF_SERVICE" in {r["code"] for r in entry["risks"]}

    code, out, err = safety(cluster, "stuck", "-n", namespace)
    assert code == 0, err
    assert json.loads(out)["pods"][0]["action"] == "deleted"
    wait_until(lambda: uid_of(cluster, namespace, "stuck") != old_uid, 90, "the pod GC to force-delete the pod")
