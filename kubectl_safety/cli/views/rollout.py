"""``rollout``'s view: its text (the plan's batches and grouped risks, the run's report, its progress lines),
its published JSON (kinds RolloutPlan and RolloutReport) and a rollout's exit code."""

from __future__ import annotations

import textwrap
from typing import TYPE_CHECKING

from kubectl_safety.cli.drain_progress import DrainProgress, event_line
from kubectl_safety.cli.published import risk
from kubectl_safety.cli.render import table
from kubectl_safety.cli.report import ExitCode
from kubectl_safety.cli.risks import render_risks, unaccepted_codes
from kubectl_safety.cli.views.check import surgeable_line
from kubectl_safety.cli.views.drain import (appeared_pod, drain_plan, left_pod, render_plan as render_drain,
                                            render_surges, request_counts, surge_plan)
from kubectl_safety.model.constants import API_VERSION
from kubectl_safety.model.duration import human_duration

if TYPE_CHECKING:
    from kubectl_safety.analysis.plans.rollout import Batch, BatchRisk, CapacityLeft, Cause, RolloutPlan
    from kubectl_safety.engine.rollout_report import BatchProgress, NodeProgress, RolloutReport


def progress():
    """A progress printer for the drain's events and the rollout's own."""

    class Progress(DrainProgress):
        """The drain's events, and the rollout's: batches, maintenance, readiness, health gates."""

        LIVE = DrainProgress.LIVE + ("waiting-ready", "gate", "gate-wait")

        @staticmethod
        def text(event) -> str:
            line = ROLLOUT_LINES.get(event["event"])
            return line(event) if line else event_line(event)

    return Progress()


def _exec_done(e) -> str:
    code = e.get("exitCode")
    return (f"node/{e['pod']} maintenance " + ("timed out" if code is None else f"exited {code}")
            + (f": {e['message']}" if e.get("message") and code else ""))


ROLLOUT_LINES = {  # the rollout's own events -> progress line
    "batch": lambda e: f"batch {e['batch']}/{e['total']}: {', '.join(e['nodes'])}",
    "exec": lambda e: f"node/{e['pod']} maintenance: {e['command']}",
    "exec-done": _exec_done,
    "waiting-ready": lambda e: e["message"],
    "ready": lambda e: f"node/{e['pod']} Ready",
    "gate": lambda e: f"batch {e['batch']}: {e['message']}",
    "gate-passed": lambda e: f"batch {e['batch']}: health gate passed",
    "gate-wait": lambda e: e["message"],  # a window, an alert or a blocking pod (engine/gates.py)
    "node-done": lambda e: f"node/{e['pod']} done",
}


def render_plan(r, wide=False) -> str:
    o = r["options"]
    lines = [f"Rollout of {len(r['nodes'])} node(s): batches of {o['batchSize']}"
             + (", one zone at a time" if o["byZone"] else "")
             + (", pool cordoned first" if o["precordon"] else ", no pre-cordon")]
    if r["done"]:
        lines.append(f"Already done (resumed): {', '.join(r['done'])}")
    rows = []
    for b in r["batches"]:
        s, c = b["drain"]["summary"], b["capacity"]
        rows.append([b["batch"], ",".join(b["nodes"]), ",".join(z for z in b["zones"] if z) or "-",
                     s["evict"] + s["wait"] + s["delete"], s["blocked"],
                     f"{c['schedulableNodes']} nodes, {c['cpuFree']}m/{_gib(c['memoryFree'])} free",
                     f"{c['cpuNeeded']}m/{_gib(c['memoryNeeded'])}", human_duration(b["estimatedSeconds"]),
                     "SAFE" if b["safe"] else "BLOCKED: " + ",".join(b["blockedNodes"])])
    lines.append("")
    lines.append(table(rows, ["batch", "nodes", "zones", "move", "blocked", "capacity left", "needed",
                              "estimate", "verdict"]).rstrip() or "nothing to do")
    lines += surgeable_line([(f"batch {b['batch']}", b["drain"].get("surgeable")) for b in r["batches"]], "safe")
    if wide:
        for b in r["batches"]:
            lines.append(f"\nBatch {b['batch']}:")
            lines.append(render_drain(b["drain"]).rstrip())
    elif "surgePeak" in r:
        lines += _surges(r)
    lines += (render_risks([dict(x, message=f"batch {x['batch']}: {x['message']}") for x in r["risks"]]) if wide
              else _grouped_risks(r["risks"]))
    for cause in r.get("causes") or []:
        lines.append(f"\nCause: {cause['message']}.\n  Pre-cordoning buys: {cause['buys']}.\n  Alternatives:")
        lines += [f"    {a}" for a in cause["alternatives"]]
    left = r.get("leftNodes") or []
    if left:
        lines.append("")
        lines += textwrap.wrap(f"Left unmaintained: {len(left)} node(s): {', '.join(left[:20])}"
                               + (f" and {len(left) - 20} more (-o json lists them)" if len(left) > 20 else "")
                               + ("" if o.get("skipBlocked") else
                                  "; --skip-blocked maintains the other batches and names them"),
                               width=120, subsequent_indent="  ", break_on_hyphens=False)
    if r.get("gates"):
        lines += _gates(r["gates"], r["batches"])
    verdict = ("SAFE: every batch can complete" if r["safe"] else
               f"NOT SAFE ({unaccepted_codes(r)}): " + (
                   f"{len(left)} node(s) blocked would be left (--skip-blocked); exit 3" if o.get("skipBlocked") else
                   f"the rollout would stop at batch {r['stopsAtBatch']}; exit 3 "
                   + ("(the cause and its alternatives are above)" if r.get("causes") else
                      "unless accepted with --accept-risk")))
    lines.append(f"\n{verdict}; estimated {human_duration(r['estimatedSeconds'])} in total"
                 + (" (maintenance assumed 60s a node)" if o["maintenance"] else "") + ".")
    return "\n".join(lines) + "\n"


