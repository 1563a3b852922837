"""A verdict never rests on what was not looked at: gates that cannot pass on nothing."""

import pytest

from tests.unit.cli_helpers import DEMO, DEMO_NOW, run_cli

OFFLINE = ["--snapshot", DEMO, "--as-of", DEMO_NOW]
COMMANDS = {"check": ["check"], "check -o json": ["check", "-o", "json"], "drain": ["drain", "--dry-run"],
            "drain --no-capacity": ["drain", "--dry-run", "--no-capacity"], "rollout": ["rollout", "--dry-run"]}


@pytest.mark.parametrize("command", COMMANDS.values(), ids=COMMANDS.keys())
def test_a_selector_that_matches_no_node_passes_the_gate(command):
    """`-l maintenance=tonight` on a cluster without that label is an error (exit 1, one line naming the
    selector), never `0/0 node(s) READY`."""
    code, out, err = run_cli(command + ["-l", "maintenance=tonight"] + OFFLINE)
    assert (code, out) == (1, ""), (code, out, err)
    assert err == "error: no node matches the selector maintenance=tonight\n"


@pytest.mark.parametrize("selector", ["topology.kubernetes.io/zone=eu-west-1z", "topologi.kubernetes.io/zone=eu-west-1a"],
                         ids=["value", "key"])
@pytest.mark.parametrize("command", COMMANDS.values(), ids=COMMANDS.keys())
def test_a_selector_that_matches_no_node_names_the_labels_close_to_it(command, selector):
    code, out, err = run_cli(command + ["-l", selector] + OFFLINE)
    assert code == 1 and len(err.splitlines()) == 1, err
    assert err.startswith(f"error: no node matches the selector {selector} (the nodes have ")
    assert "topology.kubernetes.io/zone=eu-west-1a, topology.kubernetes.io/zone=eu-west-1b" in err


MANIFESTS = {"demo-workloads": "examples/demo-workloads.yaml",
             "deployment": '{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"}, '
                           '"spec": {"replicas": 3}}'}


@pytest.mark.parametrize("manifest", MANIFESTS.values(), ids=MANIFESTS.keys())
def test_a_directory_of_files_is_a_snapshot_only_of_snapshots(tmp_path, manifest):
    """`--snapshot DIR` never merges a manifest (objects neither read nor run) into the dump: the
    file is named in one line and refused."""
    import shutil

    shutil.copy(DEMO, tmp_path / "a-cluster.yaml")
    if manifest.endswith(".yaml"):
        shutil.copy(manifest, tmp_path / "b-manifest.yaml")
    else:
        (tmp_path / "b-manifest.json").write_text(manifest)
    code, out, err = run_cli(["check", "--snapshot", str(tmp_path), "--as-of", DEMO_NOW])
    assert (code, out) == (1, ""), (code, out, err)
    assert len(err.splitlines()) == 1 and err.startswith(f"error: {tmp_path}/b-manifest.")
    assert "a manifest, not a dump" in err


def test_a_directory_of_dumps_is_read_as_before(tmp_path):
    import shutil

    shutil.copy(DEMO, tmp_path / "a-cluster.yaml")
    assert run_cli(["check", "--snapshot", str(tmp_path), "--as-of", DEMO_NOW])[1] == \
        run_cli(["check", "--snapshot", DEMO, "--as-of", DEMO_NOW])[1].replace(DEMO, str(tmp_path / "a-cluster.yaml"))


