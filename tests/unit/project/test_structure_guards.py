"""Structural rules a tool can check, over the source of the upper layers.

- One path to the cluster: outside ``cluster/`` nothing sends an HTTP request (``.request(...)``), imports
  a transport or client library, or reads an HTTP status code (a comparison with an integer 100-599).
- The engine does what the plan says: it keys no behaviour on a reason code (``p.has("CODE")``, a
  comparison with a ``.code``, a ``..._CODES`` list); the plan's typed fields say it.
- Reports own their exit code: no command in ``cli/commands/`` chooses one (names ``ExitCode``, or returns
  an integer other than 0 or a choice between integers); it returns what ``cli/report.py`` or its view maps
  its report or plan to. Outside ``cli/report.py``, ``cli/main.py`` and the views no cli module names one.
- Each command that prints a JSON kind has its view, ``cli/views/<module>.py`` (its text, its serializers,
  its exit codes), and no typed class has a serializer in two views.
- Records, not generated dataclasses: no module decorates a class with ``dataclasses.dataclass`` (``record.py``
  builds on it); ``record`` makes the same classes without compiling six functions each at import.
- The engine owns read -> plan -> act: a command that changes the cluster (it imports the engine) calls no
  planner (``plan_*``, ``find_workloads``) and resolves no selector against nodes (``matching_nodes``); its
  ``engine/<verb>_planner.py`` does. A read-only command may call its pure planner directly.
"""

import ast
import importlib
from pathlib import Path

import pytest

import kubectl_safety
from kubectl_safety.cli import registry

PACKAGE = Path(kubectl_safety.__file__).parent
ABOVE_CLUSTER = ("engine", "cli")
TRANSPORTS = ("urllib3", "http.client", "requests", "kubernetes", "kubectl_safety.cluster.transport")


def sources(*folders):
    for folder in folders:
        for path in sorted((PACKAGE / folder).rglob("*.py")):
            yield path.relative_to(PACKAGE).as_posix(), ast.parse(path.read_text(), str(path))


def _is_status(node) -> bool:
    """An integer constant that reads as an HTTP status, or a tuple/list/set of them."""
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return bool(node.elts) and all(_is_status(e) for e in node.elts)
    return isinstance(node, ast.Constant) and type(node.value) is int and 100 <= node.value <= 599


def request_violations(name, tree) -> list:
    out = []
    for node in ast.walk(tree):
        where = f"{name}:{getattr(node, 'lineno', 0)}"
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "request":
            out.append(f"{where}: sends a request (.request): use cluster/client.py")
        elif isinstance(node, ast.Import):
            out += [f"{where}: imports {a.name}" for a in node.names if a.name.startswith(TRANSPORTS)]
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith(TRANSPORTS):
            out.append(f"{where}: imports from {node.module}")
        elif isinstance(node, ast.Compare) and any(_is_status(c) for c in [node.left, *node.comparators]):
            out.append(f"{where}: compares an HTTP status code: read the Outcome's Result")
    return out


@pytest.mark.parametrize("name,tree", list(sources(*ABOVE_CLUSTER)), ids=lambda x: x if isinstance(x, str) else "")
def test_no_request_or_status_code_outside_cluster(name, tree):
    assert request_violations(name, tree) == []


@pytest.mark.parametrize("code,found", [
    ("status, body = self.connection.request('GET', path)", True),
    ("if status == 409: pass", True),
    ("ok = status in (200, 201)", True),
    ("if outcome.status >= 300: pass", True),
    ("from kubernetes import config", True),
    ("import urllib3", True),
    ("if outcome.result is Result.CONFLICT: pass", False),
    ("if len(text) > 1000: pass", False),
    ("outcome = self.client.get('leases', ns, name)", False),
])
def test_the_request_guard_finds_each_way_to_the_api(code, found):
    assert bool(request_violations("x.py", ast.parse(code))) is found


def exit_code_violations(name, tree) -> list:
    out = []
    for node in ast.walk(tree):
        where = f"{name}:{getattr(node, 'lineno', 0)}"
        if isinstance(node, ast.Name) and node.id == "ExitCode" or \
                isinstance(node, ast.alias) and node.name == "ExitCode":
            out.append(f"{where}: chooses an ExitCode: return the report's own (cli/report.py)")
        elif isinstance(node, ast.Return) and _chosen_int(node.value):
            out.append(f"{where}: returns a chosen exit code: return the report's own (cli/report.py)")
    return out


