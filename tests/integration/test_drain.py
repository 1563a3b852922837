"""`drain` on the real control plane: the dry-run prediction against a real `kubectl drain`,
real drains that never take a PDB below its desired healthy count, refusals, timeout and resume.

Every test confines its workloads to its own nodes (label ``pool=<namespace>``), so draining
them never touches other tests' pods.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time

import pytest
from cluster_helpers import ReadyRecorder, daemonset, place_on, pool_nodes, pool_web, pods_by_uid, create, get_json, pdb, pod, wait_pdb_settled, wait_pods_running, wait_until

from kubectl_safety.cluster.live import Connection
from tests.unit.cli_helpers import run_cli

KUBECTL_TIMEOUT = "20s"


# -- helpers ------------------------------------------------------------------------------------
def safety(cluster, *args):
    """``kubectl safety drain ARGS -o json`` in-process: (exit code, parsed stdout, stderr)."""
    code, out, err = run_cli(["drain", *args, "--kubeconfig", str(cluster.kubeconfig), "-o", "json"])
    return code, (json.loads(out) if out.strip() else None), err


def set_unready(cluster, namespace, name):
    patch = json.dumps({"status": {"conditions": [{"type": "Ready", "status": "False"}]}})
    cluster.kubectl("patch", "pod", name, "-n", namespace, "--subresource=status", "--type=strategic", "-p", patch)


def with_volume(obj, volume):
    obj["spec"]["template"]["spec"]["volumes"] = [volume]
    return obj


def pinned(name, node, **meta):
    obj = pod(name, node_name=node)
    obj["metadata"].update(meta)
    return obj


def kubectl_would_evict(plan) -> set:
    """Pods kubectl drain ends up evicting per our plan: not skipped/blocked, on a node without
    a filter error (kubectl evicts nothing on a node where one pod fails its filters)."""
    failed = {n["name"] for n in plan["nodes"] if n["filterErrors"]}
    return {p["uid"] for p in plan["pods"] if p["action"] in ("evict", "wait", "delete") and p["node"] not in failed}


# -- differential: our dry run vs a real kubectl drain ------------------------------------------
def _daemonset(ns, nodes):
    return [daemonset(ns), pool_web(2, ns)], 5, []  # an agent on each of the 3 pool nodes


def _mirror(ns, nodes):
    return [pool_web(2, ns), pinned("static-x", nodes[0], annotations={"kubernetes.io/config.mirror": "hash"})], 3, []


def _emptydir(ns, nodes):
    return [with_volume(pool_web(2, ns), {"name": "scratch", "emptyDir": {}})], 2, []


def _bare(ns, nodes):
    return [pool_web(2, ns), pinned("bare", nodes[0])], 3, []


def _budget(min_available=None, max_unavailable=None):
    def build(ns, nodes):
        return [pool_web(3, ns), pdb("web", {"app": "web"}, min_available=min_available,
                                max_unavailable=max_unavailable)], 3, ["web"]
    return build


def _two_pdbs(ns, nodes):
    return [pool_web(2, ns), pdb("web", {"app": "web"}, max_unavailable=1), pdb("all", {}, max_unavailable=5)], 2, ["web", "all"]


def _unready(policy):
    def build(ns, nodes):
        budget = pdb("web", {"app": "web"}, min_available=3)
        if policy:
            budget["spec"]["unhealthyPodEvictionPolicy"] = policy
        return [pool_web(3, ns), budget], 3, ["web"]
    return build


# id, builder, drained node count (of 3 pool nodes), extra flags, pods made unready, expect a safe plan
DIFFERENTIAL = [
    ("daemonset-not-ignored", _daemonset, 1, [], 0, False),
    ("daemonset-ignored", _daemonset, 1, ["--ignore-daemonsets"], 0, True),
    ("mirror-like-pod", _mirror, 1, [], 0, True),
    ("emptydir-refused", _emptydir, 1, [], 0, False),
    ("emptydir-allowed", _emptydir, 1, ["--delete-emptydir-data"], 0, True),
    ("bare-pod-refused", _bare, 1, [], 0, False),
    ("bare-pod-forced", _bare, 1, ["--force"], 0, True),
    ("pdb-budget-0", _budget(min_available=3), 1, [], 0, False),
    ("pdb-budget-1", _budget(max_unavailable=1), 1, [], 0, True),
    ("pdb-budget-2", _budget(max_unavailable=2), 1, [], 0, True),
    ("two-pdbs-on-one-pod", _two_pdbs, 1, [], 0, False),
    ("disable-eviction-bypasses-pdbs", _two_pdbs, 1, ["--disable-eviction"], 0, True),
    ("unready-always-allow", _unready("AlwaysAllow"), 1, [], 1, False),
    ("unready-if-healthy-budget", _unready(None), 1, [], 1, False),
    ("two-nodes-share-a-pdb", _budget(max_unavailable=1), 2, [], 0, True),
]


@pytest.mark.parametrize("build, drained, flags, unready, safe", [d[1:] for d in DIFFERENTIAL],
                         ids=[d[0] for d in DIFFERENTIAL])
def test_dry_run_predicts_kubectl_drain(cluster, namespace, make_node, build, drained, flags, unready, safe):
    nodes = pool_nodes(make_node, namespace, 3, "drain")
    targets, spare = nodes[:drained], nodes[drained:]
    objects, count, pdbs = build(namespace, targets)
    place_on(cluster, namespace, spare, objects, count)
    web_pods = sorted(p["metadata"]["name"] for p in pods_by_uid(cluster, namespace).values()
                      if p["metadata"]["labels"].get("app") == "web")
    for name in web_pods[:unready]:
        set_unready(cluster, namespace, name)
    for name in pdbs:  # with two PDBs on a pod the controller may update only one of them
        wait_pdb_settled(cluster, namespace, name, current_healthy=len(web_pods) - unready if len(pdbs) == 1 else None)

    ours = flags + (["--accept-risk=PDB_BYPASSED"] if "--disable-eviction" in flags else [])  # kubectl's view of safe
    code, plan, err = safety(cluster, *targets, "--dry-run", *ours)
    assert plan["kind"] == "DrainPlan" and code == (0 if safe else 3), err
    assert plan["safe"] is safe
    before = pods_by_uid(cluster, namespace)
    on_targets = {uid for uid, p in before.items() if p["spec"].get("nodeName") in targets}
    assert {p["uid"] for p in plan["pods"]} == on_targets
    predicted = kubectl_would_evict(plan)
    # the node-scoped plan (no capacity check, PDB numbers from their status) predicts the same
    code_scoped, scoped, err = safety(cluster, *targets, "--dry-run", "--no-capacity", *ours)
    assert (code_scoped, scoped["safe"], kubectl_would_evict(scoped)) == (code, safe, predicted), err

    result = cluster.kubectl("drain", *targets, f"--timeout={KUBECTL_TIMEOUT}", *flags, check=False, timeout=90)
    after = pods_by_uid(cluster, namespace)
    evicted = {uid for uid in on_targets if uid not in after}
    assert evicted == predicted, (plan["pods"], result.stdout, result.stderr)
    assert (result.returncode == 0) == safe, result.stderr


# -- real drains ----------------------------------------------------------------------------------
def test_real_drain_keeps_the_pdb_healthy(cluster, namespace, make_node, audit):
    nodes = pool_nodes(make_node, namespace, 2, "drain")
    place_on(cluster, namespace, nodes[1:], [pool_web(4, namespace), pdb("web", {"app": "web"}, min_available=3)], 4)
    wait_pdb_settled(cluster, namespace, "web", disruptions_allowed=1)
    started = audit.now()
    with ReadyRecorder(cluster, namespace, "app=web") as watch:
        code, report, err = safety(cluster, nodes[0], "--yes", "--timeout", "120s")
    assert code == 0, err
    assert report["kind"] == "DrainReport" and report["drained"] and len(report["evicted"]) == 4
    assert watch.changes >= 4 and watch.minimum >= 3, watch.counts  # recorded during the drain
    assert get_json(cluster, f"node/{nodes[0]}")["spec"].get("unschedulable") is True
    left = [p for p in pods_by_uid(cluster, namespace).values() if p["spec"].get("nodeName") == nodes[0]]
    assert left == []
    assert "waiting" in err or "evicting" in err
    evictions = [e for e in audit.mutating_requests(started, user_agent_contains="kubectl-safety/")
                 if e.resource == "pods/eviction"]
    assert len(evictions) >= 4 and all(e.code in (201, 429) for e in evictions)
    assert not [e for e in audit.mutating_requests(started, user_agent_contains="kubectl-safety/")
                if e.verb == "delete"]  # evictions only, never a direct delete


def test_two_concurrent_drains_share_one_pdb(cluster, namespace, make_node):
    nodes = pool_nodes(make_node, namespace, 3, "drain")
    place_on(cluster, namespace, nodes[2:], [pool_web(4, namespace), pdb("web", {"app": "web"}, min_available=3)], 4)
    wait_pdb_settled(cluster, namespace, "web", disruptions_allowed=1)
    env = dict(os.environ)
    cmd = ["kubectl-safety", "drain", "--kubeconfig", str(cluster.kubeconfig), "--yes", "--timeout", "150s"]
    with ReadyRecorder(cluster, namespace, "app=web") as watch:
        procs = [subprocess.Popen(cmd + [n], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
                 for n in nodes[:2]]
        outputs = [p.communicate(timeout=200) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outputs
    assert watch.minimum >= 3, watch.minimum
    remaining = [p["spec"].get("nodeName") for p in pods_by_uid(cluster, namespace).values()]
    assert set(remaining) == {nodes[2]}


def test_disable_eviction_deletes_instead(cluster, namespace, make_node, audit):
    nodes = pool_nodes(make_node, namespace, 2, "drain")
    objects, count, _ = _two_pdbs(namespace, nodes)
    place_on(cluster, namespace, nodes[1:], objects, count)
    started = audit.now()
    code, report, err = safety(cluster, nodes[0], "--yes", "--disable-eviction", "--timeout", "60s",
                               "--accept-risk=PDB_BYPASSED")  # both pods are selected by two PDBs
    assert code == 0, err
    assert report["drained"] and len(report["evicted"]) == 2
    verbs = {(e.verb, e.resource) for e in audit.mutating_requests(started, user_agent_contains="kubectl-safety/")}
    assert ("delete", "pods") in verbs and ("create", "pods/eviction") not in verbs


def test_dry_run_sends_no_mutating_request(cluster, namespace, make_node, audit):
    nodes = pool_nodes(make_node, namespace, 2, "drain")
    place_on(cluster, namespace, nodes[1:], [pool_web(2, namespace), pdb("web", {"app": "web"}, max_unavailable=1)], 2)
    wait_pdb_settled(cluster, namespace, "web", disruptions_allowed=1, expected_pods=2)  # a loaded controller lags
    started = audit.now()
    code, plan, err = safety(cluster, nodes[0], "--dry-run")
    assert code == 0 and plan["summary"]["evict"] == 1 and plan["summary"]["wait"] == 1, err
    # make sure the dry run's reads reached the audit log before looking for writes
    wait_until(lambda: [e for e in audit.entries(started) if "kubectl-safety/" in e.user_agent], 15, "audit entries")
    code, _, err = safety(cluster, nodes[0])  # a real drain, but stdin is no terminal and no --yes
    assert code == 2 and "add --yes" in err
    assert audit.mutating_requests(started, user_agent_contains="kubectl-safety/") == []
    assert get_json(cluster, f"node/{nodes[0]}")["spec"].get("unschedulable") is None


def test_server_dry_run_confirms_the_plan_without_changes(cluster, namespace, make_node):
    nodes = pool_nodes(make_node, namespace, 2, "drain")
    place_on(cluster, namespace, nodes[1:], [pool_web(3, namespace), pdb("web", {"app": "web"}, max_unavailable=1)], 3)
    wait_pdb_settled(cluster, namespace, "web", disruptions_allowed=1)
    before = set(pods_by_uid(cluster, namespace))
    code, plan, err = safety(cluster, nodes[0], "--dry-run=server")
    assert code == 0, err
    sent = [p for p in plan["pods"] if "serverDryRun" in p]
    assert [p["serverDryRun"]["result"] for p in sent] == ["done"]
    assert sorted(p["action"] for p in plan["pods"]) == ["evict", "wait", "wait"]
    assert set(pods_by_uid(cluster, namespace)) == before
    assert get_json(cluster, f"node/{nodes[0]}")["spec"].get("unschedulable") is None


def test_blocked_drain_is_refused_before_cordoning(cluster, namespace, make_node, audit):
    nodes = pool_nodes(make_node, namespace, 2, "drain")
    place_on(cluster, namespace, nodes[1:], [pool_web(2, namespace), pdb("web", {"app": "web"}, min_available=2)], 2)
    wait_pdb_settled(cluster, namespace, "web", current_healthy=2)
    started = audit.now()
    code, plan, err = safety(cluster, nodes[0], "--yes")
    assert code == 3 and "not safe: PDB_NEVER_ALLOWS" in err
    assert {r["code"] for p in plan["pods"] for r in p["reasons"]} >= {"PDB_NEVER_ALLOWS"}
    assert get_json(cluster, f"node/{nodes[0]}")["spec"].get("unschedulable") is None
    assert audit.mutating_requests(started, user_agent_contains="kubectl-safety/") == []


def stuck_pdb(cluster, namespace, nodes) -> str:
    """Two web pods on nodes[0], one NotReady on nodes[1], PDB minAvailable 2: nothing may go
    until that pod is Ready again. Returns the NotReady pod's name."""
    place_on(cluster, namespace, nodes[1:], [pool_web(2, namespace)], 2)
    cluster.kubectl("cordon", nodes[0])
    cluster.kubectl("scale", "deployment/web", "--replicas=3", "-n", namespace)
    wait_pods_running(cluster, namespace, "app=web", count=3)
    cluster.kubectl("uncordon", nodes[0])
    elsewhere = [p["metadata"]["name"] for p in pods_by_uid(cluster, namespace).values()
                 if p["spec"]["nodeName"] == nodes[1]]
    set_unready(cluster, namespace, elsewhere[0])
    create(cluster, namespace, pdb("web", {"app": "web"}, min_available=2))
    wait_pdb_settled(cluster, namespace, "web", disruptions_allowed=0, current_healthy=2)
    return elsewhere[0]


