"""examples/pool-gate.sh, the runbook step that gates a pool: check -l, the rollout plan, the blockers
read with -o jsonpath, a branch per documented exit code; on the demo dump and a generated one, without jq."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.unit.cli_helpers import DEMO, DEMO_NOW

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = ROOT / "examples" / "pool-gate.sh"
ZONE_A = "topology.kubernetes.io/zone=eu-west-1a"


@pytest.fixture(scope="module")
def no_jq(tmp_path_factory):
    """A PATH whose first directory has a jq that fails the test if the script calls it."""
    shims = tmp_path_factory.mktemp("shims")
    (shims / "jq").write_text("#!/bin/sh\necho 'jq called' >&2\nexit 99\n")
    (shims / "jq").chmod(0o755)
    return f"{shims}{os.pathsep}{os.environ['PATH']}"


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    """A generated 20-node dump (four zones; spread constraints that a pre-cordoned zone cannot keep)."""
    out = tmp_path_factory.mktemp("dump")
    subprocess.run([sys.executable, str(ROOT / "benchmarks" / "generate.py"), "--nodes", "20", "--out", str(out)],
                   check=True, capture_output=True)
    return str(out / "cluster-20.json")


def gate(no_jq, selector, *flags):
    env = dict(os.environ, PATH=no_jq, KUBECTL_SAFETY=f"{sys.executable} -m kubectl_safety")
    done = subprocess.run(["bash", str(SCRIPT), selector, *flags], env=env, capture_output=True, text=True,
                          cwd=ROOT, timeout=300)
    assert "jq called" not in done.stderr
    return done.returncode, done.stdout, done.stderr


def test_the_script_uses_no_jq():
    assert "jq" not in SCRIPT.read_text().replace("no jq needed", "")


def test_demo_pool_with_a_blocking_pdb_is_not_ready_and_names_it(no_jq):
    code, out, err = gate(no_jq, ZONE_A, "--snapshot", DEMO, "--as-of", DEMO_NOW)
    assert code == 3, err
    assert "PodDisruptionBudget/db blocks 1 node(s): PDB_NEVER_ALLOWS" in out
    assert "plan: NOT SAFE; nodes left: node-a2" in out


def test_demo_healthy_node_passes(no_jq):
    code, out, err = gate(no_jq, "kubernetes.io/hostname=node-a1", "--snapshot", DEMO, "--as-of", DEMO_NOW)
    assert code == 0, out + err
    assert "ready: every node of the pool can be drained now" in out and "plan: SAFE" in out


def test_generated_zone_is_blocked_by_pre_cordoning_and_safe_without(no_jq, generated):
    code, out, err = gate(no_jq, ZONE_A, "--snapshot", generated)
    assert code == 3, err
    assert out.startswith("ready: ")  # the check passes; only the pre-cordoned plan does not
    assert "cause: pre-cordoning the pool" in out and "SAFE with --no-precordon" in out


@pytest.mark.parametrize("flags, code, message", [
    (["--snapshot", "/nonexistent/cluster.json"], 1, "error: check failed (exit 1)"),
    (["--snapshot", DEMO, "--fail-on", "sometimes"], 2, "error: check failed (exit 2)"),
])
def test_errors_and_usage_pass_their_exit_code_on(no_jq, flags, code, message):
    got, out, err = gate(no_jq, ZONE_A, *flags)
    assert got == code and message in err and out == ""


@pytest.mark.parametrize("check, plan, code, message", [
    (0, 0, 0, "plan: SAFE"),
    (1, 0, 1, "error: check failed (exit 1)"),
    (2, 0, 2, "error: check failed (exit 2)"),
    (3, 0, 3, "not ready; what blocks the pool:"),
    (4, 0, 1, "error: check cannot exit 4"),
    (5, 0, 1, "error: check cannot exit 5"),
    (130, 0, 130, "interrupted"),
    (0, 1, 1, "error: the plan failed (exit 1)"),
    (0, 2, 2, "error: the plan failed (exit 2)"),
    (0, 3, 3, "plan: NOT SAFE"),
    (0, 4, 1, "error: a dry run cannot exit 4"),
    (0, 5, 1, "error: a dry run cannot exit 5"),
    (0, 130, 130, "interrupted"),
])
def test_exit_code_each_documented_code_has_its_branch(tmp_path, check, plan, code, message):
    stub = tmp_path / "safety"
    stub.write_text(f"#!/usr/bin/env bash\ncase $1 in check) exit {check} ;; rollout) exit {plan} ;; esac\n")
    stub.chmod(0o755)
    env = dict(os.environ, KUBECTL_SAFETY=str(stub))
    done = subprocess.run(["bash", str(SCRIPT), "pool=blue"], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == code and message in done.stdout + done.stderr, done.stdout + done.stderr


def test_gate_and_rollout_drain_with_one_set_of_flags_on_a_pool_with_emptydir_pods(no_jq):
    """pool=blue holds jobs/batch-6f5d-0b0 (emptyDir) on node-c2: the gate and the rollout must agree on it."""
    demo = ["--snapshot", DEMO, "--as-of", DEMO_NOW]
    code, out, err = gate(no_jq, "pool=blue", *demo)
    assert code == 0 and "plan: SAFE" in out, out + err
    env = dict(os.environ, PATH=no_jq, KUBECTL_SAFETY=f"{sys.executable} -m kubectl_safety")
    done = subprocess.run(["bash", str(ROOT / "examples" / "rollout-pool.sh"), "pool=blue", *demo], env=env,
                          capture_output=True, text=True, cwd=ROOT, timeout=300)
    # the plan the gate passed is the plan the rollout makes: SAFE, so it goes on to act (refused on a dump)
    assert "not safe" not in done.stderr and "== rollout" in done.stderr, done.stdout + done.stderr
    assert "\nSAFE: every batch can complete" in done.stdout


def test_drain_flags_are_declared_once_in_the_examples():
    flags = ("--ignore-daemonsets", "--delete-emptydir-data", "--force", "--disable-eviction")
    for script in ("pool-gate.sh", "rollout-pool.sh"):
        code = "\n".join(line for line in (ROOT / "examples" / script).read_text().splitlines()
                         if not line.lstrip().startswith("#"))
        assert "drain-flags.sh" in code and not [f for f in flags if f in code], script
