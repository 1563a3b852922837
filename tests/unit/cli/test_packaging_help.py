"""Every command's --help reads like a kubectl plugin's: summary, usage, examples, exit codes, JSON kind."""

import click
import pytest

from kubectl_safety.cli.main import cli
from tests.unit.cli_helpers import run_cli


def walk(group, path=()):
    """``(path, command or import error)`` for every command under ``group``, depth first."""
    ctx = click.Context(group, info_name="kubectl safety")
    for name in group.list_commands(ctx):
        try:
            cmd = group.get_command(ctx, name)
        except Exception as e:  # a command module that does not import is reported by its test
            yield (*path, name), e
            continue
        yield (*path, name), cmd
        if isinstance(cmd, click.Group):
            yield from walk(cmd, (*path, name))


COMMANDS = list(walk(cli))


def help_text(path):
    code, out, err = run_cli([*path, "--help"])
    assert code == 0, err
    return out


def test_walk_finds_the_registered_commands():
    names = {path[0] for path, _ in COMMANDS}
    assert {"explain", "version"} <= names
    assert ("explain", "pod") in {path for path, _ in COMMANDS}


def test_root_help():
    out = help_text([])
    assert out.startswith("Usage: kubectl safety [OPTIONS] COMMAND")
    assert "Exit codes:" in out and "130" in out
    for path, _ in COMMANDS:
        if len(path) == 1:
            assert f"\n  {path[0]} " in out, f"{path[0]} missing from the command list"


@pytest.mark.parametrize("path, cmd", COMMANDS, ids=[" ".join(p) for p, _ in COMMANDS])
def test_command_help(path, cmd):
    assert isinstance(cmd, click.Command), f"kubectl_safety.cli.commands for {' '.join(path)}: {cmd!r}"
    out = help_text(path)
    invocation = "kubectl safety " + " ".join(path)
    summary = (cmd.help or "").strip().split("\n\n")[0]
    problems = []
    if not summary or "\n" in summary:
        problems.append("a one-line summary as the docstring's first paragraph")
    if f"Usage: {invocation}" not in (cmd.help or ""):
        problems.append(f"a kubectl-style line 'Usage: {invocation} ...' in the docstring")
    if "Exit codes" not in out:
        problems.append("the exit codes (epilog)")
    if not isinstance(cmd, click.Group):
        examples = out.partition("Examples:")[2]
        if not any(line.strip().startswith(invocation) for line in examples.splitlines()):
            problems.append(f"'Examples:' with at least one '{invocation} ...' line")
        if "JSON kind: " not in out:
            problems.append("the JSON kind it emits with -o json ('JSON kind: Name' in the epilog)")
    assert not problems, f"`{invocation} --help` lacks: " + "; ".join(problems)
