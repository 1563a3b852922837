"""The JSON Schemas of the -o json reports: one per kind we print, shipped, and they reject broken reports.

Every -o json output of the in-process tests is validated by the autouse fixture in tests/conftest.py.
"""

import json
import re
from pathlib import Path

import pytest

import kubectl_safety
from tests.schemas import SCHEMAS, problems
from tests.unit.cli_helpers import DEMO, DEMO_NOW, run_cli

PACKAGE = Path(kubectl_safety.__file__).parent
OFFLINE = ["--snapshot", DEMO, "--as-of", DEMO_NOW, "-o", "json"]


def printed_kinds() -> set:
    """Every ``"kind": "X"`` a report is built with in the package source (not the Kubernetes kinds it reads)."""
    kinds = set()
    for path in PACKAGE.rglob("*.py"):
        for line in path.read_text().splitlines():
            m = re.search(r'"kind": "([A-Z]\w+)", "apiVersion": (API_VERSION|"safety\.kubectl\.io/v1"|"v1", "items")', line)
            if m:
                kinds.add(m.group(1))
            m = re.search(r'report\["kind"\] = "(\w+)"', line)
            if m:
                kinds.add(m.group(1))
    return kinds


def test_every_printed_kind_has_a_schema():
    kinds = printed_kinds()
    assert {"DrainPlan", "DrainReport", "ForceDeleteAssessment", "DeleteReport", "Version", "List"} <= kinds
    assert sorted(k for k in kinds if not (SCHEMAS / f"{k}.json").exists()) == []


def test_schemas_are_shipped_as_package_data():
    cfg = Path("setup.cfg").read_text()
    assert "kubectl_safety = schemas/*.json" in cfg
    assert all(json.loads(p.read_text())["$id"] == p.name for p in SCHEMAS.glob("*.json"))


@pytest.mark.parametrize("args, breakage, where", [
    (["explain", "pod", "web-5d8f7c-0x0", "-n", "shop"], lambda r: r.pop("pod"), "(top)"),
    (["explain", "node", "node-a1"], lambda r: r.update(kind="NodeExplanation", conditions="Ready"), "conditions"),
    (["explain", "priorities"], lambda r: r["classes"][0].update(value="high"), "classes/0/value"),
    (["drain", "node-a1", "--dry-run", "--ignore-daemonsets"], lambda r: r.update(apiVersion="v2"), "apiVersion"),
    (["version"], lambda r: r.update(serverVersion=1), "serverVersion"),
    (["explain", "priorities"], lambda r: r["findings"][0].update(code="bottom-up-rollout"), "findings/0/code"),
], ids=["pod-without-pod", "node-conditions-not-a-list", "class-value-not-a-number", "wrong-api-version",
        "server-version-not-a-string", "finding-code-not-upper-snake"])
def test_a_broken_report_fails_its_schema(args, breakage, where):
    code, out, err = run_cli([*args, *OFFLINE])
    report = json.loads(out)
    assert problems(report) == [], "the unbroken report validates"
    breakage(report)
    found = problems(report)
    assert found and any(f": {where}:" in f for f in found), found


def test_an_unknown_kind_has_no_schema():
    assert problems({"kind": "Surprise"}) == [f"no schema for kind 'Surprise' in {SCHEMAS}"]


def test_a_wheel_would_contain_the_schemas(tmp_path):
    """setuptools' package_data glob matches every schema file (what the wheel ships)."""
    from setuptools.config.setupcfg import read_configuration

    data = read_configuration("setup.cfg")["options"]["package_data"]["kubectl_safety"]
    shipped = {p.name for pattern in data for p in PACKAGE.glob(pattern)}
    assert shipped == {p.name for p in SCHEMAS.glob("*.json")} and len(shipped) >= 10