RUNBOOK = ["--ignore-daemonsets", "--delete-emptydir-data"]
PARTIAL = {  # the demo dump without some kinds, as `kubectl get KINDS -A -o json` writes it
    "nodes,pods": {"Node", "Pod", "Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "PriorityClass"},
    "nodes": {"Node"},
    "pods": {"Pod", "Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "PriorityClass"},
}
PARTIAL_CASES = {  # command, dump, the kinds it must name, the JSON path of the risk or finding
    "drain": (["drain", "node-a2", "--dry-run", *RUNBOOK], "nodes,pods", "poddisruptionbudgets", "risks"),
    "drain-nodes-only": (["drain", "node-a1", "--dry-run", *RUNBOOK], "nodes", "poddisruptionbudgets, pods", "risks"),
    "check": (["check", "-l", "topology.kubernetes.io/zone=eu-west-1a", *RUNBOOK], "nodes", "poddisruptionbudgets, pods",
              "findings"),
    "rollout": (["rollout", "node-a2", "--dry-run", *RUNBOOK], "nodes,pods", "poddisruptionbudgets", "risks"),
    "rebalance": (["rebalance", "-A", "--dry-run"], "nodes,pods", "poddisruptionbudgets", "risks"),
    "preemption": (["preemption", "report-xyz", "-n", "jobs"], "nodes,pods", "poddisruptionbudgets", "findings"),
}


def partial_dump(tmp_path, kinds):
    import json

    import yaml

    items = [i for i in yaml.safe_load(open(DEMO))["items"] if i["kind"] in PARTIAL[kinds]]
    path = tmp_path / f"{kinds.replace(',', '-')}.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    return ["--snapshot", str(path), "--as-of", DEMO_NOW]


def _incomplete(report, where):
    import json

    found = [r for r in json.loads(json.dumps(report)).get(where, []) if r["code"] == "SNAPSHOT_INCOMPLETE"]
    for batch in report.get("batches", []):  # a rollout's risks are its batches'
        found += [r for r in batch.get("risks", []) if r["code"] == "SNAPSHOT_INCOMPLETE"]
    return found


@pytest.mark.parametrize("command, kinds, named, where", PARTIAL_CASES.values(), ids=PARTIAL_CASES.keys())
def test_a_partial_dump_is_judged_safe(tmp_path, command, kinds, named, where):
    """A kind the verdict rests on that the dump does not hold is unknown, not empty: the verdict is
    not SAFE (exit 3) and names each such kind, in text and JSON."""
    import json

    source = partial_dump(tmp_path, kinds)
    code, out, err = run_cli(command + ["-o", "json"] + source)
    assert code == 3, (out, err)
    [risk] = _incomplete(json.loads(out), where)[:1]
    assert f"does not hold {named}:" in risk["message"]
    code, text, err = run_cli(command + source)
    assert code == 3 and "SNAPSHOT_INCOMPLETE" in text and f"does not hold {named}:" in text, err


def test_a_snapshot_incomplete_risk_accepted_by_name_makes_the_drain_safe(tmp_path):
    import json

    source = partial_dump(tmp_path, "nodes,pods")
    code, out, err = run_cli(["drain", "node-b1", "--dry-run", *RUNBOOK, "-o", "json"] + source)
    assert code == 3 and [r["code"] for r in json.loads(out)["risks"]] == ["SNAPSHOT_INCOMPLETE"], err
    code, out, err = run_cli(["drain", "node-b1", "--dry-run", *RUNBOOK, "-o", "json",
                              "--accept-risk=snapshot-incomplete"] + source)
    assert code == 0 and json.loads(out)["risks"][0]["accepted"] is True, err


def test_a_force_delete_on_a_dump_without_nodes_does_not_take_the_node_for_gone(tmp_path):
    """Without nodes in the dump, the pod's node is unknown (not a Node object that is gone, which
    makes a force delete look reasonably safe)."""
    import json

    code, out, err = run_cli(["delete", "pod", "web-5d8f7c-0x0", "-n", "shop", "--dry-run=client", "-o", "json"]
                             + partial_dump(tmp_path, "pods"))
    assessment = json.loads(out)["pods"][0]
    assert code == 0, err
    assert assessment["node"]["state"] == "Unreadable" and assessment["forceNeeded"] is None
    assert [r["code"] for r in assessment["risks"]][0] == "SNAPSHOT_INCOMPLETE"
    assert "does not hold nodes:" in assessment["risks"][0]["message"]