def _gates(g, batches) -> list:
    """What is checked before every batch, and when the windows let each batch start."""
    lines = ["\nBefore every batch (--outside-window " + g["outsideWindow"] + "):"]
    if g["windows"]:
        now = (f"open now, closes {g['windowClosesAt']}" if g["windowClosesAt"]
               else f"closed now, next opens {g['nextWindowOpensAt'] or '-'}")
        lines.append(f"  maintenance windows: {'; '.join(g['windows'])} ({now})")
        lines += [f"    batch {b['batch']} ({human_duration(b['estimatedSeconds'])}): "
                  + (f"starts at the earliest {start}" if start else "no window of the coming week is long enough")
                  for b, start in zip(batches, g["batchStarts"])]
    if g["alertsUrl"]:
        lines.append(f"  no firing alert at {g['alertsUrl']}"
                     + (f" matching {g['alertFilter']}" if g["alertFilter"] else "") + " (a failed query blocks)")
    if g["blockingPodSelector"]:
        held = "; ".join(f"{h['node']} ({', '.join(h['pods'])})" for h in g["heldNodes"]) or "none now"
        lines.append(f"  no running pod matching {g['blockingPodSelector']} on the batch's nodes: held {held}")
    return lines


def _surges(r) -> list:
    """Each batch's surges (--surge; -o wide shows them in each batch's drain plan) and the rollout's peak."""
    lines = []
    for b in r["batches"]:
        shown = render_surges(b.get("surge"))
        if shown:
            lines += [f"\nBatch {b['batch']} surges (before its evictions):"] + shown[1:]
    peak = ", ".join(f"{k} {v}" for k, v in r["surgePeak"].items())
    if lines:
        return lines + ["\nPeak extra capacity of the rollout (the largest batch): " + peak]
    impossible = list(dict.fromkeys(f"  {p['namespace']}/{p['name']}: {x['message']}" for b in r["batches"]
                                    for p in b["drain"]["pods"] for x in p["reasons"]
                                    if x["code"] == "SURGE_NOT_POSSIBLE"))
    return ["\nSurges: none possible:"] + impossible if impossible else ["\nSurges: none needed."]


GROUP_NODES = 5  # nodes shown with a group of risks (each node's reason: -o wide)


