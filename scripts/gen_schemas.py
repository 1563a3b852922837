#!/usr/bin/env python3
"""Derive kubectl_safety/schemas/KIND.json from -o json reports (a starting point; review the result).

Collect reports by running the tests with ``KUBECTL_SAFETY_SCHEMA_SAMPLES=DIR`` (see tests/schemas.py),
then ``python scripts/gen_schemas.py DIR``. Objects whose keys are always present become records
(those keys required, others allowed); objects with no key in common across samples become maps.
Values below the top may also be null; ``kind`` and ``apiVersion`` are constants. Hand edits (titles,
descriptions) are kept: a property already in the schema keeps its ``description``.

Usage: python scripts/gen_schemas.py SAMPLES_DIR
"""

import glob
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "kubectl_safety", "schemas")
CODE = {"type": "string", "pattern": "^[A-Z][A-Z0-9_]*$", "description": "A stable UPPER_SNAKE code."}
# objects keyed by data, not fields (a list under the same key, e.g. DrainPlan's nodes[], is not)
MAP_KEYS = {"labels", "annotations", "nodeSelector", "requests", "limits", "allocatable", "nodes"}
LIST_ITEM_KINDS = ("PreemptionPreview", "ClusterCheck")  # what a List holds: preemption -f, check --context
TYPES = {dict: "object", list: "array", str: "string", bool: "boolean", int: "integer", float: "number", type(None): "null"}


INT_OR_STRING = {"minAvailable", "maxUnavailable"}  # an integer or a percentage, whatever the samples held
ENUMS = {  # (property, the property it is under): its closed set of values, whatever the samples held
    ("severity", "findings"): ["error", "warning", "info"],
    ("severity", "reasons"): ["error", "warning", "info"],  # a drain plan's pods' reasons
    ("severity", "warnings"): ["error", "warning", "info"],
    ("severity", "risks"): ["error", "warning", "info"],  # a force delete's risks
    ("severity", "otherFindings"): ["error", "warning", "info"],
    ("reason", "otherFindings"): ["outside", "ignored"],
    ("failOn", "summary"): ["error", "warning", "none"],
    ("scope", "summary"): ["pool", "cluster"],
}
REQUIRED = {  # top-level keys every report of the kind has
    "ClusterCheck": ["kind", "apiVersion", "source", "takenAt", "assumes", "summary", "blockers", "nodes",
                     "findings", "otherFindings"],
    "RolloutPlan": ["kind", "apiVersion", "safe", "nodes", "done", "missing", "options", "risks", "causes",
                    "stopsAtBatch",
                    "leftNodes", "batches", "estimatedSeconds", "takenAt"],
}


def refine(schema, kind=None, under=None):
    """Closed sets as enums (keeping null where allowed) and the required top-level keys, in place
    (``under``: the property whose value or items ``schema`` describes)."""
    if kind in REQUIRED:
        schema["required"] = list(dict.fromkeys(schema.get("required", []) + REQUIRED[kind]))
    for key, value in (schema.get("properties") or {}).items():
        if (key, under) in ENUMS and "string" in (value.get("type") or []):
            value["enum"] = ENUMS[key, under] + ([None] if "null" in value["type"] else [])
        refine(value, under=key)
    for key in ("items", "additionalProperties"):
        if isinstance(schema.get(key), dict):
            refine(schema[key], under=under)
    for alt in schema.get("anyOf") or []:  # a List's items: a cluster that failed has only its error
        refine(alt, under=under)
    return schema


def infer(values, depth=0, key=None, item=False):
    """A JSON Schema accepting every value in ``values`` (``key``: the property they are the value of,
    ``item``: they are the items of its list)."""
    if key in INT_OR_STRING:
        return {"type": ["integer", "string", "null"]}
    values = list(values)
    kinds = {TYPES[type(v)] for v in values}
    if depth > 6:
        return {}
    schema = {}
    dicts = [v for v in values if isinstance(v, dict)]
    lists = [v for v in values if isinstance(v, list)]
    if dicts:
        common = set.intersection(*(set(d) for d in dicts))
        if common and (key not in MAP_KEYS or item):
            keys = list(dict.fromkeys(k for d in dicts for k in d))
            coded = key in ("findings", "risks", "reasons")  # finding, risk and reason codes are UPPER_SNAKE
            schema["properties"] = {k: CODE if coded and k == "code" else infer((d[k] for d in dicts if k in d), depth + 1, k)
                                    for k in keys}
            schema["required"] = [k for k in keys if k in common]
        elif any(dicts):
            schema["additionalProperties"] = infer((x for d in dicts for x in d.values()), depth + 1)
    if lists:
        items = [x for v in lists for x in v]
        if items:
            schema["items"] = infer(items, depth + 1, key, item=True)
    if kinds == {"null"}:
        return {}  # only ever null in the samples: no constraint
    if depth or kinds & {"string", "integer", "number", "boolean"}:
        kinds.add("null")  # any value below the top may be null (an optional owner, an unknown state)
    if "integer" in kinds and "number" in kinds:
        kinds.discard("integer")
    schema["type"] = sorted(kinds) if len(kinds) > 1 else next(iter(kinds))
    return schema


def main(argv) -> int:
    if len(argv) != 1:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    by_kind = {}
    for path in sorted(glob.glob(os.path.join(argv[0], "*.json"))):
        with open(path) as f:
            report = json.load(f)
        by_kind.setdefault(report.get("kind"), []).append(report)
        for item in report.get("items") or [] if report.get("kind") == "List" else []:
            by_kind.setdefault(item.get("kind"), []).append(item)
    os.makedirs(OUT, exist_ok=True)
    for kind, reports in sorted(by_kind.items()):
        schema = infer(reports)
        props = schema["properties"]
        props["kind"] = {"const": kind}
        if "apiVersion" in props:
            props["apiVersion"] = {"const": reports[0]["apiVersion"]}
        if kind == "List":  # preemption -f with several workloads, check with several contexts
            kinds = []
            for item_kind in LIST_ITEM_KINDS:
                item = infer(by_kind[item_kind])
                item["properties"]["kind"] = {"const": item_kind}
                kinds.append(item)
            props["items"] = {"type": "array", "items": {"anyOf": kinds}}
        refine(schema, kind)
        doc = {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": f"{kind}.json",
               "title": kind, "description": f"kubectl safety -o json output of kind {kind}.", **schema}
        path = os.path.join(OUT, f"{kind}.json")
        if os.path.exists(path):
            with open(path) as f:
                old = json.load(f)
            doc["description"] = old.get("description", doc["description"])
            for k, v in old.get("properties", {}).items():
                if "description" in v and k in props:
                    props[k]["description"] = v["description"]
        with open(path, "w") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")
        print(f"{path}: {len(reports)} sample(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