def _generator():
    import importlib.util

    spec = importlib.util.spec_from_file_location("gen_schemas", Path("scripts/gen_schemas.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _properties(schema, path=""):
    """(path, name, property schema) of every property at every level of ``schema``."""
    for name, prop in (schema.get("properties") or {}).items():
        yield path, name, prop
        yield from _properties(prop, f"{path}/{name}")
    for key in ("items", "additionalProperties"):
        if isinstance(schema.get(key), dict):
            yield from _properties(schema[key], f"{path}/{key}")
    for i, alt in enumerate(schema.get("anyOf") or []):
        yield from _properties(alt, f"{path}/anyOf{i}")


def _nullable(prop) -> bool:
    types = prop.get("type")
    return types == "null" or isinstance(types, list) and "null" in types


# published values that are null though no typed plan field is Optional: the drain options' selector (none given),
# a PDB's own spec fields (as the API holds them) and its pods when not recounted, a stuck pod's owner (a bare pod),
# --surge-limit not given, and a surge's Optional fields published under other names (its workloads' autoscaler
# and pdb: Surge.hpa and Surge.pdb, published under "workloads", not "surges")
NULL_OUTSIDE_THE_PLANS = {"podSelector", "minAvailable", "maxUnavailable", "matchingPods", "owner", "surgeLimit",
                          "autoscaler", "pdb"}


@pytest.mark.parametrize("kind", ["DrainPlan", "RolloutPlan", "ClusterCheck", "RolloutReport"])
def test_a_typed_kind_is_nullable_only_where_its_plan_is_optional(kind):
    optional = _generator().nullable(kind)
    schema = json.loads((SCHEMAS / f"{kind}.json").read_text())
    under = lambda path: ([None] + [k for k in path.split("/")[1:] if k not in ("items", "additionalProperties")])[-1]
    assert sorted(f"{path}/{name}" for path, name, prop in _properties(schema) if _nullable(prop)
                  and (name, under(path)) not in optional and name not in NULL_OUTSIDE_THE_PLANS) == []


@pytest.mark.parametrize("samples, nullable, expected", [
    ([{"a": {"b": 1}}, {"a": {"b": 2}}], set(), "integer"),
    ([{"a": {"b": 1}}, {"a": {"b": None}}], set(), ["integer", "null"]),
    ([{"a": {"b": 1}}], {("b", "a")}, ["integer", "null"]),
    ([{"a": [{"b": "x"}]}], set(), "string"),
], ids=["never-null", "a-sample-held-null", "optional-in-the-plan", "in-a-list"])
def test_the_generator_allows_null_only_where_a_sample_or_the_plan_does(samples, nullable, expected):
    schema = _generator().infer(samples, nullable=frozenset(nullable))
    inner = schema["properties"]["a"]
    inner = inner.get("items", inner)
    assert inner["properties"]["b"]["type"] == expected and inner["required"] == ["b"]


# what a ClusterCheck's object may lack: the context (one cluster), a finding's reason (a gating one), a node's
# stuck pods (a Ready node), a risk's nodes (only REPLACEMENT_UNPLACEABLE has them)
CHECK_OPTIONAL = {("", "context"), ("", "error"), ("/findings/items", "reason"), ("/otherFindings/items", "reason"),
                  ("/nodes/items", "stateMessage"), ("/nodes/items", "stuckPods"),
                  ("/nodes/items/risks/items", "nodes"), ("/nodes/items/risks/items", "nodesNotListed"),
                  ("/assumes", "surge")}  # published only with --surge


@pytest.mark.parametrize("where", ["ClusterCheck", "List"])
def test_a_check_requires_its_fields_at_every_level(where):
    schema = json.loads((SCHEMAS / f"{where}.json").read_text())
    if where == "List":
        checks = [alt for alt in schema["properties"]["items"]["items"]["anyOf"]
                  if alt["properties"]["kind"] == {"const": "ClusterCheck"}]
        failed = [alt for alt in checks if "error" in alt.get("required", [])]
        assert len(checks) == 2 and len(failed) == 1, "a checked cluster, and one that could not be checked"
        assert sorted(failed[0]["required"]) == ["apiVersion", "context", "error", "kind"]
        schema = next(alt for alt in checks if alt not in failed)
    missing = []
    for path, name, prop in [("", "", schema), *_properties(schema)]:
        where_ = f"{path}/{name}" if name else ""
        for key in prop.get("properties") or {}:
            if key not in prop.get("required", []) and (where_, key) not in CHECK_OPTIONAL:
                missing.append(f"{where_}/{key}")
    assert missing == []
    assert {"source", "summary", "nodes", "findings"} <= set(schema["required"])


def _at(schema, path):
    for key in path.split("/"):
        schema = schema["items"] if key == "[]" else schema["properties"][key]
    return schema


@pytest.mark.parametrize("kind, path, values", [
    ("DrainPlan", "pods/[]/action", ["evict", "delete", "wait", "skip", "blocked"]),
    ("RolloutPlan", "batches/[]/drain/pods/[]/action", ["evict", "delete", "wait", "skip", "blocked"]),
    ("DrainPlan", "risks/[]/code", "RiskCode"),
    ("ClusterCheck", "nodes/[]/risks/[]/code", "RiskCode"),
    ("RolloutPlan", "causes/[]/code", ["PRECORDON"]),
    ("RolloutReport", "status", "RolloutStatus"),
    ("RolloutReport", "batches/[]/status", "RolloutStatus"),
    ("PreemptionPreview", "outcome", ["fits", "preempt", "unschedulable", "waiting", "not-eligible", "gated",
                                      "not-scheduled", "bound", "rejected"]),
    ("ClusterCheck", "nodes/[]/state", ["Ready", "NotReady", "Unknown", "Gone"]),
    ("ClusterCheck", "findings/[]/severity", ["error", "warning", "info"]),
], ids=lambda v: v if isinstance(v, str) else None)
def test_a_closed_set_is_an_enum(kind, path, values):
    from kubectl_safety.analysis.plans.common import RiskCode
    from kubectl_safety.engine.rollout_report import RolloutStatus

    named = {"RiskCode": [c.value for c in RiskCode], "RolloutStatus": [s.value for s in RolloutStatus]}
    values = named[values] if isinstance(values, str) else values
    prop = _at(json.loads((SCHEMAS / f"{kind}.json").read_text()), path)
    assert sorted(prop.get("enum", [])) == sorted(values) and prop["type"] == "string"
