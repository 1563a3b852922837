"""A small machine: the quick start, every command on the demo dump and on a generated 100-node dump,
and the hostile corpus, each in a child process whose address space is limited (``RLIMIT_AS``), as
on a laptop, a small CI runner or a container under strict overcommit. Nothing may allocate in
proportion to a limit instead of the input. No timing is asserted; peak memory is reported by
``benchmarks/peak_memory.py``.
"""

import json
import os
import re
import resource
import shlex
import subprocess
import sys
import threading

import pytest

from tests.unit.cli_helpers import DEMO, DEMO_NOW
from tests.unit.project.test_generate import load_generator

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
LIMIT = 2 << 30  # bytes of address space: 2 GiB


def limited():
    resource.setrlimit(resource.RLIMIT_AS, (LIMIT, LIMIT))


def run_limited(args, cwd=ROOT, env=None):
    """``(exit code, stdout, stderr, peak RSS in bytes)`` of ``python -m kubectl_safety ARGS`` under the limit."""
    proc = subprocess.Popen([sys.executable, "-m", "kubectl_safety", *args], cwd=cwd, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=limited,
                            env={**os.environ, **(env or {})})
    out, err = [], []
    readers = [threading.Thread(target=lambda s=s, b=b: b.append(s.read())) for s, b in
               ((proc.stdout, out), (proc.stderr, err))]
    for r in readers:
        r.start()
    _, status, usage = os.wait4(proc.pid, 0)  # the child's own rusage: its peak resident set
    proc.returncode = os.waitstatus_to_exitcode(status)
    for r in readers:
        r.join()
    return proc.returncode, out[0].decode(errors="replace"), err[0].decode(errors="replace"), usage.ru_maxrss * 1024


def readme_commands():
    """The README's quick start (after ``&&``) and its first block of example commands (one per
    command on the demo dump), as argument lists; ``check`` added, which that block leaves out."""
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        lines = f.read().splitlines()
    quick = next(re.search(r"&& \.venv/bin/kubectl-safety (.+)", line) for line in lines if "&& .venv/bin/" in line)
    first = next(i for i, line in enumerate(lines) if line.startswith("kubectl safety "))
    block = [line.split("#")[0] for line in lines[first:]]
    examples = [shlex.split(line)[2:] for line in block[:next(i for i, line in enumerate(block)
                                                              if not line.startswith("kubectl safety "))]]
    return shlex.split(quick.group(1)), examples + [["check"]]


QUICK, EXAMPLES = readme_commands()


def assert_ran(code, out, err, codes=(0, 3)):
    assert code in codes, f"exit {code}: {err[-2000:]}"
    assert "MemoryError" not in err and "internal error" not in err and "Traceback" not in err, err[-2000:]


def test_the_quick_start_runs_on_a_small_machine():
    code, out, err, _ = run_limited(QUICK)
    assert_ran(code, out, err, (0,))
    assert "SAFE" in out


@pytest.mark.parametrize("args", EXAMPLES, ids=[" ".join(a[:2]) + f"-{i}" for i, a in enumerate(EXAMPLES)])
def test_every_readme_command_on_the_demo_dump_runs_on_a_small_machine(args):
    code, out, err, _ = run_limited(args + ["--snapshot", DEMO, "--as-of", DEMO_NOW])
    assert_ran(code, out, err)
    assert out


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    out = tmp_path_factory.mktemp("small-machine")
    path = load_generator().write(100, str(out), seed=1)
    with open(out / "cluster-100.targets.json") as f:
        return path, json.load(f), str(out / "preemptor-100.yaml")


def generated_commands(targets, preemptor):
    node, pod = targets["node"], targets["pod"]
    return {
        "explain-pod": ["explain", "pod", pod["name"], "-n", pod["namespace"]],
        "explain-node": ["explain", "node", node],
        "explain-priorities": ["explain", "priorities"],
        "drain": ["drain", node, "--dry-run", "--ignore-daemonsets", "--delete-emptydir-data"],
        "preemption": ["preemption", "-f", preemptor],
        "delete": ["delete", "pod", pod["name"], "-n", pod["namespace"], "--force"],
        "rebalance": ["rebalance", "--dry-run", "-A"],
        "check": ["check"],
        "rollout": ["rollout", "-l", "kubernetes.io/hostname=" + node, "--dry-run", "--ignore-daemonsets",
                    "--no-precordon"],
    }


@pytest.mark.parametrize("name", ["explain-pod", "explain-node", "explain-priorities", "drain", "preemption",
                                  "delete", "rebalance", "check", "rollout"])
def test_every_command_on_a_generated_100_node_dump_runs_on_a_small_machine(name, generated):
    path, targets, preemptor = generated
    args = generated_commands(targets, preemptor)[name]
    code, out, err, _ = run_limited(args + ["--snapshot", path, "-o", "json"])
    assert_ran(code, out, err)
    json.loads(out)


def test_the_hostile_corpus_runs_on_a_small_machine():
    """Both corpora in one child under the limit: each case, in-process or in its own process
    (which inherits the limit), must end with its one clear line, never a MemoryError."""
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider",
                           "tests/unit/cli/test_hostile.py", "tests/unit/cli/test_bad_input.py"],
                          cwd=ROOT, preexec_fn=limited, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
