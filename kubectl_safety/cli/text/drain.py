"""``drain`` as text: the plan's pods, budgets, waves, risks and verdict, and the report after acting."""

from kubectl_safety.cli.render import table
from kubectl_safety.cli.risks import render_risks, unaccepted_codes
from kubectl_safety.model.duration import human_duration


def render_plan(r, wide=False) -> str:
    lines = []
    for n in r["nodes"]:
        lines.append(f"Node {n['name']}: {n['pods']} pod(s)" + (" (already cordoned)" if n["unschedulable"] else ""))
    rows, several = [], len(r["nodes"]) > 1  # one node: the heading above names it
    for p in r["pods"]:
        shown = p["reasons"] if wide else [x for x in p["reasons"] if x["severity"] != "info"] or p["reasons"][:1]
        why = "; ".join(f"{x['code']}: {x['message']}" if wide else x["code"] for x in shown)
        row = [p["action"], p["wave"] or "-", f"{p['namespace']}/{p['name']}"] + ([p["node"]] if several else []) \
            + [p["pdb"] or "-", p["replacementNode"] or "-", why]
        if "serverDryRun" in p:
            row.append(p["serverDryRun"]["result"])
        rows.append(row)
    headers = ["action", "wave", "pod"] + (["node"] if several else []) + ["pdb", "replacement", "reasons"] \
        + (["server"] if "serverDryRun" in r else [])
    lines.append("")
    lines.append(table(rows, headers).rstrip() or "no pods")
    if not wide:
        details = [(p, x) for p in r["pods"] for x in p["reasons"] if x["severity"] == "error"]
        if details:
            lines.append("\nBlocked:")
            lines += [f"  {p['namespace']}/{p['name']}: {x['message']}" for p, x in details]
        not_surged = [(p, x) for p in r["pods"] for x in p["reasons"] if x["code"] == "SURGE_NOT_POSSIBLE"]
        if not_surged:
            lines.append("\nNot surged:")
            lines += [f"  {p['namespace']}/{p['name']}: {x['message']}" for p, x in not_surged]
    if r["pdbs"]:
        lines.append("\nPodDisruptionBudgets:")
        lines.append(table([[f"{b['namespace']}/{b['name']}", b["disruptionsAllowed"],
                             f"{b['currentHealthy']}/{b['desiredHealthy']}", b["podsToEvict"], b["waves"],
                             b["neverAllows"] or ""] for b in r["pdbs"]],
                           ["pdb", "allowed", "healthy/desired", "to evict", "waves", "never allows"]).rstrip())
    if not r["capacity"]["checked"]:
        lines.append("\nCapacity: not checked (--no-capacity): replacements are assumed to start somewhere.")
    if r["capacity"]["unplaceable"]:
        lines.append("\nReplacements that fit nowhere:")
        lines += [f"  {u['namespace']}/{u['name']}: {u['reason']}" for u in r["capacity"]["unplaceable"]]
    if r["waves"]:
        from kubectl_safety.analysis.drain import RETRY_SECONDS

        lines.append("\nWaves:")
        lines += [f"  {w['wave']}: {len(w['pods'])} pod(s), grace {human_duration(w['gracePeriodSeconds'])}"
                  + (f", then ~{human_duration(w['readySeconds'])} for replacements to be Ready"
                     if w["readySeconds"] else "")
                  + (f", +{human_duration(RETRY_SECONDS)} eviction retry" if w["wave"] > 1 else "")
                  + f" (~{human_duration(w['estimatedSeconds'])})" for w in r["waves"]]
    lines += render_surges(r.get("surge"))
    for w in r["warnings"]:
        lines.append(f"\n{w['severity']}: {w['message']}")
    lines += render_risks(r.get("risks") or [])
    for what, pods in (r.get("losses") or {}).items():
        if pods:
            label = {"emptyDirData": "emptyDir data lost (--delete-emptydir-data)",
                     "unmanagedPods": "pods not recreated (--force)"}.get(what, what)
            lines.append(f"\nAccepted by flags: {label}: {len(pods)} pod(s): {', '.join(pods[:10])}"
                         + (", ..." if len(pods) > 10 else ""))
    s = r["summary"]
    accepted = sorted({x["code"] for x in r.get("risks") or [] if x["accepted"]})
    verdict = (f"SAFE only with the accepted risks ({', '.join(accepted)})" if r["safe"] and accepted else
               "SAFE: the drain can complete" if r["safe"] else
               f"NOT SAFE ({unaccepted_codes(r)}): exit 3 unless accepted with --accept-risk")
    lines.append(f"\n{verdict}: {s['evict']} evict now, {s['wait']} wait, {s['delete']} delete, "
                 f"{s['skip']} skip, {s['blocked']} blocked; estimated {human_duration(r['estimatedSeconds'])}.")
    return "\n".join(lines) + "\n"


def render_surges(surge) -> list:
    """The plan's surges (--surge): each workload, from -> to, how, and the peak extra capacity."""
    if not surge or not surge["workloads"]:
        return []
    rows = [[f"{w['kind']}/{w['name']}", w["namespace"], f"{w['from']} -> {w['to']}",
             w["mechanism"] + (f" ({w['autoscaler']['name']} min {w['autoscaler']['minReplicasFrom']} -> "
                               f"{w['autoscaler']['minReplicasTo']})" if w["autoscaler"] else ""),
             w["removal"], f"~{human_duration(w['expectedSeconds'])}", "resume" if w["resumed"] else ""]
            for w in surge["workloads"]]
    peak = ", ".join(f"{k} {v}" for k, v in surge["peak"].items())
    return ["\nSurges (wave 1, before its evictions):",
            table(rows, ["workload", "namespace", "replicas", "mechanism", "old pods", "ready in", ""]).rstrip(),
            f"Peak extra capacity: {peak}"]


def render_report(r, wide=False) -> str:
    lines = [f"Drain of {', '.join(r['nodes'])}: {r['status']}" + (f" ({r['message']})" if r["message"] else ""),
             f"Evicted: {len(r['evicted'])} pod(s) in {r['elapsedSeconds']}s"]
    surge = r.get("surge")
    if surge:
        lines += [f"Surged: {x}" for x in surge["raised"]] + [f"Restored: {x}" for x in surge["restored"]]
        lines += [f"Not restored (changed by someone else): {x}" for x in surge["changedByOthers"]]
    if r["left"]:
        lines.append("Left on the nodes:")
        lines += [f"  {p['namespace']}/{p['name']} ({p['action']}): {p['reason']}" for p in r["left"]]
    lines += _cordon_state(r)
    return "\n".join(lines) + "\n"


def _cordon_state(r) -> list:
    """Which nodes a drain that did not finish leaves cordoned: all of them, or, when a cordon was refused,
    those cordoned before it (the rest were NOT cordoned)."""
    if r["drained"]:
        return []
    cordons = [o for o in r["outcomes"] if o["action"] == "cordon"]
    if all(o["result"] == "done" for o in cordons):
        return ["The nodes stay cordoned; run the same command again to resume."]
    cordoned = [o["pod"] for o in cordons if o["result"] == "done"]
    left = [n for n in r["nodes"] if n not in cordoned]
    return [f"Not cordoned: {', '.join(left)} (the cordon was refused); nothing was evicted."] + (
        [f"Cordoned: {', '.join(cordoned)} (kubectl uncordon NODE to undo, or run the same command again)."]
        if cordoned else [])
