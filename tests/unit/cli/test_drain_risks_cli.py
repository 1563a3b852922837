"""The SAFE contract on the command line: issue 18's demo cases, --accept-risk, the prompt shows the risks."""

import io
import json

import click
import pytest

from kubectl_safety.analysis.drain import DrainOptions, plan_drain
from kubectl_safety.cli.commands import drain as drain_command
from kubectl_safety.cluster.source import load_snapshot
from kubectl_safety.model.meta import parse_time
from kubectl_safety.errors import DeclinedError, UsageError
from tests.unit.cli_helpers import DEMO, DEMO_NOW, run_cli


def drain(*args):
    return run_cli(["drain", *args, "--snapshot", DEMO, "--as-of", DEMO_NOW, "-o", "json"])


# (id, arguments, exit code, risk codes not accepted)
DEMO_CASES = [
    ("unreachable-node-d1", ["node-d1", "--dry-run", "--ignore-daemonsets", "--force"], 3, {"NODE_UNREACHABLE"}),
    ("disable-eviction-bypasses-shop-db", ["node-a2", "--dry-run", "--ignore-daemonsets", "--disable-eviction",
                                           "--delete-emptydir-data"], 3, {"PDB_BYPASSED"}),
    ("zonal-volume-replacement-unplaceable", ["node-c1", "--dry-run", "--ignore-daemonsets"], 3,
     {"REPLACEMENT_UNPLACEABLE", "PDB_NEVER_ALLOWS"}),
    ("node-a1-stays-safe", ["node-a1", "--dry-run", "--ignore-daemonsets"], 0, set()),
    ("accepted-risk-is-exit-0", ["node-d1", "--dry-run", "--ignore-daemonsets", "--force",
                                 "--accept-risk=unreachable"], 0, set()),
]


@pytest.mark.parametrize("args, exit_code, codes", [c[1:] for c in DEMO_CASES], ids=[c[0] for c in DEMO_CASES])
def test_demo_cases(args, exit_code, codes):
    code, out, err = drain(*args)
    assert code == exit_code, err
    plan = json.loads(out)
    assert {r["code"] for r in plan["risks"] if not r["accepted"]} == codes
    assert plan["safe"] is (exit_code == 0)


def test_shop_db_bypass_names_the_pdb_and_the_pod():
    _, out, _ = drain("node-a2", "--dry-run", "--ignore-daemonsets", "--disable-eviction", "--delete-emptydir-data")
    [risk] = json.loads(out)["risks"]
    assert {"kind": "PodDisruptionBudget", "namespace": "shop", "name": "db"} in risk["objects"]
    assert {"kind": "Pod", "namespace": "shop", "name": "db-0"} in risk["objects"]


def test_unknown_accept_risk_is_a_usage_error():
    code, _, err = drain("node-a1", "--dry-run", "--accept-risk=whatever")
    assert code == 2 and "unknown risk" in err


def test_text_plan_lists_risks_and_verdict():
    code, out, _ = run_cli(["drain", "node-d1", "--dry-run", "--ignore-daemonsets", "--force", "--snapshot", DEMO,
                            "--as-of", DEMO_NOW])
    assert code == 3
    assert "NODE_UNREACHABLE:" in out and "NOT SAFE (NODE_UNREACHABLE)" in out


def test_text_plan_says_which_risks_were_accepted():
    code, out, _ = run_cli(["drain", "node-d1", "--dry-run", "--ignore-daemonsets", "--force", "--snapshot", DEMO,
                            "--as-of", DEMO_NOW, "--accept-risk=unreachable"])
    assert code == 0
    assert "NODE_UNREACHABLE (accepted):" in out and "SAFE only with the accepted risks (NODE_UNREACHABLE)" in out


def demo_plan(node, **options):
    """The typed plan ``drain NODE --dry-run`` prints for the demo."""
    snap = load_snapshot(snapshot_paths=[DEMO], now=parse_time(DEMO_NOW))
    return plan_drain(snap, [node], DrainOptions(**options), snap.taken_at)


def test_prompt_shows_the_plan_with_its_risks(monkeypatch, capsys):
    plan = demo_plan("node-c1", ignore_daemonsets=True)
    tty = io.StringIO()
    tty.isatty = lambda: True
    monkeypatch.setattr("sys.stdin", tty)
    monkeypatch.setattr(click, "confirm", lambda *a, **k: False)
    with pytest.raises(DeclinedError):
        drain_command._confirm(plan, yes=False)
    assert "REPLACEMENT_UNPLACEABLE" in capsys.readouterr().err


def test_without_a_terminal_yes_is_still_required(monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO())
    with pytest.raises(UsageError, match="--yes"):
        drain_command._confirm(demo_plan("node-a1", ignore_daemonsets=True), yes=False)
