"""The published JSON of ``why``'s post-mortems (kinds PodPostMortem and NodePostMortem)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kubectl_safety.model.constants import API_VERSION

if TYPE_CHECKING:
    from kubectl_safety.analysis.why.report import Cause, Evidence, NodePostMortem, PodPostMortem


def _time(at):
    return at.isoformat().replace("+00:00", "Z") if at else None


def cause(c: Cause) -> dict:
    return {"code": c.code, "actor": c.actor, "at": _time(c.at), "summary": c.summary,
            "confidence": c.confidence.value, "details": dict(c.details), "unanswered": c.unanswered}


def evidence(e: Evidence) -> dict:
    return {"source": e.source, "reason": e.reason, "message": e.message, "at": _time(e.at), "by": e.by}


def pod_postmortem(r: PodPostMortem) -> dict:
    return {"kind": "PodPostMortem", "apiVersion": API_VERSION,
            "pod": {"namespace": r.namespace, "name": r.name, "uid": r.uid, "node": r.node, "found": r.found,
                    "phase": r.phase},
            "cause": cause(r.cause), "evidence": [evidence(e) for e in r.evidence]}


def node_postmortem(r: NodePostMortem) -> dict:
    return {"kind": "NodePostMortem", "apiVersion": API_VERSION,
            "node": {"name": r.name, "found": r.found, "unschedulable": r.unschedulable},
            "cause": cause(r.cause), "evidence": [evidence(e) for e in r.evidence], "pods": list(r.pods)}


SERIALIZERS = {"kubectl_safety.analysis.why.report.PodPostMortem": pod_postmortem,
               "kubectl_safety.analysis.why.report.NodePostMortem": node_postmortem}
