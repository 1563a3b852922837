"""Showing a plan's risks (drain, rebalance): the block of text and the codes not accepted; --accept-risk."""


def accepted_risks(values) -> frozenset:
    """The risk codes ``--accept-risk`` values name (repeatable, comma-separated; codes or aliases, any
    case); a value that names none is a usage error."""
    from kubectl_safety.analysis.risks import RISKS
    from kubectl_safety.errors import UsageError

    by_name = {code.lower(): code for code in RISKS}
    by_name.update({alias: code for code, (alias, _) in RISKS.items()})
    out = set()
    for value in values or ():
        for word in str(value).split(","):
            word = word.strip().lower()
            if not word:
                continue
            code = by_name.get(word) or by_name.get(word.replace("-", "_")) or by_name.get(word.replace("_", "-"))
            if code is None:
                raise UsageError(f"--accept-risk={word}: unknown risk; known: "
                                 + ", ".join(f"{c} ({a})" for c, (a, _) in RISKS.items()))
            out.add(code)
    return frozenset(out)


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
