"""``--engine NAME``'s view: its text (one line per node with its outcome, then the details, the batches and
the settings with their sources), its published JSON (kind EnginePlan) and its exit code."""

from kubectl_safety.cli.render import table
from kubectl_safety.cli.report import ExitCode
from kubectl_safety.model.constants import API_VERSION
from kubectl_safety.model.duration import human_duration

ORDER = {"random": "the engine picks nodes at random: each batch is one possible draw",
         "deterministic": "the engine's own order", "given": "the order given"}


def _at(seconds) -> str:
    return "-" if seconds is None else human_duration(seconds)


def render_engine(r, wide=False) -> str:
    e = r["engine"]
    lines = [f"Engine {e['name']} ({e['title']}): {e['verdict']}", ""]
    rows = [[n["name"], n["batch"], n["outcome"], _at(n["atSeconds"]), n["reason"]] for n in e["nodes"]]
    lines.append(table(rows, ["NODE", "BATCH", "OUTCOME", "AT", "REASON"]).rstrip("\n"))
    if e["withSurge"] is not None:
        lines += ["", *_with_surge(e["withSurge"])]
    for n in e["nodes"]:
        details = _details(n)
        if details:
            lines += ["", f"{n['name']}: {n['outcome']}" + (f" at {_at(n['atSeconds'])}" if n["atSeconds"] is not None
                                                             else "") + (f" ({n['setting']})" if n["setting"] else "")]
            lines += [f"  {d}" for d in details]
    lines += ["", f"Batches ({ORDER.get(e['order'], e['order'])}):"]
    for b in e["batches"]:
        lines.append(f"  {b['batch']}: {', '.join(b['nodes'])} ({'never done' if b['seconds'] is None else _at(b['seconds'])})")
    if e["haltsAfter"] is not None:
        lines.append(f"The upgrade stops after batch {e['haltsAfter']}: the later batches are not drained.")
    lines.append("Whole upgrade: " + ("never ends" if e["seconds"] is None else f"about {_at(e['seconds'])}"))
    lines += [f"Note: {note}" for note in e["notes"]]
    lines += ["", "Settings:"]
    rows = [[s["name"], s["value"] if s["value"] != "" else '""',
             s["source"] + (f" ({s['origin']})" if s["origin"] else "")] for s in e["settings"]]
    lines.append(table(rows, ["SETTING", "VALUE", "SOURCE"]).rstrip("\n"))
    return "\n".join(lines) + "\n"


def _details(n) -> list:
    out = []
    if n["leaves"]:
        out.append(f"leaves: {n['leaves']}")
    for p in n["pods"]:
        if p["action"] in ("blocked", "wait", "forced", "refused"):
            when = f" at {_at(p['atSeconds'])}" if p["atSeconds"] is not None else ""
            group = f" [group {p['group']}]" if p["group"] else ""
            out.append(f"{p['action']} {p['namespace']}/{p['name']}{when}{group}: {p['reason']}")
    for a in n["availability"]:
        out.append(f"{a['workload']}: {a['ready']} Ready, falls to {a['fallsTo']}")
    if n["leftInPlace"]:
        out.append(f"left in place: {', '.join(n['leftInPlace'])}")
    if n["localDataLost"]:
        out.append(f"local data lost: {', '.join(n['localDataLost'])}")
    return out


def _with_surge(w) -> list:
    """--surge: each node's outcome once the surge ran ahead of the engine, and what it keeps whole."""
    lines = [f"With --surge: {w['verdict']}. The engine does not surge: run {w['runFirst']} on each node before "
             "the engine's window (it replaces these workloads' pods first, then drains the node); the exit code "
             "is the engine's without it."]
    rows = [[a["name"], a["outcome"] + ("" if a["changes"] else " (no change)"), _at(a["atSeconds"]),
             ", ".join(a["keptWhole"]) or "-"] for a in w["nodes"]]
    lines.append(table(rows, ["NODE", "WITH --SURGE", "AT", "KEPT WHOLE"]).rstrip("\n"))
    if not any(a["changes"] for a in w["nodes"]):
        lines.append("  A surge ahead changes no node's outcome here: nothing it can surge holds a node.")
    for a in w["nodes"]:
        if a["changes"]:
            lines.append(f"  {a['name']} with --surge: {a['outcome']}: {a['reason']}")
        lines += [f"  {a['name']}: --surge cannot keep {k['what']}: {k['reason']}" for k in a["notKept"]]
    return lines


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
            "withSurge": None if o.surge is None else _published_surge(o.surge),
        },
    }


def _published_surge(ahead) -> dict:
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


SERIALIZERS = {"kubectl_safety.analysis.profiles.outcome.EngineOutcome": engine_plan}


def engine_code(outcome) -> ExitCode:
    """An engine's predicted upgrade (EnginePlan): OK only when every node COMPLETES, else UNSAFE."""
    return ExitCode.OK if outcome.completes else ExitCode.UNSAFE
