"""One declaration per command (cli/registry.py): every behaviour derived from it holds for every command.

TYPE/NAME in every kubectl spelling where a command takes that resource, subcommands named by any spelling,
-A where declared (and its reason elsewhere), the JSON kinds and their schemas, and name completion.
"""

import json
import re
from pathlib import Path

import click
import pytest

import kubectl_safety
from kubectl_safety.cli import registry
from kubectl_safety.cli.completion import answer
from kubectl_safety.cli.main import cli
from tests.unit.cli_helpers import DEMO, DEMO_NOW, run_cli

OFFLINE = ["--snapshot", DEMO, "--as-of", DEMO_NOW]
SCHEMAS = Path(kubectl_safety.__file__).parent / "schemas"
# a name of each resource in the demo dump (namespace shop)
DEMO_NAMES = {registry.POD: "db-0", registry.NODE: "node-a1", registry.DEPLOYMENT: "web",
              registry.STATEFULSET: "db", registry.REPLICASET: "web-5d8f7c"}
# how to run each command offline; NAME is replaced by the argument under test
INVOCATIONS = {
    "explain pod": ["explain", "pod", "NAME", "-n", "shop"],
    "explain node": ["explain", "node", "NAME"],
    "explain priorities": ["explain", "priorities"],
    "why pod": ["why", "pod", "NAME", "-n", "shop"],
    "why node": ["why", "node", "NAME"],
    "drain": ["drain", "NAME", "--dry-run", "--ignore-daemonsets"],
    "rollout": ["rollout", "NAME", "--dry-run", "--ignore-daemonsets"],
    "preemption": ["preemption", "NAME", "-n", "shop"],
    "delete pod": ["delete", "pod", "NAME", "-n", "shop", "--force"],
    "rebalance": ["rebalance", "NAME", "-n", "shop", "--dry-run"],
    "check": ["check"],
    "version": ["version"],
    "snapshot": ["snapshot"],
    "options": ["options"],
    "schema": ["schema"],
    "completion": ["completion", "bash"],
}
GROUPS = {"explain", "delete", "why"}


def tree(cmd=cli, path=()):
    """Every command path of the click tree (``explain pod``), groups included."""
    out = []
    if isinstance(cmd, click.Group):
        ctx = click.Context(cmd)
        for name in cmd.list_commands(ctx):
            sub = cmd.get_command(ctx, name)
            out += [" ".join(path + (name,))] + tree(sub, path + (name,))
    return out


def leaf(c) -> bool:
    return c.path not in GROUPS and c.path != "help"


def run(path, arg="", *extra):
    return run_cli([arg if a == "NAME" else a for a in INVOCATIONS[path]] + list(extra) + OFFLINE)


def test_every_command_is_declared_once_and_every_declaration_is_a_command():
    assert sorted(tree()) == sorted(c.path for c in registry.COMMANDS)
    assert len(registry.BY_PATH) == len(registry.COMMANDS)
    assert set(INVOCATIONS) == {c.path for c in registry.COMMANDS if leaf(c)}, "add the new command to INVOCATIONS"


def spelled_names():
    """(command, TYPE/NAME as written, the canonical argument) for every command, resource and spelling."""
    cases = []
    for c in registry.COMMANDS:
        for r in c.takes:
            canonical = f"{r.name}/{DEMO_NAMES[r]}" if c.typed else DEMO_NAMES[r]
            for spelling in r.spellings + (r.spellings[1].capitalize(),):
                cases.append(pytest.param(c.path, f"{spelling}/{DEMO_NAMES[r]}", canonical,
                                          id=f"{c.path}-{spelling}/"))
    return cases


@pytest.mark.parametrize("path, written, canonical", spelled_names())
def test_type_slash_name_in_every_spelling_for_every_command_that_takes_it(path, written, canonical):
    expected = run(path, canonical)
    assert expected[0] in (0, 3) and expected[1], expected
    assert run(path, written) == expected


def test_rollout_accepts_node_slash_name():
    code, out, err = run("rollout", "node/node-a1")
    assert (code, out, err) == run("rollout", "node-a1") and code == 0, err
    assert "not found" not in err


@pytest.mark.parametrize("path", [c.path for c in registry.COMMANDS if c.takes and not c.typed])
def test_a_name_of_a_type_the_command_does_not_take_is_a_usage_error(path):
    other = next(r for r in registry.RESOURCES if r not in registry.command(path).takes)
    code, out, err = run(path, f"{other.spellings[-1]}/x")
    assert code == 2 and out == "" and f"'{path}' takes" in err, err


@pytest.mark.parametrize("path, spelling", [
    pytest.param(c.path, s, id=f"{c.path}-as-{s}") for c in registry.COMMANDS if " " in c.path
    for r in [registry.resource(c.path.split()[-1])] if r for s in r.spellings[1:] + (r.spellings[1].capitalize(),)])
