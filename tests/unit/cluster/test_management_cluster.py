"""--management-snapshot / --management-kubeconfig: Cluster API's Machines, MachineDeployments and
MachineDrainRules read from the management cluster, matched to the workload cluster's nodes by
status.nodeRef.name."""

import json

import pytest

from kubectl_safety.cluster.management import merge_management
from tests.builders import make_node, make_pod, snapshot
from tests.unit.cli_helpers import run_cli
from tests.unit.analysis.profiles.test_engine_settings_objects import MD, drain_rule, machine

NOW = "2026-11-22T09:00:00Z"


def dumps(tmp_path, workload, management):
    paths = []
    for name, items in (("workload", workload), ("management", management)):
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
        paths.append(str(path))
    return paths


WORKLOAD = [make_node("n1"), make_node("n2"), make_pod("web-a", labels={"app": "web"})]
MANAGEMENT = [machine("m1", "n1"), MD, drain_rule("b-skip", "Skip", {"matchLabels": {"app": "web"}}),
              machine("m-other", "n9", {"deletion": {"nodeDrainTimeoutSeconds": 5}})]


def test_the_management_clusters_machines_replace_the_workload_clusters(tmp_path):
    _, management = dumps(tmp_path, WORKLOAD, MANAGEMENT)
    workload = snapshot(*WORKLOAD, machine("stale", "n1"))
    merged = merge_management(workload, snapshot_path=management)
    assert sorted(m.name for m in merged.machines) == ["m-other", "m1"]
    assert [d.name for d in merged.machine_deployments] == ["md"]
    assert [r.name for r in merged.machine_drain_rules] == ["b-skip"]
    assert [p.name for p in merged.pods] == ["web-a"]


def test_drain_with_a_management_snapshot_takes_capi_settings_from_its_machines(tmp_path):
    workload, management = dumps(tmp_path, WORKLOAD, MANAGEMENT)
    code, out, err = run_cli(["drain", "n1", "--dry-run", "--engine", "capi", "--snapshot", workload,
                              "--as-of", NOW, "--management-snapshot", management, "-o", "json"])
    engine = json.loads(out)["engine"]
    settings = {s["name"]: (s["value"], s["source"], s["origin"]) for s in engine["settings"]}
    assert settings["nodeDrainTimeoutSeconds"] == ("600", "object", "MachineDeployment capi/md")
    assert settings["exclude-node-draining"] == ("false", "object", "Machine capi/m1")
    assert settings["machineDrainRules"][1:] == ("object", "MachineDrainRules b-skip in capi")
    assert [(p["name"], p["code"]) for p in engine["nodes"][0]["pods"]] == [("web-a", "CAPI_DRAIN_SKIP")]
    code, out, err = run_cli(["drain", "n1", "--dry-run", "--engine", "capi", "--snapshot", workload,
                              "--as-of", NOW, "--management-snapshot", management])
    assert "object (Machine capi/m1)" in out


USAGE = [
    ("management-without-capi", ["--engine", "karpenter", "--management-snapshot", "x.json"],
     "--management-snapshot needs an --engine whose objects live in a management cluster (capi)"),
    ("management-without-engine", ["--management-kubeconfig", "k"], "--management-kubeconfig needs an --engine whose objects live in a management cluster (capi)"),
    ("both-management-flags", ["--engine", "capi", "--management-kubeconfig", "k", "--management-snapshot", "x"],
     "cannot be used together"),
]


@pytest.mark.parametrize("name, args, message", USAGE, ids=[u[0] for u in USAGE])
def test_management_flag_usage_errors(tmp_path, name, args, message):
    workload, _ = dumps(tmp_path, WORKLOAD, [])
    code, out, err = run_cli(["drain", "n1", "--dry-run", "--snapshot", workload, *args])
    assert code == 2 and message in err
