"""examples/rollout-pool.sh: the plan first, the rollout only when it is SAFE, the exit code passed on.

A stand-in ``kubectl`` on PATH answers ``kubectl safety rollout`` with the exit code the scenario
gives each mode (plan or act), recording every call.
"""

import os
import subprocess
import textwrap

import pytest

SCRIPT = os.path.join(os.getcwd(), "examples", "rollout-pool.sh")


def run_pool(tmp_path, codes, extra=(), env=None):
    log = tmp_path / "calls"
    stub = tmp_path / "kubectl"
    stub.write_text(textwrap.dedent("""\
        #!/usr/bin/env bash
        echo "$*" >> {log}
        case " $* " in *" --dry-run "*) exit {plan} ;; esac
        exit {act}
        """).format(log=log, plan=codes.get("plan", 0), act=codes.get("act", 0)))
    stub.chmod(0o755)
    full_env = {"PATH": f"{tmp_path}{os.pathsep}/usr/bin{os.pathsep}/bin", **(env or {})}
    proc = subprocess.run(["bash", SCRIPT, "pool=blue", *extra], env=full_env, capture_output=True, text=True,
                          timeout=60)
    return proc.returncode, log.read_text().splitlines()


def modes(calls):
    return ["plan" if "--dry-run" in c else "act" for c in calls if c.startswith("safety rollout ")]


@pytest.mark.parametrize("codes, rc, expected", [
    ({}, 0, ["plan", "act"]),
    ({"plan": 3}, 3, ["plan"]),
    ({"plan": 1}, 1, ["plan"]),
    ({"act": 4}, 4, ["plan", "act"]),
    ({"act": 3}, 3, ["plan", "act"]),
    ({"act": 130}, 130, ["plan", "act"]),
], ids=["done", "unsafe-plan-touches-nothing", "error-stops", "partial-passed-on", "refused-passed-on",
        "interrupted-passed-on"])
def test_rollout_pool(tmp_path, codes, rc, expected):
    code, calls = run_pool(tmp_path, codes)
    assert code == rc and modes(calls) == expected


def test_flags_and_context_are_passed_on(tmp_path):
    code, calls = run_pool(tmp_path, {}, extra=["--by-zone"],
                           env={"KUBE_CONTEXT": "prod", "MAX_UNAVAILABLE": "25%", "TIMEOUT": "5m"})
    act = [c for c in calls if "--dry-run" not in c][0]
    assert code == 0 and act.startswith("safety rollout -l pool=blue --ignore-daemonsets")
    assert "--context prod" in act and "--by-zone" in act and "--yes" in act
    assert "--max-unavailable 25%" in act and "--timeout 5m" in act
