"""`rollout --pushgateway --metrics-file` on the control plane: a real Pushgateway accepts the push (it
parses the exposition format and refuses what it cannot) and serves our series; the textfile holds them."""

from __future__ import annotations

import json
import re

import pytest
from cluster_helpers import create, deployment, wait_pods_running

from tests import promstack
from tests.ci import unavailable
from tests.unit.cli_helpers import run_cli

pytestmark = pytest.mark.needs_build("prometheus")  # built after the control plane: runs last


@pytest.fixture
def pushgateway(tmp_path):
    reason = promstack.unavailable("pushgateway")
    if reason:
        unavailable(reason)
    stack = promstack.Stack(tmp_path, prometheus=False)
    yield stack
    stack.close()


def test_a_rollout_pushes_its_metrics_and_writes_the_textfile(cluster, namespace, make_node, pushgateway, tmp_path):
    tag = f"mx-{namespace[-6:]}"
    pool = [make_node(f"{tag}-{i}", labels={"role": tag, "tier": namespace})["metadata"]["name"] for i in range(2)]
    create(cluster, namespace, deployment("app", 2, node_selector={"tier": namespace}, requests={"cpu": "100m"}))
    wait_pods_running(cluster, namespace, count=2)
    textfile = tmp_path / "rollout.prom"
    code, out, err = run_cli(["rollout", "-l", f"role={tag}", "--no-precordon", "--gate-timeout", "60s",
                              "--lease-namespace", namespace, "--pushgateway", pushgateway.pushgateway,
                              "--metrics-file", str(textfile), "--yes", "--kubeconfig", str(cluster.kubeconfig),
                              "-o", "json"])
    assert code == 0, err
    moved = sum(len(n["drain"]["evicted"]) for n in json.loads(out)["nodes"])
    assert moved >= 2  # both pods, and the replacement that landed on the second node
    assert "warning" not in err, err
    served = pushgateway.metrics()
    for text in (served, textfile.read_text()):
        done = re.search(r'^kubectl_safety_rollout_nodes_done_total\{[^}]*rollout="kubectl-safety-rollout-\w+"[^}]*\} '
                         r'(\S+)$', text, re.M)
        assert done and float(done[1]) == 2, text
        evicted = [float(v) for v in re.findall(r'^kubectl_safety_rollout_pods_evicted_total\{[^}]*\} (\S+)$', text,
                                                re.M)]
        assert len(evicted) == 2 and sum(evicted) == moved, text  # one series per node
        assert re.search(r'^kubectl_safety_rollout_status\{[^}]*status="done"[^}]*\} 1$', text, re.M), text
    assert re.search(r'^# TYPE kubectl_safety_rollout_pods_evicted_total counter$', served, re.M)
    assert 'job="kubectl-safety"' in served  # the group the rollout replaced
