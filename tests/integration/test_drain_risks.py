"""The SAFE contract on the real control plane (issue 18): for each risk a drain plan reports, the
real components (scheduler, Eviction API, kubectl drain) show the outcome the plan predicted.

Every test confines its workloads to its own nodes (label ``pool=<namespace>``); zones are named
after the namespace so other tests' nodes never share a domain.
"""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta, timezone
from pathlib import Path

from cluster_helpers import (create, deployment, get_json, pdb, place_on, pods_by_uid,
                             wait_pdb_settled, wait_pods_running, wait_until)

from tests.unit.cli_helpers import run_cli

ZONE = "topology.kubernetes.io/zone"
README = Path(__file__).resolve().parents[2] / "README.md"
DUMP_RECIPE = re.search(r"`kubectl get (\S+) -A -o json > cluster.json`", README.read_text()).group(1)  # as documented


def safety(cluster, *args):
    """``kubectl safety drain ARGS -o json`` in-process: (exit code, parsed stdout, stderr)."""
    code, out, err = run_cli(["drain", *args, "--kubeconfig", str(cluster.kubeconfig), "-o", "json"])
    return code, (json.loads(out) if out.strip() else None), err


def pool(make_node, namespace, zones, **kwargs) -> list[str]:
    """One Ready kwok node per entry of ``zones`` (a zone suffix, or None for no zone label)."""
    return [make_node(f"risk-{namespace[-6:]}-{i}", labels={"pool": namespace},
                      zone=f"{namespace[-6:]}-{z}" if z else None, **kwargs)["metadata"]["name"]
            for i, z in enumerate(zones)]


def confined(name, replicas, namespace, cpu="100m", **spec) -> dict:
    return deployment(name, replicas, node_selector={"pool": namespace}, requests={"cpu": cpu}, **spec)


def risk(plan, code) -> dict:
    found = [r for r in plan["risks"] if r["code"] == code]
    assert found, plan["risks"]
    return found[0]


def pending_reason(cluster, namespace, selector) -> str:
    """The scheduler's message for the (one) Pending pod of ``selector``, once it has tried."""
    def check():
        for p in get_json(cluster, "pods", "-n", namespace, "-l", selector)["items"]:
            if p["metadata"].get("deletionTimestamp") or p["spec"].get("nodeName"):
                continue
            cond = next((c for c in p["status"].get("conditions", []) if c["type"] == "PodScheduled"), None)
            if cond and cond["status"] == "False" and cond.get("reason") == "Unschedulable":
                return cond["message"]
        return None
    return wait_until(check, 60, f"a Pending {selector} pod the scheduler gave up on")


def drain_accepting(cluster, node, *accept):
    """A real drain (ours) that accepts the named risks; returns (exit code, report, stderr)."""
    return safety(cluster, node, "--yes", "--timeout", "60s", *[f"--accept-risk={a}" for a in accept])


def test_replacement_left_pending_by_capacity(cluster, namespace, make_node):
    nodes = pool(make_node, namespace, [None, None], cpu="1")
    place_on(cluster, namespace, nodes[1:], [confined("big", 1, namespace, cpu="800m")], 1)
    create(cluster, namespace, confined("filler", 1, namespace, cpu="500m"))
    wait_pods_running(cluster, namespace, "app=filler", 1)

    code, plan, err = safety(cluster, nodes[0], "--dry-run")
    assert code == 3 and not plan["safe"], err
    unplaceable = risk(plan, "REPLACEMENT_UNPLACEABLE")
    assert unplaceable["nodes"][nodes[1]].startswith("Insufficient cpu")

    code, report, err = drain_accepting(cluster, nodes[0], "unplaceable")
    assert code == 0 and report["drained"], err
    assert "Insufficient cpu" in pending_reason(cluster, namespace, "app=big")


def test_replacement_left_pending_by_topology_spread(cluster, namespace, make_node):
    nodes = pool(make_node, namespace, ["a", "b"])
    spread = [{"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule",
               "labelSelector": {"matchLabels": {"app": "web"}}}]
    web = confined("web", 2, namespace)
    web["spec"]["template"]["spec"]["topologySpreadConstraints"] = spread
    create(cluster, namespace, web)
    running = wait_pods_running(cluster, namespace, "app=web", 2)
    assert sorted(p["spec"]["nodeName"] for p in running) == sorted(nodes)

    code, plan, err = safety(cluster, nodes[0], "--dry-run")
    assert code == 3, err
    assert "topology spread" in risk(plan, "REPLACEMENT_UNPLACEABLE")["nodes"][nodes[1]]

    code, report, err = drain_accepting(cluster, nodes[0], "unplaceable")
    assert code == 0, err
    assert "topology spread" in pending_reason(cluster, namespace, "app=web")


