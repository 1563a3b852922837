#!/usr/bin/env python3
"""Derive kubectl_safety/schemas/KIND.json from -o json reports (a starting point; review the result).

Collect reports by running the tests with ``KUBECTL_SAFETY_SCHEMA_SAMPLES=DIR`` (see tests/schemas.py),
then ``python scripts/gen_schemas.py DIR``. Objects whose keys are always present become records
(those keys required, at every level, others allowed); objects with no key in common across samples become
maps. A value may be null only where a sample held null or, for a typed kind, where its plan's dataclass field
is Optional and published as such. Closed sets (the typed plans' enums, severities, outcomes) are enums;
``kind`` and ``apiVersion`` are constants. Hand edits (titles, descriptions) are kept: a property already in
the schema keeps its ``description``, and a described property no sample held (or held only as null) stays.
``scripts/regen-schemas`` collects the samples and runs this.

Usage: python scripts/gen_schemas.py SAMPLES_DIR
"""

import dataclasses
import typing

import glob
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
from kubectl_safety.analysis import explanations, plans  # noqa: E402  (the typed reports: enums, Optional fields)
from kubectl_safety.engine import delete_report, rollout_report  # noqa: E402
from kubectl_safety.engine.rollout import STATES as ROLLOUT_NODE_STATES  # noqa: E402

OUT = os.path.join(ROOT, "kubectl_safety", "schemas")
CODE = {"type": "string", "pattern": "^[A-Z][A-Z0-9_]*$", "description": "A stable UPPER_SNAKE code."}
# objects keyed by data, not fields (a list under the same key, e.g. DrainPlan's nodes[], is not)
MAP_KEYS = {"labels", "annotations", "nodeSelector", "requests", "limits", "allocatable", "nodes"}
LIST_ITEM_KINDS = ("PreemptionPreview", "ClusterCheck")  # what a List holds: preemption -f, check --context
TYPES = {dict: "object", list: "array", str: "string", bool: "boolean", int: "integer", float: "number", type(None): "null"}


INT_OR_STRING = {"minAvailable", "maxUnavailable"}  # an integer or a percentage, whatever the samples held
NODE_STATES = ["Ready", "NotReady", "Unknown", "Gone"]  # analysis/node_health.py's
PLANS = ("DrainPlan", "RolloutPlan", "ClusterCheck")  # kinds that embed typed drain plans or their risks
ENUMS = {  # (property, the property it is under): its closed set of values, whatever the samples held
    ("severity", "findings"): ["error", "warning", "info"],
    ("severity", "reasons"): ["error", "warning", "info"],  # a drain plan's pods' reasons
    ("severity", "warnings"): ["error", "warning", "info"],
    ("severity", "risks"): ["error", "warning", "info"],  # a force delete's risks
    ("severity", "otherFindings"): ["error", "warning", "info"],
    ("reason", "otherFindings"): ["outside", "ignored"],
    ("failOn", "summary"): ["error", "warning", "none"],
    ("scope", "summary"): ["pool", "cluster"],
    ("state", "state"): NODE_STATES,  # explain node
    ("state", "nodeState"): NODE_STATES,  # explain pod
    ("state", "node"): NODE_STATES + ["Unscheduled", "Unreadable"],  # a force delete's node (force_delete.py)
}
KIND_ENUMS = {  # (kinds, property, the property it is under): a closed set in those kinds only
    (PLANS, "action", "pods"): [a.value for a in plans.Action],
    (PLANS, "code", "risks"): [c.value for c in plans.RiskCode],
    (("RolloutPlan",), "code", "causes"): [c.value for c in plans.CauseCode],
    (("RolloutReport",), "status", None): [s.value for s in rollout_report.RolloutStatus],
    (("RolloutReport",), "status", "batches"): [s.value for s in rollout_report.RolloutStatus],
    (("RolloutReport",), "status", "drain"): ["drained", "blocked", "timeout", "failed", "interrupted"],
    (("RolloutReport",), "state", "nodes"): list(ROLLOUT_NODE_STATES),
    (("ClusterCheck",), "state", "nodes"): NODE_STATES,
    (("PreemptionPreview",), "outcome", None): ["fits", "preempt", "unschedulable", "waiting", "not-eligible",
                                                       "gated", "not-scheduled"],  # analysis/preemption.py's
    (("PreemptionPreview",), "outcome", "placements"): ["fits", "preempt", "unschedulable", "waiting",
                                                               "not-eligible", "gated", "not-scheduled"],
    (("PodExplanation",), "computed", "qos"): [c.value for c in explanations.QosClass],
    (("PodExplanation",), "class", "containers"): [c.value for c in explanations.QosClass],
    (("PodExplanation",), "source", "priority"): [s.value for s in explanations.PrioritySource],
    (("PodExplanation",), "probe", "probeFailure"): [p.value for p in explanations.ProbeKind],
    (("ForceDeleteAssessment", "DeleteReport"), "action", "pods"): [a.value for a in delete_report.DeleteAction],
}
TYPED = {"DrainPlan": plans.DrainPlan, "RolloutPlan": plans.RolloutPlan, "ClusterCheck": plans.ClusterCheck,
         "RolloutReport": rollout_report.RolloutReport, "PreemptionPreview": plans.PreemptionPreview,
         "RebalancePlan": plans.RebalancePlan}
