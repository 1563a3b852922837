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