def test_replacement_left_pending_by_a_zonal_volume(cluster, namespace, make_node, tmp_path):
    nodes = pool(make_node, namespace, ["a", "b"])
    zone_a = f"{namespace[-6:]}-a"
    cls, volume = f"zonal-{namespace}", f"pv-{namespace}"
    objects = [
        {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": cls},
         "provisioner": "kubernetes.io/no-provisioner", "volumeBindingMode": "WaitForFirstConsumer"},
        {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": volume, "labels": {ZONE: zone_a}},
         "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "storageClassName": cls,
                  "hostPath": {"path": "/tmp/" + volume}, "claimRef": {"namespace": namespace, "name": "data"},
                  "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                      {"key": ZONE, "operator": "In", "values": [zone_a]}]}]}}}},
    ]
    create(cluster, None, *objects)
    claim = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "data"},
             "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": cls, "volumeName": volume,
                      "resources": {"requests": {"storage": "1Gi"}}}}
    db = confined("db", 1, namespace)
    db["spec"]["template"]["spec"]["volumes"] = [{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}]
    try:
        create(cluster, namespace, claim, db)
        [running] = wait_pods_running(cluster, namespace, "app=db", 1)
        assert running["spec"]["nodeName"] == nodes[0]

        code, plan, err = safety(cluster, nodes[0], "--dry-run")
        assert code == 3, err
        why = risk(plan, "REPLACEMENT_UNPLACEABLE")["nodes"]
        assert "didn't match PersistentVolume's node affinity" in why[nodes[1]]
        # a dump made with the README's recipe judges the volume the same way
        (tmp_path / "dump.json").write_text(cluster.kubectl("get", DUMP_RECIPE, "-A", "-o", "json").stdout)
        code, out, err = run_cli(["drain", nodes[0], "--dry-run", "--snapshot", str(tmp_path / "dump.json"),
                                  "-o", "json"])
        assert code == 3 and risk(json.loads(out), "REPLACEMENT_UNPLACEABLE")["nodes"][nodes[1]] == why[nodes[1]], err

        code, report, err = drain_accepting(cluster, nodes[0], "unplaceable")
        assert code == 0, err
        assert "didn't match PersistentVolume's node affinity" in pending_reason(cluster, namespace, "app=db")
    finally:
        cluster.kubectl("delete", "pv", volume, "--wait=false", check=False)
        cluster.kubectl("delete", "storageclass", cls, "--wait=false", check=False)


def heartbeat_lost(cluster, node):
    """The node's Ready condition as the node lifecycle controller writes it once heartbeats stop."""
    old = (datetime.now(timezone.utc) - timedelta(minutes=5)).strftime("%Y-%m-%dT%H:%M:%SZ")
    condition = {"type": "Ready", "status": "Unknown", "reason": "NodeStatusUnknown",
                 "message": "Kubelet stopped posting node status.", "lastHeartbeatTime": old,
                 "lastTransitionTime": old}
    cluster.kubectl("patch", f"node/{node}", "--subresource=status", "--type=strategic", "-p",
                    json.dumps({"status": {"conditions": [condition]}}))


