"""``why pod|node``'s view: its text, read from the typed post-mortems (their strings made printable), their
published JSON (kinds PodPostMortem and NodePostMortem) and their exit code."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kubectl_safety.cli.render import table
from kubectl_safety.cli.report import ExitCode
from kubectl_safety.model.constants import API_VERSION

if TYPE_CHECKING:
    from kubectl_safety.analysis.why.report import Cause, Evidence, NodePostMortem, PodPostMortem


def _when(at) -> str:
    return at.isoformat().replace("+00:00", "Z") if at else "-"


def _cause(c) -> list:
    lines = [f"Cause:     {c.code}" + (f" ({c.confidence.value} confidence)" if c.code != "UNKNOWN" else ""),
             f"Actor:     {c.actor or '(not recorded)'}", f"When:      {_when(c.at)}", f"Answer:    {c.summary}"]
    for key, value in c.details.items():
        if isinstance(value, list):
            value = "; ".join(", ".join(f"{k} {v}" for k, v in item.items() if v) if isinstance(item, dict)
                              else str(item) for item in value)
        lines.append(f"  {key}: {value}")
    if c.unanswered:
        lines.append(f"Ask:       {c.unanswered}")
    return lines


def _evidence(evidence) -> str:
    rows = [[_when(e.at), e.source, e.reason, e.by, e.message] for e in evidence]
    return "\nEvidence:\n" + (table(rows, ["time", "source", "reason", "by", "message"]) if rows else "  none\n")


def render_pod(r, wide=False) -> str:
    state = r.phase or "?" if r.found else "gone"
    lines = [f"Pod:       {r.namespace}/{r.name} on {r.node or '(unknown node)'} ({state})"] + _cause(r.cause)
    return "\n".join(lines) + "\n" + _evidence(r.evidence)


def render_node(r, wide=False) -> str:
    state = ("cordoned" if r.unschedulable else "schedulable") if r.found else "gone"
    lines = [f"Node:      {r.name} ({state})"] + _cause(r.cause)
    if r.found:
        lines.append(f"Pods left: {len(r.pods)}" + (f" ({', '.join(r.pods[:10])}"
                                                    + (", ..." if len(r.pods) > 10 else "") + ")" if r.pods else ""))
    return "\n".join(lines) + "\n" + _evidence(r.evidence)


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


def postmortem_code(report) -> ExitCode:
    """``why``'s (its typed PodPostMortem or NodePostMortem): a cause found; UNKNOWN is not an answer."""
    return ExitCode.UNSAFE if report.cause.code == "UNKNOWN" else ExitCode.OK
