"""The published JSON of typed plans: one serializer per kind, used only at the output edge.

``published(report)`` turns every typed plan in a report (a dict that may embed them) into the JSON
the schemas in ``kubectl_safety/schemas`` describe. Each command's view (``cli/views/<module>.py``)
declares its serializers in its ``SERIALIZERS``, keyed by the typed class's module and name;
``published`` imports the view named after a kind's module when it first meets the kind. This module
holds the serializers of the parts several kinds share (reasons, risks, object references, findings,
PDB summaries). The serializers name the typed kinds only in annotations: publishing a kind imports no
other kind's module (a dry-run drain loads neither the explanations nor the engine's reports).
"""

from __future__ import annotations

import importlib
from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kubectl_safety.analysis.plans.common import BudgetSummary, Finding, ObjectRef, Reason, Risk


def published(value):
    """``value`` with each typed plan in it (at any depth of dicts and lists) as its JSON."""
    kind = type(value)
    if kind is dict:
        return {k: published(v) for k, v in value.items()}
    if kind is list:
        return [published(v) for v in value]
    serializer = _BY_CLASS.get(kind)
    if serializer is None:
        serializer = _BY_CLASS[kind] = _serializer(kind) or False
    return serializer(value) if serializer else value


# Packages whose kinds a view of another name publishes: the engine profiles' outcome, by `--engine`'s view.
VIEW_OF = {"profiles": "engine"}


def _serializer(kind):
    """A typed class's serializer (None: published as is): the shared table's, else its view's. The view named
    after the class's module or package (``plans.drain``: ``views/drain.py``; ``engine.rollout_report``:
    ``views/rollout.py``; ``analysis.why.pod``: ``views/why.py``) is imported first, every view only when
    that one does not hold it: a drain's plan loads the drain's view alone."""
    if not kind.__module__.startswith("kubectl_safety."):
        return None
    key = f"{kind.__module__}.{kind.__qualname__}"
    if key in SERIALIZERS:
        return SERIALIZERS[key]
    words = [VIEW_OF.get(w, w) for word in reversed(kind.__module__.split(".")) for w in (word, word.split("_")[0])]
    return _held_by(dict.fromkeys(words), key) or _held_by(_view_names(), key)


def _held_by(views, key):
    """The serializer of class ``key`` in the first of ``views`` (names; no such view is skipped) that has one."""
    for name in views:
        found = _view_serializers(name).get(key)
        if found is not None:
            return found
    return None


def reason(r: Reason) -> dict:
    return {"code": r.code, "severity": r.severity.value, "message": r.message}


def risk(r: Risk) -> dict:
    out = {"code": r.code.value, "message": r.message, "objects": [object_ref(o) for o in r.objects]}
    if r.nodes is not None:
        out["nodes"] = r.nodes
    if r.nodes_not_listed is not None:
        out["nodesNotListed"] = r.nodes_not_listed
    out["accepted"] = r.accepted
    return out


def object_ref(o: ObjectRef) -> dict:
    return {"kind": o.kind, "namespace": o.namespace, "name": o.name}


def finding(f: Finding) -> dict:
    return {"code": f.code, "severity": f.severity.value, "message": f.message}


def budget_summary(b: BudgetSummary) -> dict:
    return {"name": b.name, "namespace": b.namespace, "minAvailable": b.min_available,
            "maxUnavailable": b.max_unavailable, "unhealthyPodEvictionPolicy": b.unhealthy_pod_eviction_policy,
            "selector": b.selector, "disruptionsAllowed": b.disruptions_allowed, "currentHealthy": b.current_healthy,
            "desiredHealthy": b.desired_healthy, "expectedPods": b.expected_pods, "matchingPods": b.matching_pods,
            "neverAllows": b.never_allows}


# The kinds several views embed, by their class's module and name (each view's own: its SERIALIZERS).
SERIALIZERS = {"kubectl_safety.analysis.plans.common.Risk": risk}


@cache
def _view_names() -> tuple:
    """The views (``cli/views/<name>.py``), found by name as ``main`` finds the commands: they render with
    ``cli/render.py``, which publishes with this, so none is imported here up front."""
    import pkgutil

    views = importlib.import_module(f"{__package__}.views")
    return tuple(sorted(v.name for v in pkgutil.iter_modules(views.__path__)))


def _view_serializers(name: str) -> dict:
    """The ``SERIALIZERS`` of view ``name`` ({} when there is no such view)."""
    path = f"{__package__}.views.{name}"
    try:
        return getattr(importlib.import_module(path), "SERIALIZERS", {})
    except ModuleNotFoundError as e:
        if e.name != path:
            raise
        return {}


def serializers() -> dict:
    """Every published kind's serializer: the table above and each view's ``SERIALIZERS``."""
    merged = dict(SERIALIZERS)
    for name in _view_names():
        merged.update(_view_serializers(name))
    return merged


_BY_CLASS = {}  # each class met: its serializer, or False (as is); published() visits every value of a report
