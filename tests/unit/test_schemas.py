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
