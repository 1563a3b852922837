"""Least privilege: the ClusterRoles in deploy/rbac.yaml, proved on the control plane.

Each ServiceAccount is bound to one role (or none); every command runs impersonating each of
them (``--as system:serviceaccount:NS:NAME``). A command works with its own role and every role
that contains it, and fails with one clear "forbidden" line with less; with its own role it
never makes a request the role does not allow, nor one the server refuses (audit log).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
import yaml
from cluster_helpers import create, deployment, pdb, wait_pods_running, wait_until

from tests.unit.cli_helpers import run_cli

RBAC = Path(__file__).resolve().parents[2] / "deploy" / "rbac.yaml"
ROLES = ("none", "read", "operate", "force-delete")
CONTAINS = {"none": {"none"}, "read": {"none", "read"}, "operate": {"none", "read", "operate"},
            "force-delete": {"none", "read", "force-delete"}}  # role -> roles it includes


def role_rules() -> dict:
    """role -> {(verb, resource)} allowed, from deploy/rbac.yaml."""
    allowed = {"none": set()}
    for doc in yaml.safe_load_all(RBAC.read_text()):
        if doc and doc["kind"] == "ClusterRole":
            role = doc["metadata"]["name"].removeprefix("kubectl-safety-")
            allowed[role] = {(v, r) for rule in doc["rules"] for r in rule["resources"] for v in rule["verbs"]}
    return allowed


@pytest.fixture
def accounts(cluster, namespace):
    """A ServiceAccount per role, bound cluster-wide; the deploy/ roles applied."""
    cluster.kubectl("apply", "-f", str(RBAC))
    subjects = {}
    for role in ROLES:
        name = f"sa-{role}"
        cluster.kubectl("create", "serviceaccount", name, "-n", namespace)
        subjects[role] = f"system:serviceaccount:{namespace}:{name}"
        if role != "none":
            cluster.kubectl("create", "clusterrolebinding", f"{namespace}-{role}", f"--clusterrole=kubectl-safety-{role}",
                            f"--serviceaccount={namespace}:{name}")
    yield subjects
    for role in ROLES[1:]:
        cluster.kubectl("delete", "clusterrolebinding", f"{namespace}-{role}", "--ignore-not-found", check=False)


@pytest.fixture
def workload(cluster, make_node, namespace, tmp_path):
    """Three nodes labelled pool=<namespace>, a 4-replica Deployment with a PDB, a preemptor manifest."""
    nodes = [make_node(f"rb-{namespace[-6:]}-{i}", labels={"pool": namespace})["metadata"]["name"] for i in range(3)]
    create(cluster, namespace, deployment("web", 4, node_selector={"pool": namespace}, requests={"cpu": "100m"}),
           pdb("web", {"app": "web"}, max_unavailable=1))
    pods = wait_pods_running(cluster, namespace, "app=web", count=4, ready=False)
    preemptor = tmp_path / "preemptor.json"
    preemptor.write_text(json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "urgent"},
                                     "spec": {"containers": [{"name": "main", "image": "app:1",
                                                              "resources": {"requests": {"cpu": "100m"}}}]}}))
    return nodes, pods, str(preemptor)


def commands(nodes, pods, preemptor, namespace):
    """(name, needed role, args, exit codes that mean it worked); mutating ones last."""
    on_first = [p for p in pods if p["spec"]["nodeName"] == nodes[0]] or pods
    pod_name = on_first[0]["metadata"]["name"]
    untouched = [p for p in pods if p["spec"]["nodeName"] == nodes[1]]
    assert untouched, "the scheduler left the node no mutating row empties without a replica"
    victim = untouched[-1]["metadata"]["name"]  # drain (nodes[0]) and rollout (nodes[2]) must not evict it
    return [
        ("explain pod", "read", ["explain", "pod", pod_name, "-n", namespace], (0,)),
        ("explain node", "read", ["explain", "node", nodes[0]], (0,)),
        ("explain priorities", "read", ["explain", "priorities"], (0,)),
        ("why pod", "read", ["why", "pod", pod_name, "-n", namespace], (3,)),  # running: nothing disrupted it
        ("why node", "read", ["why", "node", nodes[0]], (0,)),
        ("drain --dry-run", "read", ["drain", nodes[0], "--dry-run", "--ignore-daemonsets"], (0, 3)),
        ("drain --dry-run --no-capacity", "read", ["drain", nodes[0], "--dry-run", "--ignore-daemonsets",
                                                   "--no-capacity"], (0, 3)),
        ("rebalance --dry-run", "read", ["rebalance", "deployment/web", "--dry-run", "-n", namespace], (0, 3)),
        ("preemption -f", "read", ["preemption", "-f", preemptor, "-n", namespace], (0, 3)),
        ("delete --force (assessment)", "read", ["delete", "pod", victim, "--force", "-n", namespace], (3,)),
        ("delete --dry-run", "read", ["delete", "pod", victim, "--dry-run", "-n", namespace], (0,)),
        ("drain --dry-run=server", "operate", ["drain", nodes[1], "--dry-run=server", "--ignore-daemonsets"], (0, 3)),
        ("check", "read", ["check", "-l", f"pool={namespace}"], (0, 3)),
        ("rollout --dry-run", "read", ["rollout", nodes[2], "--dry-run", "--ignore-daemonsets"], (0, 3)),
        ("drain", "operate", ["drain", nodes[0], "--ignore-daemonsets", "--yes", "--timeout", "90s"], (0,)),
        ("rollout", "operate", ["rollout", nodes[2], "--ignore-daemonsets", "--yes", "--timeout", "90s",
                                "--gate-timeout", "90s"], (0,)),
        ("delete --force --confirm", "force-delete", ["delete", "pod", victim, "--force", "--confirm",
                                                      "--reason", "rbac test", "-n", namespace], (0,)),
    ]


def requests_of(audit, since, subject):
    """(verb, resource, code) of the requests made as ``subject``, once the audit log stops growing."""
    seen, stable = None, time.monotonic()
    while time.monotonic() - stable < 1.0:
        now = sorted((e.verb, e.resource, e.code) for e in audit.entries(since)
                     if subject in (e.impersonated_user, e.user) and "kubectl-safety/" in e.user_agent)
        if now != seen:
            seen, stable = now, time.monotonic()
        time.sleep(0.2)
    return seen


def test_every_command_works_with_exactly_its_role(cluster, audit, namespace, accounts, workload):
    nodes, pods, preemptor = workload
    allowed = role_rules()
    base = ["--kubeconfig", str(cluster.kubeconfig), "-o", "json", "--request-timeout", "30s"]
    matrix = {}
    for name, needed, args, ok_codes in commands(nodes, pods, preemptor, namespace):
        # less first (nothing may change), the role itself last (it may change the cluster)
        order = sorted(ROLES, key=lambda r: needed in CONTAINS[r])
        for role in order:
            since = audit.now()
            code, out, err = run_cli(args + base + ["--as", accounts[role]])
            works = needed in CONTAINS[role]
            lines = [line for line in err.strip().splitlines() if not line.startswith("warning: ")]
            if works:
                assert code in ok_codes, f"{name} as {role}: exit {code}\n{err}"
                made = requests_of(audit, since, accounts[role])
                assert made, f"{name}: no request in the audit log"
                beyond = [(v, r) for v, r, _ in made if r.startswith("/") is False and (v, r) not in allowed[needed]]
                assert not beyond, f"{name} as {role} asked for more than {needed}: {beyond}"
                assert not [m for m in made if m[2] == 403], f"{name} as {role}: refused requests {made}"
                matrix[(name, role)] = "ok"
            else:
                assert code == 1, f"{name} as {role}: exit {code}, expected 1 (forbidden)\n{err}"
                assert len(lines) == 1 and "forbidden" in lines[0].lower(), f"{name} as {role}:\n{err}"
                matrix[(name, role)] = "forbidden"
        if name == "drain":
            cluster.kubectl("uncordon", nodes[0])
    print("\nRBAC matrix (command x role):")
    for name, _, _, _ in commands(nodes, pods, preemptor, namespace):
        print(f"  {name:32s} " + "  ".join(f"{r}={matrix[(name, r)]}" for r in ROLES))


def test_deploy_manifests_are_accepted_by_the_api_server(cluster):
    """Every manifest under deploy/ (roles, binding, Job, CronJob) passes the server's validation."""
    cluster.kubectl("create", "namespace", "kubectl-safety", check=False)  # (a dry run creates nothing)
    try:
        manifests = [a for f in sorted(RBAC.parent.glob("*.yaml")) if f.name != "kustomization.yaml"
                     for a in ("-f", str(f))]  # the kustomization is kubectl apply -k's, not an object
        out = cluster.kubectl("apply", "--dry-run=server", *manifests, check=False)
    finally:
        cluster.kubectl("delete", "namespace", "kubectl-safety", "--wait=false", check=False)
    assert out.returncode == 0, out.stderr
    for kind in ("clusterrole.rbac.authorization.k8s.io/kubectl-safety-read", "job.batch/kubectl-safety-preflight",
                 "cronjob.batch/kubectl-safety-nightly", "serviceaccount/kubectl-safety"):
        assert kind in out.stdout, out.stdout