def _grouped_risks(risks) -> list:
    """The risks grouped by code and workload: the first one's message and nodes, the batches of all."""
    if not risks:
        return []
    groups = {}
    for x in risks:
        groups.setdefault((x["code"], x.get("workload"), x["accepted"]), []).append(x)
    causes = {}  # workloads whose risks have the same code, batches and cause: one entry
    for (code, workload, accepted), found in groups.items():
        batches = tuple(sorted({x["batch"] for x in found}))
        causes.setdefault((code, accepted, batches, _cause(found[0])), []).append((workload, found))
    lines = ["\nRisks" + (" (grouped by workload and cause; -o wide lists each):" if len(causes) < len(risks)
                           else ":")]
    for (code, accepted, batches, _), entries in causes.items():
        workloads = [w for w, _ in entries if w]
        found = [x for _, xs in entries for x in xs]
        first = found[0]
        where = f"batch {batches[0]}" if len(batches) == 1 else f"{len(batches)} batches ({_spans(list(batches))})"
        named = (f", {workloads[0]}" if len(workloads) == 1 else
                 f", {len(workloads)} workloads ({', '.join(workloads[:5])}"
                 + (f" and {len(workloads) - 5} more" if len(workloads) > 5 else "") + ")" if workloads else "")
        lines.append(f"  {code}{' (accepted)' if accepted else ''}: {where}{named}"
                     + (f", {len(found)} times" if len(found) > 1 else "") + f": {first['message']}")
        nodes = list((first.get("nodes") or {}).items())
        lines += [f"      {node}: {why}" for node, why in nodes[:GROUP_NODES]]
        more = len(nodes[GROUP_NODES:]) + (first.get("nodesNotListed") or 0)
        if more:
            lines.append(f"      and {more} more node(s) (-o wide, -o json)")
    return lines


def _cause(risk) -> str:
    """A risk's message without the pod it names: what the same cause says for every pod."""
    message = risk["message"]
    return message.split(" fits on no node: ", 1)[1] if " fits on no node: " in message else message


def _spans(numbers) -> str:
    """1-3,5,7-9"""
    out, start = [], numbers[0]
    for a, b in zip(numbers, numbers[1:] + [None]):
        if b != a + 1:
            out.append(str(start) if start == a else f"{start}-{a}")
            start = b
    return ",".join(out)


def _gib(n) -> str:
    return f"{n / 2**30:.1f}Gi"


def render_report(r, wide=False) -> str:
    lines = [f"Rollout {r['rollout']}: {r['status']}" + (f" ({r['message']})" if r["message"] else ""),
             f"Lease {r['lease']}, holder {r['holder']}; {r['elapsedSeconds']}s"]
    rows = []
    for n in r["nodes"]:
        d = n.get("drain") or {}
        ex = n.get("exec") or {}
        rows.append([n["name"], n["batch"] or "-", n["state"], len(d.get("evicted") or []),
                     len(d.get("appeared") or []), "-" if not ex else ex["exitCode"],
                     "yes" if n.get("uncordoned") else "no"])
    lines.append("")
    lines.append(table(rows, ["node", "batch", "state", "evicted", "appeared", "exec", "uncordoned"]).rstrip())
    surged = list(dict.fromkeys(x for n in r["nodes"] for x in n.get("surges") or []))
    if surged:
        lines.append("\nSurged by this rollout (recorded in its state): " + ", ".join(surged))
    for b in r["batches"]:
        if b.get("gate") and not b["gate"]["passed"]:
            lines.append(f"\nBatch {b['batch']} health gate: {b['gate']['message']}")
    if r["status"] != "done":
        lines.append("\nProgress is kept in the cluster; run the same command again to resume.")
    return "\n".join(lines) + "\n"


def batch_risk(r: BatchRisk) -> dict:
    return {**risk(r.risk), "batch": r.batch, "workload": r.workload}


def rollout_plan(plan: RolloutPlan) -> dict:
    o = plan.options
    out = {
        "kind": "RolloutPlan", "apiVersion": API_VERSION,
        "safe": plan.safe, "nodes": list(plan.nodes), "done": list(plan.done), "missing": list(plan.missing),
        "options": {"maxUnavailable": str(o.max_unavailable), "batchSize": plan.batch_size, "byZone": o.by_zone,
                    "precordon": o.precordon, "maintenance": o.maintenance, "skipBlocked": o.skip_blocked},
        "risks": [batch_risk(r) for r in plan.risks], "causes": [cause(c) for c in plan.causes],
        "stopsAtBatch": plan.stops_at_batch, "leftNodes": list(plan.left_nodes),
        "batches": [batch(b) for b in plan.batches], "estimatedSeconds": plan.estimated_seconds,
        "takenAt": plan.taken_at, "rollout": plan.rollout,
    }
    if plan.surge_peak is not None:
        out["options"].update(surge=True, surgeLimit=o.drain.surge_limit)
        out["surgePeak"] = dict(plan.surge_peak)
    if plan.gates is not None:
        out["gates"] = rollout_gates(plan.gates)
    return out


