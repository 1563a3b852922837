"""check --publish on the control plane: the reports applied (server-side, validated by the CRDs of the
pinned modules), the API chosen by discovery, stale reports of ours deleted, others' left alone."""

from __future__ import annotations

import json

import pytest
from cluster_helpers import create, pdb, pool_nodes, pool_web, wait_pods_running, wait_until
from report_crds import OPENREPORTS, WGPOLICY, install, uninstall

from kubectl_safety.cli import openreports
from tests.unit.cli_helpers import run_cli


def publish(cluster, namespace, *args):
    return run_cli(["check", "--publish", "-l", f"pool={namespace}", "-o", "json",
                    "--kubeconfig", str(cluster.kubeconfig), *args])


def get(cluster, kind, namespace=None):
    args = ["get", kind, "kubectl-safety", "-o", "json", "--show-managed-fields"] + (["-n", namespace] if namespace else [])
    return json.loads(cluster.kubectl(*args).stdout)


def results(report, policy):
    return [r for r in report["results"] if r["policy"] == policy]


@pytest.fixture
def blocked_pool(cluster, namespace, make_node):
    """Two nodes of the test's pool, web on both and a PDB that never allows: nothing drains."""
    pool_nodes(make_node, namespace, 2)
    create(cluster, namespace, pool_web(2, namespace), pdb("web", {"app": "web"}, min_available=2))
    wait_pods_running(cluster, namespace, "app=web", count=2, ready=False)
    return namespace


def test_publish_writes_wgpolicy_when_only_it_is_served_then_openreports(cluster, blocked_pool, monkeypatch):
    ns = blocked_pool
    uninstall(cluster, OPENREPORTS + WGPOLICY)  # neither served: nothing to write to, one error line
    code, out, err = publish(cluster, ns)
    assert code == 1 and err.strip().splitlines() == [
        "error: the cluster serves none of openreports.io/v1alpha1, wgpolicyk8s.io/v1alpha2: install the "
        "OpenReports CRDs (openreports.io/v1alpha1) or the wgpolicyk8s.io/v1alpha2 PolicyReport CRDs"], err
    install(cluster, WGPOLICY)
    code, out, err = publish(cluster, ns)
    assert code == 3 and json.loads(out)["kind"] == "ClusterCheck", err
    assert f"published ClusterPolicyReport/kubectl-safety, PolicyReport/{ns}/kubectl-safety" in err, err
    polr = get(cluster, "policyreports.wgpolicyk8s.io", ns)
    [never] = results(polr, "PDB_NEVER_ALLOWS")
    assert never["result"] == "fail" and never["severity"] == "high" and never["source"] == "kubectl-safety"
    assert polr["metadata"]["managedFields"][0]["manager"] == "kubectl-safety"
    cpolr = get(cluster, "clusterpolicyreports.wgpolicyk8s.io")
    mine = [r for r in results(cpolr, "NODE_DRAINABLE") if r["resources"][0]["name"].endswith(ns[-6:] + "-0")]
    assert mine and mine[0]["result"] == "fail" and "PDB_NEVER_ALLOWS" in mine[0]["properties"]["blockingCodes"]

    install(cluster, OPENREPORTS)  # both served: openreports only, unless asked
    other = "other-" + ns[-6:]
    cluster.kubectl("create", "namespace", other)
    stale = {"apiVersion": "openreports.io/v1alpha1", "kind": "Report", "source": "kubectl-safety",
             "metadata": {"name": "kubectl-safety", "namespace": other,
                          "labels": {"app.kubernetes.io/managed-by": "kubectl-safety"}}}
    theirs = {**stale, "source": "kyverno", "metadata": {"name": "kyverno", "namespace": other}}
    create(cluster, None, stale, theirs)
    code, out, err = publish(cluster, ns)
    assert code == 3 and "published ClusterReport/kubectl-safety" in err and "PolicyReport" not in err, err
    assert f"deleted Report/{other}/kubectl-safety" in err, err
    rep = get(cluster, "reports.openreports.io", ns)
    assert rep["source"] == "kubectl-safety" and rep["summary"]["fail"] >= 1
    assert results(rep, "PDB_NEVER_ALLOWS")[0]["resources"] == [
        {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "name": "web", "namespace": ns}]
    left = cluster.kubectl("get", "reports.openreports.io", "-n", other, "-o", "name").stdout.split()
    assert left == ["report.openreports.io/kyverno"]  # not ours: kept

    code, out, err = publish(cluster, ns, "--report-api", "both")
    assert code == 3 and "ClusterReport/kubectl-safety" in err and "ClusterPolicyReport/kubectl-safety" in err, err

    # the API server validates what we write: a severity outside the CRD's enum is refused
    monkeypatch.setitem(openreports.SEVERITY, "error", "severe")
    code, out, err = publish(cluster, ns, "--report-api", "openreports")
    assert code == 1 and "Unsupported value: \"severe\"" in err and len(err.strip().splitlines()) == 1, err
    cluster.kubectl("delete", "namespace", other, "--wait=false", check=False)


def test_publish_skips_the_report_of_a_namespace_being_deleted(cluster, blocked_pool, namespace):
    install(cluster, OPENREPORTS)
    going = f"{namespace}-going"
    cluster.kubectl("create", "namespace", going)
    held = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "held", "finalizers": ["example.com/hold"]}}
    create(cluster, going, held, pdb("nothing", {"app": "none"}, max_unavailable=1))  # PDB_SELECTS_NOTHING there
    cluster.kubectl("delete", "namespace", going, "--wait=false")
    try:
        wait_until(lambda: json.loads(cluster.kubectl("get", "namespace", going, "-o", "json").stdout)["status"]
                   .get("phase") == "Terminating", 20, "the namespace to terminate")
        code, out, err = publish(cluster, namespace, "--report-api", "openreports")
        assert code == 3 and f"Report/{namespace}/kubectl-safety" in err and going not in err, err
    finally:
        cluster.kubectl("patch", "configmap", "held", "-n", going, "--type=merge", "-p",
                        '{"metadata":{"finalizers":null}}', check=False)