@pytest.fixture
def namespaced_operator(cluster, namespace):
    """A ServiceAccount with the read role but no cluster-scope storage (PersistentVolumes,
    StorageClasses): as a namespaced operator's, whose cluster admin grants those to nobody."""
    read = next(doc for doc in yaml.safe_load_all(RBAC.read_text())
                if doc and doc["kind"] == "ClusterRole" and doc["metadata"]["name"] == "kubectl-safety-read")
    rules = []
    for rule in read["rules"]:
        kept = [r for r in rule["resources"] if r not in ("persistentvolumes", "storageclasses")]
        if kept:
            rules.append({**rule, "resources": kept})
    role = f"{namespace}-no-storage"
    create(cluster, None, {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                           "metadata": {"name": role}, "rules": rules})
    cluster.kubectl("create", "serviceaccount", "operator", "-n", namespace)
    cluster.kubectl("create", "clusterrolebinding", role, f"--clusterrole={role}",
                    f"--serviceaccount={namespace}:operator")
    yield f"system:serviceaccount:{namespace}:operator"
    cluster.kubectl("delete", "clusterrolebinding,clusterrole", role, "--ignore-not-found", check=False)


def test_a_drain_without_storage_read_names_the_volumes_it_could_not_check(cluster, namespace, make_node,
                                                                           namespaced_operator):
    nodes = [make_node(f"st-{namespace[-6:]}-{i}")["metadata"]["name"] for i in range(2)]
    claim = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "data"},
             "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "zonal",
                      "resources": {"requests": {"storage": "1Gi"}}}}
    db = deployment("db", 1, node_name=nodes[0], requests={"cpu": "100m"})
    db["spec"]["template"]["spec"]["volumes"] = [{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}]
    create(cluster, namespace, claim, db)
    pod = wait_pods_running(cluster, namespace, "app=db", count=1, ready=False)[0]["metadata"]["name"]
    base = ["--kubeconfig", str(cluster.kubeconfig), "--request-timeout", "30s",
            "--as", namespaced_operator, "--accept-risk=returns"]  # the template pins nodeName: it comes back
    code, out, err = run_cli(["drain", nodes[0], "--dry-run", "--ignore-daemonsets", "-o", "json"] + base)
    assert code == 0, err
    assert "continuing without persistentvolumes" in err and "continuing without storageclasses" in err, err
    plan = json.loads(out)
    storage = [w for w in plan["warnings"] if w["code"] == "STORAGE_NOT_JUDGED"]
    assert len(storage) == 1, plan["warnings"]
    assert f"{namespace}/{pod} (data)" in storage[0]["message"], storage
    assert "persistentvolumes (forbidden), storageclasses (forbidden)" in storage[0]["message"], storage
    code, text, err = run_cli(["drain", nodes[0], "--dry-run", "--ignore-daemonsets"] + base)
    assert code == 0 and "warning: volumes not checked" in text, text + err


@pytest.mark.parametrize("user", ["ユーザー", "José"], ids=["non-latin-1", "latin-1"])
def test_a_non_ascii_as_is_impersonated_as_kubectl_impersonates_it(cluster, namespace, user):
    """kubectl sends --as as UTF-8: the server names the same user in its refusal to both."""
    theirs = cluster.kubectl("get", "pod", "nope", "-n", namespace, as_user=user, check=False)
    code, out, err = run_cli(["explain", "pod", "nope", "-n", namespace, "--kubeconfig", str(cluster.kubeconfig),
                              "--as", user, "--request-timeout", "30s"])
    assert f'User "{user}" cannot get resource "pods"' in theirs.stderr
    assert code == 1 and f'User "{user}" cannot' in err, err
