"""The published JSON of an engine's predicted drain (kind EnginePlan): ``--engine NAME``."""

from kubectl_safety.model.constants import API_VERSION


def engine_plan(o) -> dict:
    """``profiles.outcome.EngineOutcome`` as JSON."""
    p = o.profile
    return {
        "kind": "EnginePlan", "apiVersion": API_VERSION,
        "engine": {
            "name": p.name, "title": p.title,
            "settings": [{"name": s.name, "value": s.text, "source": s.source.value, "origin": s.origin}
                         for s in p.settings],
            "verdict": o.verdict.value, "order": p.order.value,
            "nodes": [_node(n) for n in o.nodes],
            "batches": [{"batch": b.number, "nodes": list(b.nodes), "seconds": b.seconds} for b in o.batches],
            "haltsAfter": o.halts_after, "seconds": o.seconds,
            "notes": list(p.notes), "sources": list(p.sources),
            "withSurge": None if o.surge is None else _with_surge(o.surge),
        },
    }


def _with_surge(ahead) -> dict:
    from kubectl_safety.analysis.profiles.ahead import RUN_FIRST, verdict

    return {"verdict": verdict(ahead).value, "runFirst": RUN_FIRST,
            "nodes": [{"name": a.name, "outcome": a.outcome.value, "atSeconds": a.at_seconds, "reason": a.reason,
                       "changes": a.changes, "keptWhole": list(a.kept_whole),
                       "notKept": [{"what": what, "reason": why} for what, why in a.not_kept]} for a in ahead]}


def _node(n) -> dict:
    return {
        "name": n.name, "batch": n.batch, "outcome": n.outcome.value, "atSeconds": n.at_seconds,
        "reason": n.reason, "setting": n.setting,
        "pods": [{"namespace": p.namespace, "name": p.name, "action": p.action, "atSeconds": p.at_seconds,
                  "code": p.code, "reason": p.reason, "group": p.group} for p in n.pods],
        "leftInPlace": list(n.left_in_place), "localDataLost": list(n.local_data_lost), "leaves": n.leaves,
        "availability": [{"workload": a.workload, "ready": a.ready, "fallsTo": a.falls_to} for a in n.availability],
    }