def test_timeout_leaves_the_node_cordoned_and_a_rerun_resumes(cluster, namespace, make_node):
    nodes = pool_nodes(make_node, namespace, 2, "drain")
    unready = stuck_pdb(cluster, namespace, nodes)

    code, report, err = safety(cluster, nodes[0], "--yes", "--timeout", "4s")
    assert code == 4, err
    assert report["status"] == "timeout" and not report["drained"]
    assert len(report["left"]) == 2 and report["evicted"] == []
    assert get_json(cluster, f"node/{nodes[0]}")["spec"].get("unschedulable") is True

    ready = json.dumps({"status": {"conditions": [{"type": "Ready", "status": "True"}]}})
    cluster.kubectl("patch", "pod", unready, "-n", namespace, "--subresource=status", "--type=strategic", "-p", ready)
    code, report, err = safety(cluster, nodes[0], "--yes", "--timeout", "90s")
    assert code == 0, err
    assert report["drained"] and len(report["evicted"]) == 2


def test_ctrl_c_stops_and_leaves_the_node_cordoned(cluster, namespace, make_node):
    nodes = pool_nodes(make_node, namespace, 2, "drain")
    stuck_pdb(cluster, namespace, nodes)
    cmd = ["kubectl-safety", "drain", nodes[0], "--kubeconfig", str(cluster.kubeconfig), "--yes", "-o", "json"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines = []
    reader = threading.Thread(target=lambda: lines.extend(proc.stderr), daemon=True)
    reader.start()
    wait_until(lambda: any(line.startswith("waiting:") for line in lines), 60, "the drain to wait for the PDB")
    assert any("PDB" in line and "needs 2 healthy, has 2" in line for line in lines), lines
    proc.send_signal(signal.SIGINT)
    out = proc.stdout.read()
    assert proc.wait(timeout=30) == 130, lines
    report = json.loads(out)
    assert report["status"] == "interrupted" and len(report["left"]) == 2
    assert get_json(cluster, f"node/{nodes[0]}")["spec"].get("unschedulable") is True


def test_executor_recognises_the_multiple_pdb_refusal(cluster, namespace, make_node):
    from kubectl_safety.cluster.executor import Executor

    nodes = pool_nodes(make_node, namespace, 1, "drain")
    create(cluster, namespace, pinned("x", nodes[0]), pinned("y", nodes[0]),
           pdb("one", {"app": "x"}, max_unavailable=1), pdb("two", {"app": "x"}, max_unavailable=1))
    wait_pods_running(cluster, namespace, count=2)
    raw = get_json(cluster, "pod", "x", "-n", namespace)
    executor = Executor(Connection(kubeconfig=str(cluster.kubeconfig)))
    outcome = executor.evict(raw)
    assert outcome.result == "multiple-pdbs", outcome
    missing = executor.evict((namespace, "no-such-pod", "uid"))
    assert missing.result == "gone"
    stale = executor.evict((namespace, "y", "an-old-uid"))  # a same-named replacement is never evicted
    assert stale.result == "gone" and stale.status == 409
    assert executor.wait_gone([raw], time.monotonic() + 1, poll=0.2) == {(namespace, "x"): False}


# -- the API server refuses: every unsafe verdict names a risk, a refused cordon says so ---------------
def _policy(name, resources, operations, expression, message, namespace=None):
    """A ValidatingAdmissionPolicy denying what ``expression`` rejects, and its binding (Deny)."""
    binding = {"policyName": name, "validationActions": ["Deny"]}
    if namespace:
        binding["matchResources"] = {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": namespace}}}
    return [{"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
             "metadata": {"name": name},
             "spec": {"failurePolicy": "Fail",
                      "matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"],
                                                              "operations": operations, "resources": resources}]},
                      "validations": [{"expression": expression, "message": message}]}},
            {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
             "metadata": {"name": name}, "spec": binding}]


