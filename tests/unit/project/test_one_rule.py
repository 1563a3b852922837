"""One copy of each rule: a second definition of a shared name, a second parser of timestamps,
durations or label selectors, a second DoNotSchedule default, a second list of the kinds without a
scale subresource or a second -1 -> None reading of --grace-period fails here (read from the source)."""

import ast
import os
from collections import Counter

import pytest

ROOT = os.path.join(os.path.dirname(__file__), "..", "..", "..", "kubectl_safety")


def _modules() -> dict:
    """{path relative to the package: its syntax tree}."""
    out = {}
    for folder, _, files in os.walk(ROOT):
        for name in files:
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                with open(path) as f:
                    out[os.path.relpath(path, ROOT)] = ast.parse(f.read(), path)
    return out


MODULES = _modules()


def _nodes(kind):
    for path, tree in MODULES.items():
        for node in ast.walk(tree):
            if isinstance(node, kind):
                yield path, node


def _docstrings() -> set:
    """ids of the string constants that are docstrings."""
    out = set()
    for _, node in _nodes((ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
        body = node.body
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            out.add(id(body[0].value))
    return out


DEFINED = Counter(node.name for _, node in _nodes((ast.ClassDef, ast.FunctionDef)) if node.col_offset == 0)

# name: what it is the one copy of
SHARED = {
    "Severity": "how much a reason or finding matters (every plan and report)",
    "Finding": "an observation with a stable code (check, explain, preemption, rebalance, delete)",
    "BudgetSummary": "a PDB as every report shows it",
    "RiskList": "the risks a planner collects, typed",
    "LabelSelector": "the label selector parser (objects and kubectl's -l)",
    "selector_query": "a selector as the API's labelSelector parameter",
    "parse_time": "the timestamp parser",
    "parse_duration": "the duration parser",
    "labelled": "the pod label index",
    "is_hard": "whether a spread constraint is DoNotSchedule",
    "desired_healthy": "a PDB's desiredHealthy",
    "never_evicts": "why a PDB never lets an eviction pass",
    "tolerates_cordon": "whether a pod tolerates the cordon",
    "exceeded": "which quota resources more pods exceed",
    "accepted_risks": "--accept-risk's reading",
}


@pytest.mark.parametrize("name", sorted(SHARED))
def test_each_shared_rule_is_defined_once(name):
    assert DEFINED[name] == 1, f"{name} ({SHARED[name]}) is defined {DEFINED[name]} times"


@pytest.mark.parametrize("suffix", ["Severity", "Finding"])
def test_no_second_class_of_severities_or_findings(suffix):
    classes = sorted(f"{path}:{node.name}" for path, node in _nodes(ast.ClassDef) if node.name.endswith(suffix))
    assert len(classes) == 1, classes


def _calls(attribute):
    return sorted(f"{path}:{node.lineno}" for path, node in _nodes(ast.Call)
                  if isinstance(node.func, ast.Attribute) and node.func.attr == attribute)


def test_timestamps_are_parsed_by_parse_time_only():
    assert _calls("strptime") == []
    assert [p.split(":")[0] for p in _calls("fromisoformat")] == [os.path.join("model", "meta.py")]


def test_label_selector_objects_are_read_in_model_selectors_only():
    reads = []
    for path, node in _nodes((ast.Call, ast.Subscript)):
        key = (node.args[0] if isinstance(node, ast.Call) and node.args and isinstance(node.func, ast.Attribute)
               and node.func.attr == "get" else node.slice if isinstance(node, ast.Subscript) else None)
        if isinstance(key, ast.Constant) and key.value == "matchLabels":
            reads.append(f"{path}:{node.lineno}")
    assert [r.split(":")[0] for r in reads] == [os.path.join("model", "selectors.py")], reads


def test_durations_are_parsed_in_model_duration_only():
    parsers = sorted(f"{path}:{node.name}" for path, node in _nodes(ast.FunctionDef)
                     if "duration" in node.name and ("parse" in node.name or "seconds" in node.name))
    assert [p.split(":")[0] for p in parsers] == [os.path.join("model", "duration.py")], parsers


def test_the_do_not_schedule_default_is_written_once():
    docs = _docstrings()
    uses = sorted(path for path, node in _nodes(ast.Constant) if node.value == "DoNotSchedule" and id(node) not in docs)
    # topology.DO_NOT_SCHEDULE, and the schema's list of the values the API accepts
    assert uses == [os.path.join("analysis", "topology.py"), os.path.join("model", "schema.py")], uses


def test_the_kinds_without_a_scale_subresource_are_listed_once():
    lists = []
    for path, node in _nodes((ast.Tuple, ast.List, ast.Set, ast.Dict)):
        words = {n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)}
        if {"DaemonSet", "Job", "CronJob"} <= words and not words & {"Deployment", "ReplicaSet", "StatefulSet"}:
            lists.append(f"{path}:{node.lineno}")
    assert [x.split(":")[0] for x in lists] == [os.path.join("model", "constants.py")], lists


def test_grace_period_minus_one_is_read_as_none_once():
    """``x if x >= 0 else None``: --grace-period's -1 (each pod's own) as the API takes it."""
    found = sorted(f"{path}:{node.lineno}" for path, node in _nodes(ast.IfExp)
                   if isinstance(node.orelse, ast.Constant) and node.orelse.value is None
                   and isinstance(node.test, ast.Compare) and isinstance(node.test.ops[0], ast.GtE)
                   and isinstance(node.test.comparators[0], ast.Constant) and node.test.comparators[0].value == 0)
    assert len(found) == 1, found


# the scheduler's parsed affinity term, shared by the filters and the scorers until filters.py is split
SHARED_PRIVATE = {(os.path.join("analysis", "scheduling", "score.py"), "_Term")}


def test_no_module_borrows_another_modules_private_helpers():
    """A rule another module needs is made public where it lives (as admission's quota rule), not copied
    around its private helpers."""
    private = sorted((path, alias.name) for path, node in _nodes(ast.ImportFrom)
                     if (node.module or "").startswith("kubectl_safety") for alias in node.names
                     if alias.name.startswith("_") and not alias.name.startswith("__"))
    assert set(private) <= SHARED_PRIVATE, private
