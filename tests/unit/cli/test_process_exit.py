"""``main.run``, the process entry point: it exits without tearing the heap down, yet with the
exit code ``main`` gives, every byte of the output written and the exit handlers run."""

import json
import os
import subprocess
import sys
from dataclasses import dataclass

import pytest

from tests.unit.cli_helpers import DEMO

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
HANDLER = ("import atexit, sys; from kubectl_safety.cli.main import run; "
           "atexit.register(lambda: print('exit handler ran', end='')); "
           "sys.argv = ['kubectl-safety'] + sys.argv[1:]; run()")


@dataclass
class Case:
    name: str
    argv: list  # after the interpreter
    code: int
    stdout: str = ""  # "json": the whole output parses; else a substring
    stderr: str = ""


CASES = [
    Case("module-ok", ["-m", "kubectl_safety", "version", "-o", "json"], 0, "json"),
    Case("module-usage-error", ["-m", "kubectl_safety", "drain"], 2, stderr="error:"),
    Case("module-not-ready-demo", ["-m", "kubectl_safety", "check", "--snapshot", DEMO, "-o", "json"], 3, "json"),
    Case("bin-script", [os.path.join(ROOT, "bin", "kubectl-safety"), "explain", "priorities", "--snapshot", DEMO],
         0, "PREEMPTION-POLICY"),
    Case("exit-handlers-run-and-their-output-is-flushed", ["-c", HANDLER, "version"], 0, "exit handler ran"),
    Case("exit-handlers-run-on-error", ["-c", HANDLER, "explain", "pod", "nosuch", "--snapshot", DEMO], 1,
         "exit handler ran", "error:"),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_the_entry_point_keeps_exit_codes_output_and_exit_handlers(case):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}  # buffered, as a user's pipe is
    proc = subprocess.run([sys.executable, *case.argv], capture_output=True, text=True, cwd=ROOT, timeout=120,
                          env={**env, "PYTHONPATH": ROOT})
    assert proc.returncode == case.code, proc.stderr
    if case.stdout == "json":
        assert json.loads(proc.stdout)
    else:
        assert case.stdout in proc.stdout
    assert case.stderr in proc.stderr