# Optional fields that cli/published.py leaves out, spreads or dereferences rather than printing null
OMITTED_WHEN_NONE = {"figures", "nodes", "nodesNotListed", "reason", "drain", "exec", "ready", "uncordoned", "plan",
                     "serverDryRun", "context", "error", "summary", "assumes", "stuckPods", "scope"}


def camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(w.capitalize() for w in rest)


def optional_fields(cls, under=None, seen=frozenset()) -> set:
    """(published name, the property it is under) of each Optional field of ``cls`` (published under ``under``)
    and of every dataclass its fields hold."""
    if cls in seen:
        return set()
    out = set()
    for name, hint in typing.get_type_hints(cls).items():
        args = typing.get_args(hint)
        if type(None) in args:
            out.add((camel(name), under))
        for t in (hint, *args, *(a for x in args for a in typing.get_args(x))):
            if dataclasses.is_dataclass(t):
                out |= optional_fields(t, camel(name), seen | {cls})
    return out
REQUIRED = {  # top-level keys every report of the kind has
    "ClusterCheck": ["kind", "apiVersion", "source", "takenAt", "assumes", "summary", "blockers", "nodes",
                     "findings", "otherFindings"],
    "RolloutPlan": ["kind", "apiVersion", "safe", "nodes", "done", "missing", "options", "risks", "causes",
                    "stopsAtBatch",
                    "leftNodes", "batches", "estimatedSeconds", "takenAt"],
}


def enum(kind, key, under):
    """The closed set of values of property ``key`` (under ``under``) in ``kind``'s reports, or None."""
    for (kinds, k, u), values in KIND_ENUMS.items():
        if kind in kinds and (k, u) == (key, under):
            return values
    return ENUMS.get((key, under))


def refine(schema, kind=None, under=None, top=True):
    """Closed sets as enums (keeping null where allowed) and the required top-level keys, in place
    (``under``: the property whose value or items ``schema`` describes)."""
    if top and kind in REQUIRED:
        schema["required"] = list(dict.fromkeys(schema.get("required", []) + REQUIRED[kind]))
    for key, value in (schema.get("properties") or {}).items():
        values = enum(kind, key, under)
        if values and "string" in (value.get("type") or []):
            value["enum"] = values + ([None] if "null" in value["type"] else [])
        refine(value, kind, key, top=False)
    for key in ("items", "additionalProperties"):
        if isinstance(schema.get(key), dict):
            refine(schema[key], kind, under, top=False)
    for alt in schema.get("anyOf") or []:  # a List's items: a cluster that failed has only its error
        refine(alt, kind, under, top=False)
    return schema


