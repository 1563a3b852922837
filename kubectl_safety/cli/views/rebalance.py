"""``rebalance``'s view: its text (each constraint now and as expected, the evictions, the summary; progress
lines), its published JSON (kind RebalancePlan, with its execution after acting) and its exit codes."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kubectl_safety.cli.published import finding, published, risk
from kubectl_safety.cli.render import table
from kubectl_safety.cli.report import ExitCode
from kubectl_safety.cli.risks import render_risks, unaccepted_codes
from kubectl_safety.model.constants import API_VERSION

if TYPE_CHECKING:
    from kubectl_safety.analysis.plans.rebalance import RebalancePlan, Relocation, SpreadBlock, SpreadState
    from kubectl_safety.engine.rebalance_report import EvictionResult, ExecutedRebalance, RebalanceExecution


def progress(event):
    """Engine events as kubectl writes them (``pod/NAME evicted``); retries on a live status line."""
    from kubectl_safety.cli.progress import SHARED, object_line

    kind, name = event.get("event"), (event.get("pod") or "").rsplit("/", 1)[-1]
    detail = event.get("message") or event.get("reason") or ""
    if kind == "round":
        SHARED.line(f"round {event['round']}: evicting {event['pods']} pod(s)")
    elif kind == "settling":
        SHARED.line(f"waiting for {event['pods']} pod(s) to be gone and replaced...")
    elif kind == "measured":
        SHARED.line(f"round {event['round']}: measured again: " + _skews(event["plan"]))
    elif kind == "retrying":
        SHARED.status(f"cannot evict pod/{name} yet ({event.get('result')}): {detail} "
                      f"(retry in {event.get('retryIn', 0):.0f}s)", event.get("timeLeft"))
    elif kind in ("done", "evicted", "gone"):  # the executor's "done", the drainer's "evicted" once gone
        SHARED.line(object_line("pod", name, "already gone" if kind == "gone" else "evicted"))
    elif kind == "evidence-not-recorded":
        SHARED.line(f"warning: {detail}")
    elif kind not in ("evicting", "waiting", "appeared"):
        SHARED.line(f"error: cannot evict pod/{name}: {kind}" + (f" ({detail})" if detail else ""))


def server_progress(event):
    """A server dry run's events: an accepted eviction says so, as kubectl's ``(server dry run)``."""
    if event.get("event") == "done":
        from kubectl_safety.cli.progress import SHARED, object_line

        SHARED.line(object_line("pod", event["pod"].rsplit("/", 1)[-1], "evicted (server dry run)"))
    else:
        progress(event)


def _skews(plan) -> str:
    plan = published(plan)
    return "; ".join(f"{c['workload']} {c['topologyKey']} skew {c['skew']}" for c in plan["constraints"]
                     if c["rebalanced"]) or "no constraints"


def _domains(d) -> str:
    return ", ".join(f"{k}={v}" for k, v in d.items()) or "no eligible domains"


def render(r, wide=False) -> str:
    lines = []
    shown = [c for c in r["constraints"] if c["violated"] or r["scope"]["workload"] or wide]
    expected = {(c["workload"], c["topologyKey"]): c for c in r["expected"]}
    checked = len(r["workloads"])
    if not shown:
        lines.append(f"No violated topology spread among {checked} workload(s)" + (
            "" if any(c["rebalanced"] for c in r["constraints"])
            else " (none has spread constraints to rebalance)") + ".")
    for c in shown:
        after = expected[(c["workload"], c["topologyKey"])]
        state = "VIOLATED" if c["violated"] else "ok"
        note = "" if c["rebalanced"] else " (not rebalanced: add --include-soft)"
        lines.append(f"{c['workload']}: {c['topologyKey']} maxSkew {c['maxSkew']} {c['whenUnsatisfiable']}{note}")
        lines.append(f"  now:      skew {c['skew']} {state} [{_domains(c['domains'])}]")
        if after["domains"] != c["domains"]:
            lines.append(f"  expected: skew {after['skew']} {'VIOLATED' if after['violated'] else 'ok'} "
                         f"[{_domains(after['domains'])}]")
    if "execution" in r:
        rows = [[n["round"], e["namespace"], e["name"], e["node"], e["domain"], e.get("result", "skipped")]
                for n in r["execution"]["rounds"] for e in n["evictions"]]
        lines.append(f"\nEvicted ({len(r['execution']['rounds'])} round(s)):")
        lines.append(table(rows, ["round", "namespace", "pod", "node", "domain", "result"]).rstrip() or "  none")
    elif r["evictions"]:
        server = "serverDryRun" in r  # the server's answer to each eviction sent (the first round's)
        rows = [[e["round"], e["namespace"], e["name"], e["node"], e["domain"],
                 f"{e['expectedNode']} ({e['expectedDomain']})"
                 + (f", tied with {', '.join(e['tiedNodes'])}" if e.get("tiedNodes") else "")]
                + ([(e.get("serverDryRun") or {}).get("result", "-")] if server else []) for e in r["evictions"]]
        lines.append(f"\nEvictions ({r['summary']['evictions']} in {r['summary']['rounds']} round(s)):")
        lines.append(table(rows, ["round", "namespace", "pod", "node", "domain", "expected node"]
                           + (["server"] if server else [])).rstrip())
    if r["blocked"]:
        lines.append("\nBlocked:")
        for b in r["blocked"]:
            who = f"pod {b['namespace']}/{b['name']} on {b['node']}: " if b.get("name") else ""
            lines.append(f"  {b['workload']} {b['topologyKey']}: {who}{b['reason']}")
    if r["findings"]:
        lines.append("\nFindings:")
        lines.append(table([[f["severity"], f["code"], f["message"]] for f in r["findings"]],
                           ["severity", "code", "message"]).rstrip())
    lines += render_risks(r.get("risks") or [])
    if "execution" in r and r["execution"]["after"] is not None:
        lines.append("\nAfter: " + "; ".join(f"{c['workload']} {c['topologyKey']} skew {c['skew']} "
                                              f"[{_domains(c['domains'])}]"
                                              for c in r["execution"]["after"] if c["rebalanced"]))
    if "execution" in r:
        ex = r["execution"]
        went = sum(1 for n in ex["rounds"] for e in n["evictions"] if e.get("result") in ("done", "gone"))
        after = ex["after"]
        state = ("interrupted" if ex["interrupted"] else "not measured again (use --wait)" if after is None else
                 "every constraint within maxSkew" if not any(c["violated"] and c["rebalanced"] for c in after)
                 else "still violated")
        lines.append(f"\nSummary: evicted {went} pod(s) in {len(ex['rounds'])} round(s); {state}.")
    else:
        verdict = ("nothing to do" if not r["summary"]["violated"] else
                   "the plan fixes every constraint" if r["summary"]["fixed"]
                   else "the plan cannot fix every constraint")
        lines.append(f"\nSummary: {verdict} ({r['summary']['evictions']} eviction(s)); assumes the scheduler picks "
                     "the least-loaded feasible domain." + ("" if r["safe"] else f" NOT SAFE ({unaccepted_codes(r)})."))
    return "\n".join(lines) + "\n"


def rebalance_plan(plan: RebalancePlan, results=None) -> dict:
    """``results``: {id of an eviction: its EvictionResult} for the evictions acted on."""
    o, s, results = plan.options, plan.summary, results or {}
    out = {
        "kind": "RebalancePlan", "apiVersion": API_VERSION, "source": plan.source, "takenAt": plan.taken_at,
        "options": {"includeSoft": o.include_soft, "clusterDefaults": o.cluster_defaults,
                    "evictLocalStorage": o.evict_local_storage, "maxEvictions": o.max_evictions},
        "workloads": [{"kind": w.kind, "namespace": w.namespace, "name": w.name, "pods": w.pods}
                      for w in plan.workloads],
        "constraints": [spread_state(c) for c in plan.constraints],
        "evictions": [eviction_result(results[id(e)]) if id(e) in results else relocation(e) for e in plan.evictions],
        "expected": [spread_state(c) for c in plan.expected],
        "blocked": [spread_block(b) for b in plan.blocked],
        "findings": [finding(f) for f in plan.findings],
        "assumptions": list(plan.assumptions),
        "risks": [risk(r) for r in plan.risks],
        "safe": plan.safe,
        "summary": {"violated": s.violated, "evictions": s.evictions, "rounds": s.rounds, "fixed": s.fixed},
    }
    if plan.scope is not None:
        out["scope"] = {"namespace": plan.scope.namespace, "selector": plan.scope.selector,
                        "workload": plan.scope.workload}
    if plan.server_dry_run is not None:
        out["serverDryRun"] = {"sent": plan.server_dry_run.sent, "refused": plan.server_dry_run.refused}
    return out


def spread_state(c: SpreadState) -> dict:
    return {"workload": c.workload, "topologyKey": c.topology_key, "maxSkew": c.max_skew,
            "whenUnsatisfiable": c.when_unsatisfiable, "minDomains": c.min_domains, "domains": dict(c.domains),
            "skew": c.skew, "violated": c.violated, "labelSelector": c.label_selector,
            "nodeAffinityPolicy": c.node_affinity_policy, "nodeTaintsPolicy": c.node_taints_policy,
            "source": c.source, "rebalanced": c.rebalanced, "pods": c.pods}


def relocation(e: Relocation) -> dict:
    out = {"namespace": e.namespace, "name": e.name, "node": e.node, "domain": e.domain, "topologyKey": e.topology_key,
           "workload": e.workload, "round": e.round, "expectedNode": e.expected_node,
           "expectedDomain": e.expected_domain, "tiedNodes": list(e.tied_nodes)}
    if e.server_dry_run is not None:
        out["serverDryRun"] = e.server_dry_run.to_dict()
    return out


def spread_block(b: SpreadBlock) -> dict:
    out = {"workload": b.workload, "topologyKey": b.topology_key, "reason": b.reason}
    if b.name is not None:
        out.update(namespace=b.namespace, name=b.name, node=b.node, domain=b.domain)
    return out


def eviction_result(r: EvictionResult) -> dict:
    return {**relocation(r.eviction), "result": r.result, "status": r.status, "message": r.message}


def executed_rebalance(r: ExecutedRebalance) -> dict:
    """The plan with its ``execution``; the plan's first-round evictions show what became of them."""
    ex = r.execution
    first = {id(e.eviction): e for e in ex.rounds[0].evictions} if ex.rounds else {}
    return {**rebalance_plan(r.plan, first), "execution": rebalance_execution(ex)}