def test_unreachable_node_leaves_the_evicted_pod_terminating(cluster, namespace, make_node):
    """A node without a kubelet (kwok does not manage it) whose heartbeat is 5 minutes old; the
    Deployment's pod is bound to it. Evicted, the pod stays Terminating: nothing confirms its end."""
    down = make_node(f"risk-{namespace[-6:]}-0", ready=False, labels={"pool": namespace})["metadata"]["name"]
    make_node(f"risk-{namespace[-6:]}-1", labels={"pool": namespace})
    heartbeat_lost(cluster, down)
    web = confined("web", 1, namespace, node_name=down)
    web["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] = 30
    create(cluster, namespace, web)
    old = wait_until(lambda: next(iter(pods_by_uid(cluster, namespace).values()), None), 30, "the web pod")

    code, plan, err = safety(cluster, down, "--dry-run")
    assert code == 3, err
    unreachable = risk(plan, "NODE_UNREACHABLE")
    assert {"kind": "Pod", "namespace": namespace, "name": old["metadata"]["name"]} in unreachable["objects"]
    assert "--skip-wait-for-delete-timeout" in unreachable["message"]
    risk(plan, "REPLACEMENT_RETURNS_TO_NODE")  # the template pins nodeName: its replacement comes back here

    code, report, err = safety(cluster, down, "--yes", "--timeout", "15s", "--accept-risk=unreachable,timeout,returns")
    assert code == 4 and not report["drained"], err  # the pod never goes: the drain times out
    stuck = pods_by_uid(cluster, namespace)[old["metadata"]["uid"]]
    assert stuck["metadata"].get("deletionTimestamp") and stuck["spec"]["nodeName"] == down
    cluster.kubectl("delete", "pod", old["metadata"]["name"], "-n", namespace, "--force", "--grace-period=0",
                    check=False)


def test_disable_eviction_that_would_break_a_pdb_is_refused(cluster, namespace, make_node, audit):
    nodes = pool(make_node, namespace, [None, None])
    place_on(cluster, namespace, nodes[1:], [confined("web", 2, namespace),
                                             pdb("web", {"app": "web"}, min_available=2)], 2)
    wait_pdb_settled(cluster, namespace, "web", disruptions_allowed=0, current_healthy=2)
    before = set(pods_by_uid(cluster, namespace))

    code, plan, err = safety(cluster, nodes[0], "--dry-run", "--disable-eviction")
    assert code == 3, err
    bypass = risk(plan, "PDB_BYPASSED")
    assert {"kind": "PodDisruptionBudget", "namespace": namespace, "name": "web"} in bypass["objects"]

    started = audit.now()
    code, report, err = safety(cluster, nodes[0], "--yes", "--disable-eviction", "--timeout", "30s")
    assert code == 3 and "PDB_BYPASSED" in err, err
    assert set(pods_by_uid(cluster, namespace)) == before
    assert not get_json(cluster, f"node/{nodes[0]}")["spec"].get("unschedulable")
    assert not list(audit.mutating_requests(started, user_agent_contains="kubectl-safety/"))


def test_replacements_tolerating_unschedulable_return_to_the_cordoned_node(cluster, namespace, make_node):
    nodes = pool(make_node, namespace, [None, None])
    place_on(cluster, namespace, nodes[:1], [confined("filler", 1, namespace, cpu="2")], 1)  # nodes[1] is busier
    create(cluster, namespace, confined("addon", 1, namespace, tolerations=[{"operator": "Exists"}]))
    [running] = wait_pods_running(cluster, namespace, "app=addon", 1)
    assert running["spec"]["nodeName"] == nodes[0]

    code, plan, err = safety(cluster, nodes[0], "--dry-run")
    assert code == 3, err
    returning = risk(plan, "REPLACEMENT_RETURNS_TO_NODE")
    assert {"kind": "Node", "namespace": "", "name": nodes[0]} in returning["objects"]
    assert nodes[0] in {p["replacementNode"] for p in plan["pods"] if p["name"].startswith("addon-")}

    result = cluster.kubectl("drain", nodes[0], "--timeout=60s", check=False, timeout=90)
    assert result.returncode == 0, result.stderr  # kubectl drain reports success ...
    [back] = wait_pods_running(cluster, namespace, "app=addon", 1)
    assert back["metadata"]["uid"] != running["metadata"]["uid"]
    assert back["spec"]["nodeName"] == nodes[0]  # ... yet the node is not empty
    assert get_json(cluster, f"node/{nodes[0]}")["spec"].get("unschedulable") is True

    # ours, with the risk accepted, evicts what is there once (as kubectl does) and says the node is not empty
    code, report, err = safety(cluster, nodes[0], "--yes", "--timeout", "60s", "--accept-risk=returns")
    assert code == 0 and report["status"] == "drained" and report["drained"] is False, err
    assert report["evicted"] == [f"{namespace}/{back['metadata']['name']}"]
    assert [p["node"] for p in report["left"]] == [nodes[0]]
