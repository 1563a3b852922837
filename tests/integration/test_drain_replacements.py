"""A drain's replacements are what the controllers create from their templates (``GetPodFromTemplate``):
checked against the real ReplicaSet controller on the test control plane."""

from __future__ import annotations

from cluster_helpers import create, get_json, pool_nodes, pool_web, wait_pods_running, wait_until

from tests.integration.test_drain import safety


def test_template_with_node_name_brings_the_replacement_back_to_the_cordoned_node(cluster, namespace, make_node):
    """The template binds its pods to the node being drained: the plan is not SAFE (the replacement
    returns), and indeed the ReplicaSet's new pod skips the scheduler and runs on the cordoned node."""
    target, _ = pool_nodes(make_node, namespace, 2)
    web = pool_web(1, namespace)
    web["spec"]["template"]["spec"]["nodeName"] = target
    create(cluster, namespace, web)
    old = wait_pods_running(cluster, namespace, "app=web", count=1)[0]

    code, plan, err = safety(cluster, target, "--dry-run")
    assert (code, plan["safe"]) == (3, False), err
    returns = [r for r in plan["risks"] if r["code"] == "REPLACEMENT_RETURNS_TO_NODE"]
    assert returns and f"sets nodeName {target}" in returns[0]["message"], plan["risks"]

    cluster.kubectl("cordon", target)
    cluster.kubectl("delete", "pod", old["metadata"]["name"], "-n", namespace, "--wait=false")

    def back():
        pods = get_json(cluster, "pods", "-n", namespace, "-l", "app=web")["items"]
        new = [p for p in pods if p["metadata"]["uid"] != old["metadata"]["uid"]
               and p["status"].get("phase") == "Running"]
        return new[0] if new else None

    replacement = wait_until(back, 60, "the replacement to run")
    assert replacement["spec"]["nodeName"] == target
    assert get_json(cluster, f"node/{target}")["spec"].get("unschedulable") is True
