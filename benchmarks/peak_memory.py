"""Peak memory (the child's maximum resident set) of each README command on the demo dump, and of
each command on a generated dump, every one run under a 2 GiB address-space limit.

    python benchmarks/peak_memory.py              # the demo dump
    python benchmarks/peak_memory.py --nodes 100  # and a generated 100-node dump

Prints one line per command: exit code and peak RSS in MB.
"""

import argparse
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from tests.unit.cli_helpers import DEMO, DEMO_NOW  # noqa: E402
from tests.unit.project.test_small_machine import (EXAMPLES, QUICK, generated_commands, run_limited)  # noqa: E402


def report(name, args):
    code, _, err, peak = run_limited(args)
    line = f"{peak / 2**20:7.1f} MB  exit {code}  {name}"
    print(line if code in (0, 3) else f"{line}  {err.strip()[-200:]}", flush=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--nodes", type=int, default=0, help="also a generated dump of this many nodes")
    options = parser.parse_args()
    os.chdir(os.path.dirname(HERE))
    report("quick start: " + " ".join(QUICK[:4]), QUICK)
    for args in EXAMPLES:
        report(" ".join(args), args + ["--snapshot", DEMO, "--as-of", DEMO_NOW])
    if options.nodes:
        import json

        from tests.unit.project.test_generate import load_generator

        out = tempfile.mkdtemp(prefix="peak-memory-")
        path = load_generator().write(options.nodes, out, seed=1)
        with open(os.path.join(out, f"cluster-{options.nodes}.targets.json")) as f:
            targets = json.load(f)
        preemptor = os.path.join(out, f"preemptor-{options.nodes}.yaml")
        for name, args in generated_commands(targets, preemptor).items():
            report(f"{options.nodes} nodes: {name}", args + ["--snapshot", path, "-o", "json"])


if __name__ == "__main__":
    main()
