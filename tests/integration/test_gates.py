"""examples/gates/ on the control plane: each engine's manifest dry-run by the API server and its gate's
command line run against a pool that can be drained (exit 0) and one that cannot (exit 3); 1 and 2 as the
contract says. The engines' CRDs (Argo Workflows, Flux, system-upgrade-controller) are not installed:
their objects are refused as unknown kinds, so the gate's container is dry-run inside a Job instead."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml
from cluster_helpers import create, pdb, pool_nodes, pool_web, wait_pods_running

from tests.unit.cli_helpers import run_cli

GATES = Path(__file__).resolve().parents[2] / "examples" / "gates"
FILES = ("argocd-presync-job.yaml", "argo-workflows-gate.yaml", "flux-health-gate.yaml", "flux/gate-job.yaml",
         "suc-plan.yaml")
CORE = {"Job"}  # kinds the test API server knows


def _docs(name):
    return [d for d in yaml.safe_load_all((GATES / name).read_text()) if d]


def _gate_containers(value):
    """Every container (or SUC step) of a manifest that runs kubectl-safety."""
    if isinstance(value, dict):
        if str(value.get("image", "")).startswith("kubectl-safety:") and "args" in value:
            yield value
        for v in value.values():
            yield from _gate_containers(v)
    elif isinstance(value, list):
        for v in value:
            yield from _gate_containers(v)


def _gate_args(name):
    """The gate's command line (the first kubectl-safety container: the gate, not a later step)."""
    return next(c for d in _docs(name) for c in _gate_containers(d))["args"]


@pytest.fixture(scope="module")
def gate_namespace(cluster):
    cluster.kubectl("create", "namespace", "kubectl-safety", check=False)
    return "kubectl-safety"


@pytest.mark.parametrize("name", FILES)
def test_gate_manifest_is_accepted_by_the_api_server(cluster, gate_namespace, name):
    for doc in _docs(name):
        if doc["kind"] in CORE:
            cluster.kubectl("create", "--dry-run=server", "-f", "-", input=json.dumps(doc))
            continue
        refused = cluster.kubectl("create", "--dry-run=server", "-f", "-", input=json.dumps(doc), check=False)
        assert refused.returncode != 0 and "no matches for kind" in refused.stderr, refused.stderr  # CRD absent
        for container in _gate_containers(doc):
            job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"generateName": "gate-"},
                   "spec": {"template": {"spec": {"restartPolicy": "Never",
                                                  "containers": [{"name": "gate", **container}]}}}}
            cluster.kubectl("create", "--dry-run=server", "-n", gate_namespace, "-f", "-", input=json.dumps(job))


def _run(name, cluster, namespace, node):
    args = [a.replace("pool=blue", f"pool={namespace}").replace("$(SYSTEM_UPGRADE_NODE_NAME)", node)
            for a in _gate_args(name)]
    return run_cli(args + ["--kubeconfig", str(cluster.kubeconfig)])


def test_gate_commands_answer_go_then_not_now(cluster, namespace, make_node):
    nodes = pool_nodes(make_node, namespace, 2)
    create(cluster, namespace, pool_web(2, namespace), pdb("web", {"app": "web"}, max_unavailable=1))
    wait_pods_running(cluster, namespace, "app=web", count=2, ready=False)
    names = [n for n in FILES if n != "flux-health-gate.yaml"]
    for name in names:
        code, out, err = _run(name, cluster, namespace, nodes[0])
        assert code == 0, (name, out[-2000:], err)
    cluster.kubectl("patch", "pdb", "web", "-n", namespace, "--type=json",
                    "-p", '[{"op":"remove","path":"/spec/maxUnavailable"},'
                          '{"op":"add","path":"/spec/minAvailable","value":2}]')
    for name in names:
        code, out, err = _run(name, cluster, namespace, nodes[0])
        assert code == 3, (name, out[-2000:], err)


@pytest.mark.parametrize("extra, code", [(["--no-such-flag"], 2), (["--server=https://127.0.0.1:1"], 1)])
def test_gate_contract_usage_and_error_codes(cluster, extra, code):
    got, out, err = run_cli(_gate_args("argocd-presync-job.yaml") + extra + ["--kubeconfig", str(cluster.kubeconfig)])
    assert got == code and err.startswith("error:"), err


def _argo_retries(expression, exit_code) -> bool:
    """Argo's retryStrategy.expression for the forms the example uses: asInt(lastRetry.exitCode) OP N."""
    m = re.fullmatch(r"asInt\(lastRetry\.exitCode\) (==|!=|>=|<=|>|<) (\d+)", expression.strip())
    assert m, expression
    return eval(f"{exit_code} {m.group(1)} {m.group(2)}")  # noqa: S307 - two integers and an operator


def test_argo_workflow_retries_on_not_now_and_fails_on_errors():
    workflow = _docs("argo-workflows-gate.yaml")[0]
    gate = next(t for t in workflow["spec"]["templates"] if t["name"] == "gate")
    assert gate["retryStrategy"]["retryPolicy"] == "Always"
    assert {c: _argo_retries(gate["retryStrategy"]["expression"], c) for c in (0, 1, 2, 3)} == {
        0: False, 1: False, 2: False, 3: True}
