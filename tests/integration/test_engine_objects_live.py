"""--engine reads the engines' objects live: the CRDs of Karpenter's NodePool and Cluster API's Machine
(from the modules the engines' oracles pin, controlplane/engines/*/go.mod) installed on the test control plane;
``check --engine karpenter`` and ``drain --dry-run --engine capi`` (also with --management-kubeconfig) show the
object as their settings' source."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
from cluster_helpers import create, pool_nodes

from tests.unit.cli_helpers import run_cli

ROOT = Path(__file__).resolve().parents[2]
# (module, the engine's go.mod that pins it, the CRD files in the module)
CRDS = [("sigs.k8s.io/karpenter", "karpenter", ["pkg/apis/crds/karpenter.sh_nodepools.yaml",
                                               "pkg/apis/crds/karpenter.sh_nodeclaims.yaml"]),
        ("sigs.k8s.io/cluster-api", "capi", ["core/config/crd/bases/cluster.x-k8s.io_machines.yaml"])]
NAMES = ["nodepools.karpenter.sh", "nodeclaims.karpenter.sh", "machines.cluster.x-k8s.io"]


def crd_files() -> list[Path]:
    """The CRD YAML of the pinned modules, in the Go module cache (a missing one fails: never a skip)."""
    cache = Path(subprocess.run(["go", "env", "GOMODCACHE"], capture_output=True, text=True, check=True).stdout.strip())
    files = []
    for module, engine, paths in CRDS:
        gomod = (ROOT / "controlplane" / "engines" / engine / "go.mod").read_text()
        version = re.search(rf"^\s*{re.escape(module)} (v\S+)", gomod, re.M).group(1)
        for path in paths:
            files.append(cache / f"{module}@{version}" / path)
    missing = [str(f) for f in files if not f.is_file()]
    assert not missing, f"CRDs not in the module cache (build the engines' oracles): {missing}"
    return files


@pytest.fixture(scope="module")
def engine_crds(cluster):
    for f in crd_files():
        cluster.kubectl("apply", "--server-side", "-f", str(f))
    cluster.kubectl("wait", "--for", "condition=established", "--timeout=60s", *[f"crd/{n}" for n in NAMES])
    yield
    cluster.kubectl("delete", "crd", *NAMES, "--ignore-not-found", "--wait=true", check=False)


def engine_json(cluster, *args, kubeconfig=None):
    code, out, err = run_cli([*args, "--kubeconfig", str(kubeconfig or cluster.kubeconfig), "-o", "json"])
    assert out.strip(), err
    return code, {s["name"]: (s["value"], s["source"], s["origin"]) for s in json.loads(out)["engine"]["settings"]}


def test_check_with_karpenter_reads_the_nodes_nodepool(cluster, namespace, make_node, engine_crds):
    pool = f"np-{namespace[-6:]}"
    nodes = pool_nodes(make_node, namespace, 2, "karp")
    for n in nodes:
        cluster.kubectl("label", "node", n, f"karpenter.sh/nodepool={pool}")
    create(cluster, None, {
        "apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": pool},
        "spec": {"disruption": {"consolidateAfter": "30s", "budgets": [{"nodes": "1"}]},
                 "template": {"spec": {"terminationGracePeriod": "45m",
                                       "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass",
                                                        "name": "default"},
                                       "requirements": [{"key": "kubernetes.io/os", "operator": "In",
                                                         "values": ["linux"]}]}}}})
    try:
        code, settings = engine_json(cluster, "check", "-l", f"pool={namespace}", "--engine", "karpenter")
    finally:
        cluster.kubectl("delete", "nodepool", pool, "--ignore-not-found", check=False)
    assert settings["terminationGracePeriod"] == ("45m", "object", f"NodePool {pool}")
    assert settings["nodes"] == ("1", "object", f"NodePool {pool}")


def machine(name, node, namespace):
    return {"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Machine",
            "metadata": {"name": name, "namespace": namespace,
                         "annotations": {"machine.cluster.x-k8s.io/exclude-node-draining": ""}},
            "spec": {"clusterName": "workload", "bootstrap": {"dataSecretName": "bootstrap"},
                     "infrastructureRef": {"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "DockerMachine",
                                           "name": name},
                     "deletion": {"nodeDrainTimeoutSeconds": 120}}}


@pytest.mark.parametrize("management", [False, True], ids=["workload-cluster", "management-kubeconfig"])
def test_drain_with_capi_reads_the_machine_of_the_node(cluster, namespace, make_node, engine_crds, management):
    """The Machine is matched by status.nodeRef.name; with --management-kubeconfig it is read from that cluster
    (here the same control plane, through its own kubeconfig)."""
    node = pool_nodes(make_node, namespace, 1, "capi")[0]
    create(cluster, namespace, machine("m1", node, namespace))
    cluster.kubectl("patch", "machine", "m1", "-n", namespace, "--subresource=status", "--type=merge",
                    "-p", json.dumps({"status": {"nodeRef": {"name": node}}}))
    extra = ["--management-kubeconfig", str(cluster.kubeconfig)] if management else []
    code, settings = engine_json(cluster, "drain", node, "--dry-run", "--engine", "capi", *extra)
    origin = f"Machine {namespace}/m1"
    assert settings["nodeDrainTimeoutSeconds"] == ("120", "object", origin)
    assert settings["exclude-node-draining"] == ("true", "object", origin)
