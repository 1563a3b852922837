"""examples/drain-pool.sh: node by node, dry run first, stop on exit code 3 (or 4).

A stand-in ``kubectl`` on PATH lists the pool's nodes and answers ``kubectl safety drain`` with
the exit code the scenario gives each (node, mode), recording every call.
"""

import os
import subprocess
import textwrap

import pytest

SCRIPT = os.path.join(os.getcwd(), "examples", "drain-pool.sh")


def run_pool(tmp_path, codes, extra=(), env=None):
    """Run the script on nodes n1..n3; ``codes[(node, "plan"|"drain")]`` is that call's exit code."""
    log = tmp_path / "calls"
    cases = "\n".join(f'  "{node} {mode}") exit {code} ;;' for (node, mode), code in codes.items())
    stub = tmp_path / "kubectl"
    stub.write_text(textwrap.dedent("""\
        #!/usr/bin/env bash
        echo "$*" >> {log}
        if [ "$1" = get ]; then printf 'n1\\nn2\\nn3\\n'; exit 0; fi
        mode=drain; case " $* " in *" --dry-run "*) mode=plan ;; esac
        case "$3 $mode" in
        {cases}
        esac
        exit 0
        """).format(log=log, cases=cases))
    stub.chmod(0o755)
    full_env = {"PATH": f"{tmp_path}{os.pathsep}/usr/bin{os.pathsep}/bin", "PAUSE": "0", **(env or {})}
    proc = subprocess.run(["bash", SCRIPT, "pool=blue", *extra], env=full_env, capture_output=True, text=True,
                          timeout=60)
    return proc.returncode, log.read_text().splitlines()


def drains(calls):
    """(node, mode) of every ``kubectl safety drain`` call, in order."""
    out = []
    for call in calls:
        words = call.split()
        if words[:2] == ["safety", "drain"]:
            out.append((words[2], "plan" if "--dry-run" in words else "drain"))
    return out


@pytest.mark.parametrize("codes, rc, expected", [
    ({}, 0, [("n1", "plan"), ("n1", "drain"), ("n2", "plan"), ("n2", "drain"), ("n3", "plan"), ("n3", "drain")]),
    ({("n2", "plan"): 3}, 3, [("n1", "plan"), ("n1", "drain"), ("n2", "plan")]),
    ({("n1", "drain"): 3}, 3, [("n1", "plan"), ("n1", "drain")]),
    ({("n2", "drain"): 4}, 4, [("n1", "plan"), ("n1", "drain"), ("n2", "plan"), ("n2", "drain")]),
    ({("n1", "plan"): 1}, 1, [("n1", "plan")]),
], ids=["all-drained", "blocked-plan-stops-before-node", "refused-drain-stops", "partial-stops", "error-stops"])
def test_drain_pool(tmp_path, codes, rc, expected):
    code, calls = run_pool(tmp_path, codes)
    assert code == rc
    assert drains(calls) == expected


def test_flags_and_context_are_passed_on(tmp_path):
    code, calls = run_pool(tmp_path, {}, extra=["--delete-emptydir-data"],
                           env={"KUBE_CONTEXT": "prod", "TIMEOUT": "5m"})
    assert code == 0
    assert calls[0].startswith("get nodes -l pool=blue --context prod")
    real = [c for c in calls if c.startswith("safety drain n1 ") and "--dry-run" not in c][0]
    assert "--context prod" in real and "--delete-emptydir-data" in real
    assert "--timeout 5m" in real and "--yes" in real and "--ignore-daemonsets" in real