def test_explain_pods_and_every_spelling_of_a_resource_subcommand(path, spelling):
    """``explain pods NAME``, ``explain no NAME``, ``delete po NAME``: as kubectl spells its resources."""
    group, word = path.split()
    name = DEMO_NAMES[registry.resource(word)]
    args = INVOCATIONS[path]
    expected = run_cli([name if a == "NAME" else a for a in args] + OFFLINE)
    spelled = [spelling if a == word else name if a == "NAME" else a for a in args]
    assert run_cli(spelled + OFFLINE) == expected
    assert expected[0] in (0, 3) and expected[1]
    code, out, _ = run_cli(["help", group, spelling])
    assert code == 0 and f"Usage: kubectl safety {path} " in out


@pytest.mark.parametrize("declared", [c for c in registry.COMMANDS if leaf(c)], ids=lambda c: c.path)
def test_all_namespaces_where_declared_and_its_reason_elsewhere(declared):
    code, out, err = run(declared.path, DEMO_NAMES.get(next(iter(declared.takes), None), ""), "-A")
    refused = f"-A/--all-namespaces is not supported by '{declared.path}'"
    if declared.all_namespaces is True:
        assert refused not in err
    else:
        assert (code, out, err) == (2, "", f"error: {refused}: {declared.all_namespaces}\n")


def test_every_declared_kind_has_a_schema_and_every_schema_a_kind():
    declared = {k for c in registry.COMMANDS for k in c.kinds}
    assert declared == set(registry.OUTPUTS) == {p.stem for p in SCHEMAS.glob("*.json")}
    for kind, output in registry.OUTPUTS.items():
        assert (SCHEMAS.parent / output.schema).is_file(), kind


@pytest.mark.parametrize("declared", [c for c in registry.COMMANDS if c.kinds], ids=lambda c: c.path)
def test_the_json_kinds_a_command_prints_are_the_declared_ones(declared):
    code, out, err = run_cli(["help", *declared.path.split()])
    named = set(re.findall(r"\b([A-Z]\w+)\b", re.search(r"JSON kind: (.*)", out).group(1)))
    assert named and named <= set(declared.kinds), (named, declared.kinds)
    code, out, err = run(declared.path, DEMO_NAMES.get(next(iter(declared.takes), None), "node-a1"), "-o", "json")
    if out:
        assert json.loads(out)["kind"] in declared.kinds


def completions(*words):
    return [line.split("\t")[0] for line in answer([*OFFLINE[:2], "-n", "shop", *words]).splitlines()[:-1]]


@pytest.mark.parametrize("path, spelling", [pytest.param(c.path, s, id=f"{c.path}-{s}/")
                                            for c in registry.COMMANDS for r in c.takes for s in r.spellings])
def test_names_complete_as_type_slash_name_in_the_spelling_typed(path, spelling):
    """``drain no/<TAB>``, ``delete pod po/<TAB>``, ``rebalance deploy/<TAB>``: the names the bare word
    completes to, in the spelling typed (a ReplicaSet a Deployment owns is not offered)."""
    declared = registry.command(path)
    r = next(r for r in declared.takes if spelling in r.spellings)
    words = path.split()
    bare = completions(*words, "")
    if declared.typed:
        bare = [n.partition("/")[2] for n in bare if n.partition("/")[0] == r.kind.lower()]
    expected = [f"{spelling}/{n}" for n in bare]
    assert completions(*words, f"{spelling}/") == expected
    assert expected or r is registry.REPLICASET
    if r in (registry.NODE, registry.POD):
        assert f"{spelling}/{DEMO_NAMES[r]}" in expected


@pytest.mark.parametrize("path, spelling", [
    pytest.param(c.path, s, id=f"{c.path}-as-{s}") for c in registry.COMMANDS if " " in c.path
    for r in [registry.resource(c.path.split()[-1])] if r for s in r.spellings])
def test_names_complete_after_every_spelling_of_a_resource_subcommand(path, spelling):
    group, word = path.split()
    name = DEMO_NAMES[registry.resource(word)]
    assert name in completions(group, spelling, name[:3])


@pytest.mark.parametrize("path, spelling", [
    pytest.param(c.path, s, id=f"{c.path.replace(' ', '-')}/-as-{s}/") for c in registry.COMMANDS if " " in c.path
    for r in [registry.resource(c.path.split()[-1])] if r for s in r.spellings])
def test_type_slash_name_completes_in_place_of_a_resource_subcommand(path, spelling):
    """``delete pod/<TAB>``, ``explain no/<TAB>``: what ``delete pod <TAB>`` offers, as TYPE/NAME."""
    group, word = path.split()
    expected = [f"{spelling}/{n}" for n in completions(group, word, "")]
    assert expected and completions(group, f"{spelling}/") == expected