def _chosen_int(node) -> bool:
    if isinstance(node, ast.IfExp):
        return _chosen_int(node.body) or _chosen_int(node.orelse) or _is_int(node.body) or _is_int(node.orelse)
    return _is_int(node) and node.value != 0


def _is_int(node) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) is int


@pytest.mark.parametrize("name,tree", list(sources("cli/commands")), ids=lambda x: x if isinstance(x, str) else "")
def test_no_exit_code_is_chosen_in_a_command(name, tree):
    assert exit_code_violations(name, tree) == []


@pytest.mark.parametrize("code,found", [
    ("from kubectl_safety.cli.report import ExitCode", True),
    ("def f():\n    return ExitCode.OK if plan.safe else ExitCode.UNSAFE", True),
    ("def f():\n    return 0 if ok else 3", True),
    ("def f():\n    return 3", True),
    ("def f():\n    return code if code != report.OK else report.UNSAFE", False),
    ("def f():\n    return verdict(plan)", False),
    ("def f():\n    return 0", False),
])
def test_the_exit_code_guard_finds_each_way_to_choose_one(code, found):
    assert bool(exit_code_violations("x.py", ast.parse(code))) is found


def reason_code_violations(name, tree) -> list:
    out = []
    for node in ast.walk(tree):
        where = f"{name}:{getattr(node, 'lineno', 0)}"
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "has":
            out.append(f"{where}: keys behaviour on a reason code (.has): read the plan's typed field")
        elif isinstance(node, ast.Compare) and any(isinstance(x, ast.Attribute) and x.attr == "code"
                                                   for x in [node.left, *node.comparators]):
            out.append(f"{where}: compares a reason code: read the plan's typed field")
        elif isinstance(node, ast.Name) and node.id.endswith("_CODES"):
            out.append(f"{where}: uses a list of reason codes ({node.id}): read the plan's typed field")
    return out


@pytest.mark.parametrize("name,tree", list(sources("engine")), ids=lambda x: x if isinstance(x, str) else "")
def test_the_engine_keys_nothing_on_reason_codes(name, tree):
    assert reason_code_violations(name, tree) == []


@pytest.mark.parametrize("code,found", [
    ("done = entry.has('WAIT_COMPLETED')", True),
    ("x = [r for r in p.reasons if r.code not in FILTER_CODES]", True),
    ("ok = r.code == 'PDB_WAIT'", True),
    ("done = entry.waits_for is WaitFor.COMPLETION", False),
    ("codes = sorted({r.code.value for r in plan.unaccepted()})", False),
])
def test_the_reason_code_guard_finds_each_way_to_read_one(code, found):
    assert bool(reason_code_violations("x.py", ast.parse(code))) is found


def acts(tree) -> bool:
    """A command that changes the cluster: it imports the engine."""
    return any(isinstance(node, ast.ImportFrom) and (node.module or "").startswith("kubectl_safety.engine")
               or isinstance(node, ast.Import) and any(a.name.startswith("kubectl_safety.engine") for a in node.names)
               for node in ast.walk(tree))


def planner_violations(name, tree) -> list:
    """A command that acts calls no planner (``plan_*``, ``find_workloads``) and resolves no selector against
    nodes (``matching_nodes``): the engine reads and plans (it plans again while acting)."""
    if not acts(tree):
        return []
    out = []
    for node in ast.walk(tree):
        called = node.func if isinstance(node, ast.Call) else None
        called = called.id if isinstance(called, ast.Name) else called.attr if isinstance(called, ast.Attribute) \
            else None
        if called is None:
            continue
        where = f"{name}:{node.lineno}"
        if called == "matching_nodes":
            out.append(f"{where}: resolves a selector against nodes: the engine's planner does")
        elif called.startswith("plan_") or called == "find_workloads":
            out.append(f"{where}: calls the planner {called}: the engine's planner does (engine/*_planner.py)")
    return out


@pytest.mark.parametrize("name,tree", list(sources("cli/commands")), ids=lambda x: x if isinstance(x, str) else "")
def test_a_command_that_acts_gets_its_plan_from_the_engine(name, tree):
    assert planner_violations(name, tree) == []


