"""``why pod|node`` as text, read from the typed post-mortems (their strings made printable)."""

from kubectl_safety.cli.render import table


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