def test_server_refused_evictions_and_cordon_name_the_risk_and_the_node_left_uncordoned(cluster, namespace,
                                                                                        make_node):
    nodes = pool_nodes(make_node, namespace, 2, "drain")
    place_on(cluster, namespace, nodes[1:], [pool_web(2, namespace), pdb("web", {"app": "web"}, max_unavailable=1)],
             2)
    wait_pdb_settled(cluster, namespace, "web", disruptions_allowed=1)
    evictions, cordons = f"freeze-evictions-{namespace}", f"freeze-cordon-{namespace}"
    policies = _policy(evictions, ["pods/eviction"], ["CREATE"], "false", "evictions are frozen", namespace) + \
        _policy(cordons, ["nodes"], ["UPDATE"],
                f"object.metadata.name != '{nodes[0]}' || !has(object.spec.unschedulable) || "
                "!object.spec.unschedulable", "cordons are frozen")
    try:
        create(cluster, None, *policies[:2])
        wait_until(lambda: "SERVER_REFUSED" in {r["code"] for r in (safety(cluster, nodes[0], "--dry-run=server")[1]
                                                                     or {}).get("risks", [])},
                   60, "the eviction policy in force")
        code, plan, err = safety(cluster, nodes[0], "--dry-run=server")
        assert code == 3 and not plan["safe"], err
        refused = [r for r in plan["risks"] if r["code"] == "SERVER_REFUSED"]
        assert refused and all("evictions are frozen" in r["message"] for r in refused)
        assert {o["name"] for r in refused for o in r["objects"]} == {p["name"] for p in plan["pods"]
                                                                      if p["action"] == "evict"}
        code, out, err = run_cli(["drain", nodes[0], "--dry-run=server", "--kubeconfig", str(cluster.kubeconfig)])
        assert code == 3 and "NOT SAFE (SERVER_REFUSED)" in out and "(none)" not in out, out + err

        create(cluster, None, *policies[2:])
        wait_until(lambda: "cordons are frozen" in cluster.kubectl("cordon", nodes[0], "--dry-run=server",
                                                                   check=False).stderr,  # exit 0 all the same
                   60, "the cordon policy in force")
        code, out, err = run_cli(["drain", nodes[0], "--yes", "--kubeconfig", str(cluster.kubeconfig)])
        assert code == 1, out + err
        errors = [line for line in err.splitlines() if "cordons are frozen" in line]
        assert errors and all(line.startswith(f"error: unable to cordon node/{nodes[0]}: ") for line in errors), err
        assert f"Not cordoned: {nodes[0]} (the cordon was refused); nothing was evicted." in out
        assert "stay cordoned" not in out
        assert get_json(cluster, f"node/{nodes[0]}")["spec"].get("unschedulable") is None
    finally:
        for kind, name in (("validatingadmissionpolicybinding", evictions), ("validatingadmissionpolicy", evictions),
                           ("validatingadmissionpolicybinding", cordons), ("validatingadmissionpolicy", cordons)):
            cluster.kubectl("delete", kind, name, "--ignore-not-found", check=False)