def rollout_gates(g) -> dict:
    return {"windows": list(g.windows), "outsideWindow": g.outside_window, "windowClosesAt": g.window_closes_at,
            "nextWindowOpensAt": g.next_window_opens_at, "batchStarts": list(g.batch_starts),
            "alertsUrl": g.alerts_url, "alertFilter": g.alert_filter, "blockingPodSelector": g.blocking_pod_selector,
            "heldNodes": [{"node": h.node, "pods": list(h.pods)} for h in g.held_nodes]}


def batch(b: Batch) -> dict:
    out = {"batch": b.number, "nodes": list(b.nodes), "zones": list(b.zones), "safe": b.safe,
           "blockedNodes": list(b.blocked_nodes), "capacity": capacity_left(b.capacity),
           "estimatedSeconds": b.estimated_seconds, "drain": drain_plan(b.drain)}
    if b.surge is not None:
        out["surge"] = surge_plan(b.surge)
    return out


def capacity_left(c: CapacityLeft) -> dict:
    return {"schedulableNodes": c.schedulable_nodes, "cpuFree": c.cpu_free, "memoryFree": c.memory_free,
            "cpuNeeded": c.cpu_needed, "memoryNeeded": c.memory_needed}


def cause(c: Cause) -> dict:
    return {"code": c.code.value, "batch": c.batch, "safeWithout": c.safe_without, "message": c.message,
            "buys": c.buys, "alternatives": list(c.alternatives)}


def rollout_report(r: RolloutReport) -> dict:
    out = {"kind": "RolloutReport", "apiVersion": API_VERSION, "rollout": r.rollout, "lease": r.lease,
           "holder": r.holder, "status": r.status.value, "message": r.message, "resumed": r.resumed,
           "elapsedSeconds": r.elapsed_seconds, "batches": [batch_progress(b) for b in r.batches],
           "nodes": [node_progress(n) for n in r.nodes], "requests": request_counts(r.requests)}
    if r.plan is not None:
        out["plan"] = {"batches": r.plan.batches, "estimatedSeconds": r.plan.estimated_seconds,
                       "done": list(r.plan.done)}
    return out


def batch_progress(b: BatchProgress) -> dict:
    return {"batch": b.number, "nodes": list(b.nodes), "status": b.status.value,
            "gate": None if b.gate is None else {"passed": b.gate.passed, "message": b.gate.message}}


def node_progress(n: NodeProgress) -> dict:
    out = {"name": n.name, "batch": n.batch, "state": n.state}
    if n.drain is not None:
        d = n.drain
        out["drain"] = {"status": d.status.value, "evicted": list(d.evicted),
                        "appeared": [appeared_pod(a) for a in d.appeared], "left": [left_pod(p) for p in d.left]}
    if n.exec is not None:
        out["exec"] = {"exitCode": n.exec.exit_code, "seconds": n.exec.seconds, "output": n.exec.output}
    if n.ready is not None:
        out["ready"] = n.ready
    if n.uncordoned is not None:
        out["uncordoned"] = n.uncordoned
    if n.surges is not None:
        out["surges"] = list(n.surges)
    return out


SERIALIZERS = {"kubectl_safety.analysis.plans.rollout.BatchRisk": batch_risk,
               "kubectl_safety.analysis.plans.rollout.RolloutPlan": rollout_plan,
               "kubectl_safety.engine.rollout_report.RolloutReport": rollout_report}


def rollout_code(report, blocked_left=False) -> ExitCode:
    """A rollout's (its typed RolloutReport): done; interrupted; error; blocked before any batch was
    done (not safe); else partly done. ``blocked_left``: nodes were left out as blocked
    (--skip-blocked), so a rollout done with the rest is not safe."""
    from kubectl_safety.engine.rollout_report import RolloutStatus

    ends = {RolloutStatus.DONE: ExitCode.UNSAFE if blocked_left else ExitCode.OK,
            RolloutStatus.INTERRUPTED: ExitCode.INTERRUPTED, RolloutStatus.ERROR: ExitCode.ERROR}
    if report.status in ends:
        return ends[report.status]
    nothing_done = not any(b.status is RolloutStatus.DONE for b in report.batches) and not report.resumed
    return ExitCode.UNSAFE if report.status is RolloutStatus.BLOCKED and nothing_done else ExitCode.PARTIAL
