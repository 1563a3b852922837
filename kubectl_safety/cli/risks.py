"""Showing a plan's risks (drain, rebalance): the block of text and the codes not accepted; --accept-risk."""


def accepted_risks(values) -> frozenset:
    """The risk codes ``--accept-risk`` values name; a value that names none is a usage error."""
    from kubectl_safety.analysis.risks import UnknownRisk, accepted_codes
    from kubectl_safety.errors import UsageError

    try:
        return accepted_codes(values)
    except UnknownRisk as e:
        raise UsageError(str(e)) from None


def unaccepted_codes(plan) -> str:
    """The codes of the risks not accepted (of a typed plan, or of a report holding its risks)."""
    from kubectl_safety.cli.published import published

    risks = plan.get("risks") or [] if isinstance(plan, dict) else plan.risks
    return ", ".join(sorted({r["code"] for r in map(published, risks) if not r["accepted"]})) or "none"


def render_risks(risks) -> list:
    """Lines for the plan's risks: code, message, each node's reason where there is one."""
    if not risks:
        return []
    lines = ["\nRisks:"]
    for risk in risks:
        lines.append(f"  {risk['code']}{' (accepted)' if risk['accepted'] else ''}: {risk['message']}")
        for node, why in (risk.get("nodes") or {}).items():
            lines.append(f"      {node}: {why}")
        if risk.get("nodesNotListed"):
            lines.append(f"      and {risk['nodesNotListed']} more node(s)")
    return lines