@pytest.mark.parametrize("code,found", [
    ("from kubectl_safety.engine.rollout import Rollout\nplan = plan_rollout(snap, pool, options, now)", True),
    ("import kubectl_safety.engine.drain\nsnap, plan = rollout_plan.plan_drain(snap, nodes, options, now)", True),
    ("from kubectl_safety.engine.rollout import Rollout\npool = matching_nodes(sel, snap.nodes, text)", True),
    ("from kubectl_safety.engine.rebalancer import Rebalancer\nw = find_workloads(snap, ns, sel)", True),
    ("from kubectl_safety.engine.rollout_planner import RolloutPlanner\nplanned = planner.plan(snap, pool, o)", False),
    ("from kubectl_safety.analysis.check import check\nnodes = matching_nodes(sel, snap.nodes)", False),
    ("from kubectl_safety.analysis.explain import explain_pod\nreport = explain_pod(snap, pod, now)", False),
])
def test_the_planner_guard_finds_each_way_a_command_plans_itself(code, found):
    assert bool(planner_violations("x.py", ast.parse(code))) is found


def _outside_the_views(name) -> bool:
    return not name.startswith("cli/views/") and name not in ("cli/report.py", "cli/main.py")


@pytest.mark.parametrize("name,tree", [(n, t) for n, t in sources("cli") if _outside_the_views(n)],
                         ids=lambda x: x if isinstance(x, str) else "")
def test_no_exit_code_is_named_outside_the_report_and_the_views(name, tree):
    assert [v for v in exit_code_violations(name, tree) if "chooses an ExitCode" in v] == []


# -- each command's view ---------------------------------------------------------------------------------

VIEWS = sorted(p.stem for p in (PACKAGE / "cli" / "views").glob("*.py") if p.stem != "__init__")


def missing_views(commands, views) -> list:
    """The top-level commands that print a JSON kind (theirs or a subcommand's) and have no view module."""
    out = []
    for c in commands:
        family = [d for d in commands if d.path == c.path or d.path.startswith(c.path + " ")]
        kinds = [k for d in family for k in d.kinds]
        if c.module is not None and kinds and c.module not in views:
            out.append(f"{c.path}: prints {', '.join(kinds)} but has no cli/views/{c.module}.py")
    return out


def test_every_command_that_prints_a_kind_has_its_view():
    assert missing_views(registry.COMMANDS, VIEWS) == []


@pytest.mark.parametrize("commands, missing", [
    ((registry.Command("audit", "audit", kinds=("AuditReport",)),),
     ["audit: prints AuditReport but has no cli/views/audit.py"]),
    ((registry.Command("audit", "audit"), registry.Command("audit node", kinds=("NodeAudit",))),
     ["audit: prints NodeAudit but has no cli/views/audit.py"]),
    ((registry.Command("audit", "audit"),), []),
    ((registry.Command("why", "why"), registry.Command("why pod", kinds=("PodPostMortem",))), []),
])
def test_the_view_guard_names_the_command_without_one(commands, missing):
    assert missing_views(commands, VIEWS) == missing


def test_no_typed_class_has_a_serializer_in_two_views():
    from kubectl_safety.cli import published

    owners = {name: ["cli/published.py"] for name in published.SERIALIZERS}
    for view in VIEWS:
        for name in getattr(importlib.import_module(f"kubectl_safety.cli.views.{view}"), "SERIALIZERS", {}):
            owners.setdefault(name, []).append(f"cli/views/{view}.py")
    assert {name: where for name, where in owners.items() if len(where) > 1} == {}
    assert set(owners) == set(published.serializers())


def dataclass_violations(name, tree) -> list:
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            for d in node.decorator_list:
                target = d.func if isinstance(d, ast.Call) else d
                if (target.id if isinstance(target, ast.Name) else getattr(target, "attr", None)) == "dataclass":
                    out.append(f"{name}:{node.lineno}: {node.name} is a @dataclass: use kubectl_safety.record.record")
    return out


@pytest.mark.parametrize("name,tree", [s for s in sources(".") if s[0] != "record.py"],
                         ids=lambda x: x if isinstance(x, str) else "")
def test_no_class_is_a_generated_dataclass(name, tree):
    assert dataclass_violations(name, tree) == []


@pytest.mark.parametrize("code,found", [
    ("@dataclass\nclass A:\n    x: int", True),
    ("@dataclass(frozen=True, slots=True)\nclass A:\n    x: int", True),
    ("@dataclasses.dataclass(frozen=True)\nclass A:\n    x: int", True),
    ("@record\nclass A:\n    x: int", False),
    ("@record(frozen=False, slots=False)\nclass A:\n    x: int", False),
])
def test_the_dataclass_guard_finds_each_way_to_declare_one(code, found):
    assert bool(dataclass_violations("x.py", ast.parse(code))) is found