def rebalance_execution(ex: RebalanceExecution) -> dict:
    return {"rounds": [{"round": n.number, "evictions": [eviction_result(e) for e in n.evictions]} for n in ex.rounds],
            "waited": ex.waited, "interrupted": ex.interrupted, "before": [spread_state(c) for c in ex.before],
            "after": None if ex.after is None else [spread_state(c) for c in ex.after]}


SERIALIZERS = {"kubectl_safety.analysis.plans.rebalance.RebalancePlan": rebalance_plan,
               "kubectl_safety.engine.rebalance_report.ExecutedRebalance": executed_rebalance}


def rebalance_plan_code(plan) -> ExitCode:
    """A RebalancePlan's: OK when it fixes the spread and is SAFE (or there is nothing to do)."""
    return ExitCode.OK if plan.summary.fixed and plan.safe else ExitCode.UNSAFE


def rebalance_code(executed) -> ExitCode:
    """An ExecutedRebalance's: interrupted; OK when the spread is fixed (measured again with --wait, else
    every eviction went and the plan fixes it); nothing went (UNSAFE when only budgets refused, else an
    error); else partly done."""
    from kubectl_safety.cluster.client import Result

    plan, execution = executed.plan, executed.execution
    if execution.interrupted:
        return ExitCode.INTERRUPTED
    results = execution.results()
    went = [e for e in results if e.went]
    if execution.waited and execution.last.summary.violated == 0:
        return ExitCode.OK
    if not went:
        return ExitCode.UNSAFE if all(e.result == Result.PDB_BLOCKED for e in results) else ExitCode.ERROR
    if not execution.waited and len(went) == len(plan.evictions) and plan.summary.fixed:
        return ExitCode.OK
    return ExitCode.PARTIAL
