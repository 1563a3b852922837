"""In-cluster config against the control plane: a pod's token, CA and namespace files and
KUBERNETES_SERVICE_HOST/PORT, with no kubeconfig anywhere (as in a Job of deploy/)."""

from __future__ import annotations

import base64
import json
from urllib.parse import urlsplit

import pytest
from cluster_helpers import create, deployment, pdb, wait_pods_running, wait_until

from kubectl_safety.cluster import kubeconfig
from tests.unit.cli_helpers import run_cli
from test_rbac import RBAC


@pytest.fixture
def pod_files(cluster, namespace, tmp_path, monkeypatch):
    """A ServiceAccount bound to kubectl-safety-read; its token, the CA and the namespace as a pod sees them."""
    cluster.kubectl("apply", "-f", str(RBAC))
    cluster.kubectl("create", "serviceaccount", "job", "-n", namespace)
    token = cluster.kubectl("create", "token", "job", "-n", namespace, "--duration=10m").stdout.strip()
    config = json.loads(cluster.kubectl("config", "view", "--raw", "--minify", "-o", "json").stdout)
    server = config["clusters"][0]["cluster"]
    ca = (base64.b64decode(server["certificate-authority-data"]).decode() if server.get("certificate-authority-data")
          else open(server["certificate-authority"]).read())
    secrets = tmp_path / "serviceaccount"
    secrets.mkdir()
    (secrets / "token").write_text(token)
    (secrets / "ca.crt").write_text(ca)
    (secrets / "namespace").write_text(namespace)
    url = urlsplit(server["server"])
    monkeypatch.setattr(kubeconfig, "SERVICE_ACCOUNT_DIR", str(secrets))
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", url.hostname)
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", str(url.port or 443))
    monkeypatch.setenv("HOME", str(tmp_path))  # no ~/.kube/config
    monkeypatch.delenv("KUBECONFIG", raising=False)
    yield f"system:serviceaccount:{namespace}:job"
    cluster.kubectl("delete", "clusterrolebinding", f"{namespace}-job", "--ignore-not-found", check=False)


def test_in_cluster_config_reads_as_the_service_account(cluster, audit, namespace, make_node, pod_files):
    node = make_node(f"ic-{namespace[-6:]}", labels={"pool": namespace})["metadata"]["name"]
    create(cluster, namespace, deployment("web", 2, node_selector={"pool": namespace}, requests={"cpu": "100m"}),
           pdb("web", {"app": "web"}, max_unavailable=1))
    wait_pods_running(cluster, namespace, "app=web", count=2, ready=False)

    code, out, err = run_cli(["explain", "priorities", "-o", "json"])  # no binding yet
    lines = [line for line in err.strip().splitlines() if not line.startswith("warning: ")]
    assert code == 1 and len(lines) == 1 and "forbidden" in lines[0].lower() and pod_files in lines[0], err

    cluster.kubectl("create", "clusterrolebinding", f"{namespace}-job", "--clusterrole=kubectl-safety-read",
                    f"--serviceaccount={namespace}:job")
    since = audit.now()
    code, out, err = wait_until(lambda: (lambda r: r if r[0] in (0, 3) else None)(
        run_cli(["drain", node, "--dry-run", "--ignore-daemonsets", "-o", "json"])), 20, "the binding to apply")
    plan = json.loads(out)
    assert plan["kind"] == "DrainPlan" and len(plan["pods"]) == 2, err
    code, out, err = run_cli(["explain", "pod", plan["pods"][0]["name"], "-o", "json"])  # no -n: the namespace file
    assert code == 0 and json.loads(out)["pod"]["namespace"] == namespace, err
    users = wait_until(lambda: {e.user for e in audit.entries(since) if "kubectl-safety/" in e.user_agent} or None,
                       15, "the requests in the audit log")
    assert users == {pod_files}  # authenticated by the token file, nothing else
