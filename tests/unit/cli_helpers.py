"""Run the CLI in-process like a user would: exit code, stdout, stderr."""

import io
import sys
from contextlib import redirect_stderr, redirect_stdout

import pytest

from kubectl_safety.cli.main import main

DEMO = "examples/demo-cluster.yaml"
DEMO_NOW = "2026-11-22T09:00:00Z"


def run_cli(args, input=None):
    """``(exit_code, stdout, stderr)`` of ``kubectl-safety ARGS``."""
    out, err = io.StringIO(), io.StringIO()
    old_stdin = sys.stdin
    if input is not None:
        sys.stdin = io.TextIOWrapper(io.BytesIO(input.encode() if isinstance(input, str) else input))
    try:
        with redirect_stdout(out), redirect_stderr(err), pytest.raises(SystemExit) as exit_info:
            main(list(args))
    finally:
        sys.stdin = old_stdin
    return exit_info.value.code, out.getvalue(), err.getvalue()