def infer(values, depth=0, key=None, item=False, nullable=frozenset(), under=None, omittable=frozenset()):
    """A JSON Schema accepting every value in ``values`` (``key``: the property they are the value of, ``under``:
    the property that one is under, ``item``: they are the items of its list; ``nullable``: (property, under)
    that may be null without a sample holding null; ``omittable``: (property, under) never required)."""
    if key in INT_OR_STRING:
        return {"type": ["integer", "string"] + (["null"] if (key, under) in nullable or None in values else [])}
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
            schema["properties"] = {k: dict(CODE) if coded and k == "code" else
                                    infer([d[k] for d in dicts if k in d], depth + 1, k, nullable=nullable, under=key,
                                          omittable=omittable)
                                    for k in keys}
            schema["required"] = [k for k in keys if k in common and (k, key) not in omittable]
        elif any(dicts):
            schema["additionalProperties"] = infer([x for d in dicts for x in d.values()], depth + 1,
                                                     nullable=nullable, omittable=omittable)
    if lists:
        items = [x for v in lists for x in v]
        if items:
            schema["items"] = infer(items, depth + 1, key, item=True, nullable=nullable, under=under,
                                    omittable=omittable)
    if kinds == {"null"}:
        return {}  # only ever null in the samples: no constraint
    if depth and (key, under) in nullable and not item:
        kinds.add("null")  # Optional in the typed plan, though no sample held null
    if "integer" in kinds and "number" in kinds:
        kinds.discard("integer")
    schema["type"] = sorted(kinds) if len(kinds) > 1 else next(iter(kinds))
    return schema


def nullable(kind) -> frozenset:
    """(property, under) that ``kind`` may print as null though no sample did: its plan's Optional fields."""
    fields = optional_fields(TYPED[kind]) if kind in TYPED else ()
    return frozenset(f for f in fields if f[0] not in OMITTED_WHEN_NONE) | NULL_WITHOUT_A_SAMPLE


NULL_WITHOUT_A_SAMPLE = {("status", "outcomes")}  # cluster/executor.py's Outcome: no HTTP status (a network error)


def omittable(kind) -> frozenset:
    """(property, under) that ``kind`` may leave out though every sample had it: Optional fields left out."""
    fields = optional_fields(TYPED[kind]) if kind in TYPED else ()
    return frozenset(f for f in fields if f[0] in OMITTED_WHEN_NONE and f[0] not in ("summary", "assumes"))


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
            if not (item.get("kind") == "ClusterCheck" and "error" in item):  # (a cluster that could not be read)
                by_kind.setdefault(item.get("kind"), []).append(item)
    os.makedirs(OUT, exist_ok=True)
    for kind, reports in sorted(by_kind.items()):
        schema = infer(reports, nullable=nullable(kind), omittable=omittable(kind))
        props = schema["properties"]
        props["kind"] = {"const": kind}
        if "apiVersion" in props:
            props["apiVersion"] = {"const": reports[0]["apiVersion"]}
        if kind == "List":  # preemption -f with several workloads, check with several contexts
            kinds = []
            for item_kind in LIST_ITEM_KINDS:
                item = refine(infer(by_kind[item_kind], nullable=nullable(item_kind),
                                   omittable=omittable(item_kind)), item_kind)
                item["properties"]["kind"] = {"const": item_kind}
                kinds.append(item)
            kinds.append({"type": "object", "properties": {  # cli/published.py's cluster_check with an error
                "kind": {"const": "ClusterCheck"}, "apiVersion": {"const": by_kind["ClusterCheck"][0]["apiVersion"]},
                "context": {"type": "string"}, "error": {"type": "string"}},
                "required": ["kind", "apiVersion", "context", "error"], "additionalProperties": False})
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
                if props.get(k) == {} or k not in props and "description" in v:  # only null, or in no sample:
                    props[k] = v  # the hand-described property the schema had (e.g. the server's version, its error)
                if "description" in v and k in props:
                    props[k]["description"] = v["description"]
        with open(path, "w") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")
        print(f"{path}: {len(reports)} sample(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
