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
    return proc.returncode, log.read_text().splitlines(), proc.stderr


def modes(calls):
    return ["plan" if "--dry-run" in c else "act" for c in calls if c.startswith("safety rollout ")]


# every documented exit code, of the plan and of the rollout: passed on, with the message that names its cause
@pytest.mark.parametrize("codes, rc, expected, message", [
    ({}, 0, ["plan", "act"], "maintained and back"),
    ({"plan": 1}, 1, ["plan"], "the plan failed"),
    ({"plan": 2}, 2, ["plan"], "usage: check the selector and flags"),
    ({"plan": 3}, 3, ["plan"], "not safe: nothing was changed"),
    ({"plan": 4}, 4, ["plan"], "unexpected exit 4 from a dry run"),
    ({"plan": 5}, 5, ["plan"], "unexpected exit 5 from a dry run"),
    ({"plan": 130}, 130, ["plan"], "interrupted; nothing was changed"),
    ({"act": 1}, 1, ["plan", "act"], "error (see above); progress is kept"),
    ({"act": 2}, 2, ["plan", "act"], "usage: nothing was changed"),
    ({"act": 3}, 3, ["plan", "act"], "another rollout holds the pool"),
    ({"act": 4}, 4, ["plan", "act"], "stopped part way"),
    ({"act": 5}, 5, ["plan", "act"], "declined at the question"),
    ({"act": 130}, 130, ["plan", "act"], "stopped part way"),
], ids=["done", "plan-error-stops", "plan-usage-stops", "unsafe-plan-touches-nothing", "plan-4-unexpected",
        "plan-5-unexpected", "plan-interrupted", "error-passed-on", "usage-passed-on", "refused-passed-on",
        "partial-passed-on", "declined-passed-on", "interrupted-passed-on"])
def test_rollout_pool(tmp_path, codes, rc, expected, message):
    code, calls, err = run_pool(tmp_path, codes)
    assert code == rc and modes(calls) == expected and message in err, err


def test_flags_and_context_are_passed_on(tmp_path):
    code, calls, _ = run_pool(tmp_path, {}, extra=["--by-zone"],
                           env={"KUBE_CONTEXT": "prod", "MAX_UNAVAILABLE": "25%", "TIMEOUT": "5m"})
    act = [c for c in calls if "--dry-run" not in c][0]
    assert code == 0 and act.startswith("safety rollout -l pool=blue --ignore-daemonsets --delete-emptydir-data")
    assert "--context prod" in act and "--by-zone" in act and "--yes" in act
    assert "--max-unavailable 25%" in act and "--timeout 5m" in act
