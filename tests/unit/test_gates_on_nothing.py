"""A verdict never rests on what was not looked at: gates that cannot pass on nothing."""

import pytest

from tests.unit.cli_helpers import DEMO, DEMO_NOW, run_cli

OFFLINE = ["--snapshot", DEMO, "--as-of", DEMO_NOW]
COMMANDS = {"check": ["check"], "check -o json": ["check", "-o", "json"], "drain": ["drain", "--dry-run"],
            "drain --no-capacity": ["drain", "--dry-run", "--no-capacity"], "rollout": ["rollout", "--dry-run"]}


@pytest.mark.parametrize("command", COMMANDS.values(), ids=COMMANDS.keys())
def test_a_selector_that_matches_no_node_passes_the_gate(command):
    """`-l pool=blue` on a cluster without that label is an error (exit 1, one line naming the
    selector), never `0/0 node(s) READY`."""
    code, out, err = run_cli(command + ["-l", "pool=blue"] + OFFLINE)
    assert (code, out) == (1, ""), (code, out, err)
    assert err == "error: no node matches the selector pool=blue\n"


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
