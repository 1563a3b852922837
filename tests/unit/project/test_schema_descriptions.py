"""The published JSON is documented from one place: every schema property a runbook reads, and every
report's top-level property, has a description (scripts/schema_descriptions.yaml), and the README's field
lists are generated from the schemas (``python scripts/gen_schemas.py --describe``), so they cannot drift."""

import importlib.util
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
SCHEMAS = {p.stem: json.loads(p.read_text()) for p in sorted((ROOT / "kubectl_safety" / "schemas").glob("*.json"))}
_spec = importlib.util.spec_from_file_location("gen_schemas", ROOT / "scripts" / "gen_schemas.py")
gen_schemas = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gen_schemas)


def at(schema, path):
    """The property at a dotted path (arrays transparent), or None."""
    for name in path.split("."):
        schema = dict(gen_schemas.properties(schema)).get(name)
        if schema is None:
            return None
    return schema


def runbook_paths() -> set:
    """The report fields examples/*.sh read with -o jsonpath (inside {range .X[*]} as X.field)."""
    paths = set()
    for script in (ROOT / "examples").glob("*.sh"):
        text = script.read_text()
        for prefix, body in re.findall(r"\{range \.(\w+)\[\*\]\}(.*?)\{end\}", text):
            paths |= {f"{prefix}.{p}" for p in re.findall(r"\{\.([\w.]+)", body)}
            text = text.replace(body, "")
        paths |= {p.replace("[*]", "") for p in re.findall(r"\{\.([\w.\[\]*]+)\}", text)}
        paths |= {p.split("[*]")[0] for p in re.findall(r"\{range \.([\w.\[\]*]+)\}", text)}
    return paths


def test_the_readme_field_lists_are_generated_from_the_schemas():
    readme = (ROOT / "README.md").read_text()
    expected = gen_schemas.readme_with_field_lists(readme, SCHEMAS, gen_schemas.load_descriptions())
    assert readme == expected, "run `python scripts/gen_schemas.py --describe`"


def test_the_schemas_carry_the_descriptions_of_the_source():
    descriptions = gen_schemas.load_descriptions()
    for kind, schema in SCHEMAS.items():
        copy = json.loads(json.dumps(schema))
        assert gen_schemas.describe(copy, kind, descriptions) == schema, \
            f"{kind}: run `python scripts/gen_schemas.py --describe`"


def undescribed(schema, path=""):
    """Dotted paths of the properties under ``schema`` without a description (a report's kind and apiVersion
    are constants)."""
    out = []
    for name, prop in gen_schemas.properties(schema):
        if not prop.get("description") and (path or name not in ("kind", "apiVersion")):
            out.append(path + name)
        out += undescribed(prop, f"{path}{name}.")
    for alt in (schema.get("items") or {}).get("anyOf") or [] if isinstance(schema.get("items"), dict) else []:
        out += undescribed(alt)
    return out


@pytest.mark.parametrize("kind", SCHEMAS)
def test_every_property_of_every_report_has_a_description(kind):
    assert undescribed(SCHEMAS[kind]) == []


@pytest.mark.parametrize("kind, path", [("DrainPlan", "surge"), ("DrainPlan", "surge.peak"),
                                        ("DrainPlan", "surge.workloads"), ("RolloutPlan", "surgePeak"),
                                        ("RolloutPlan", "leftNodes"), ("RolloutPlan", "causes"),
                                        ("RolloutPlan", "causes.code"), ("ClusterCheck", "nodes.liftedBy"),
                                        ("DrainReport", "surge")])
def test_the_fields_a_runbook_relies_on_are_described(kind, path):
    assert (at(SCHEMAS[kind], path) or {}).get("description"), f"{kind} {path}"


def test_every_field_the_example_runbooks_read_is_described():
    paths = runbook_paths()
    assert {"blockers.object.kind", "leftNodes", "causes.code", "findings.code"} <= paths, paths
    for path in paths:
        found = [at(s, path) for s in SCHEMAS.values() if at(s, path) is not None]
        assert found and all(p.get("description") for p in found), path
