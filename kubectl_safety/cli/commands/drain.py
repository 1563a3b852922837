"""``kubectl safety drain``: simulate a drain against PodDisruptionBudgets, then drain safely."""

import sys
import time

import click

from kubectl_safety.cli.completers import complete_dry_run, complete_names
from kubectl_safety.cli.drain_flags import (ACTING, KUBECTL, SURGE, build_drain_options, drain_flags, dry_run_value,
                                            duration)
from kubectl_safety.cli.drain_flags import selector as drain_selector
from kubectl_safety.cli.drain_progress import DrainProgress
from kubectl_safety.cli.drain_reads import DrainReads
from kubectl_safety.cli.interaction import confirm, interrupts
from kubectl_safety.analysis.plans import Action
from kubectl_safety.cli.options import get_globals, global_options
from kubectl_safety.cli.published import published
from kubectl_safety.cli.render import as_text, emit, table
from kubectl_safety.cli.risks import render_risks, unaccepted_codes
from kubectl_safety.cli.session import Session
from kubectl_safety.errors import ExitCode, RefusedError, UsageError
from kubectl_safety.model.constants import API_VERSION
from kubectl_safety.model.duration import human_duration

EXIT = ("\b\nJSON kind: DrainPlan (--dry-run, or a refused drain) or DrainReport (after acting)\n"
        "Exit codes: 0 SAFE: the drain can complete and leaves no workload worse off (dry run) /\n"
        "nodes drained, 1 error, 2 usage, 3 not safe: risks not accepted (listed in risks[]; nothing\n"
        "evicted), 4 partial (timeout or a pod failed; nodes stay cordoned, run again to resume),\n"
        "130 interrupted (nodes stay cordoned).")


@click.command("drain", epilog=EXIT)
@click.argument("nodes", nargs=-1, shell_complete=complete_names)
@click.option("-l", "--selector", metavar="SELECTOR", help="Drain the nodes matching this label selector instead of NODEs.")
@click.option("--dry-run", default="none", is_flag=False, flag_value="client", callback=dry_run_value,
              metavar="[none|client|server]", shell_complete=complete_dry_run, help="client: print the plan, change nothing; server: also send the evictions "
                                        "allowed now with dryRun=All (bare --dry-run: client).")
@drain_flags(*KUBECTL, *ACTING)
@click.option("--timeout", default="0", show_default=True, metavar="DURATION",
              help="Give up after this long, e.g. 5m (0: wait forever). Nodes stay cordoned.")
@drain_flags("pod_selector", "disable_eviction")
@drain_flags(*SURGE)
@click.option("--chunk-size", type=int, default=500, show_default=True, metavar="N",
              help="List large collections in pages of this size (0: no paging).")
@global_options
def command(nodes, selector, dry_run, ignore_daemonsets, delete_emptydir_data, force, grace_period, timeout,
            pod_selector, disable_eviction, skip_wait_for_delete_timeout, chunk_size, no_capacity, accept_risk, order,
            yes, surge, surge_limit, wait_completed):
    """Plan a drain against PodDisruptionBudgets and capacity, then drain without breaking them.

    The plan lists every pod of the nodes with its action (evict, delete, wait, skip,
    blocked) and every reason: kubectl drain's filters, the Eviction API's rules,
    cumulative PDB budgets across pods and nodes (waves), and whether each replacement fits
    on a node that stays (the scheduler's filters, volumes included). The plan is SAFE only
    when nothing leaves a workload worse off; otherwise it lists its risks (exit 3), which
    --accept-risk accepts by name. Without --dry-run the nodes are cordoned and pods are
    evicted wave by wave, never more at once than the budgets allow; a plan that is not SAFE
    is refused.
    Flags mean what they mean for kubectl drain. On a terminal a confirmation is asked
    (--yes skips it); without a terminal --yes is required.

    \b
    Usage: kubectl safety drain (NODE... | -l SELECTOR) [--dry-run[=client|server]] [kubectl drain flags] [--yes]
    Examples:
      kubectl safety drain node-a1 --dry-run --ignore-daemonsets
      kubectl safety drain node-a1 --dry-run -o json --snapshot cluster.yaml | jq '.pods[] | select(.action=="blocked")'
      kubectl safety drain -l pool=blue --ignore-daemonsets --timeout 15m --yes
      kubectl safety drain node-a1 --dry-run=server --ignore-daemonsets --timeout 1m
      kubectl safety drain node-a1 --dry-run --ignore-daemonsets --no-capacity   # large cluster, budgets only
      kubectl safety drain node-d1 --ignore-daemonsets --force --accept-risk=unreachable --skip-wait-for-delete-timeout=60
    """
    s = Session(get_globals())
    extra = click.get_current_context().meta.get("node_after_dry_run")
    nodes = ((extra,) if extra else ()) + tuple(nodes)
    if bool(nodes) == bool(selector):
        raise UsageError("cannot specify both a node name and a --selector option" if nodes
                         else "specify the nodes to drain: kubectl safety drain NODE... or -l SELECTOR")
    deadline_seconds = duration(timeout, "--timeout")
    options = build_drain_options(click.get_current_context().params, deadline_seconds)
    if deadline_seconds and duration(s.g.request_timeout, "--request-timeout") == 0:
        s.limit_requests(timeout, "--timeout")  # a frozen API server cannot hold a request past --timeout
    node_sel = drain_selector(selector, "--selector")
    if dry_run == "none" or dry_run == "server":
        s.require_live("a drain" if dry_run == "none" else "--dry-run=server")
    ctx = _Drain(s, options, nodes, node_sel, chunk_size, selector)
    if dry_run == "none":  # plans again once cordoned: from watches, not a second read
        with ctx.watch():
            return _act(ctx, yes, deadline_seconds, order)
    snap, plan = ctx.plan()
    if dry_run == "client":
        emit(plan, s.g.output, render_plan)
        if not plan.safe and plan.surgeable:
            from kubectl_safety.cli.render import warn

            warn(surge_hint(plan)[2:] + " (make before break)")
        return ExitCode.OK if plan.safe else ExitCode.UNSAFE
    return ctx.server_dry_run(plan, deadline_seconds)


def _act(ctx, yes, deadline_seconds, order) -> int:
    _, plan = ctx.plan()
    if not plan.safe:
        emit(plan, ctx.s.g.output, render_plan)
        raise RefusedError("the drain is not safe: " + unaccepted_codes(plan)
                           + " (see risks; --accept-risk=CODE to go ahead anyway); nothing was changed"
                           + surge_hint(plan))
    _confirm(plan, yes)
    return ctx.run(plan, deadline_seconds, order)


def surge_hint(plan) -> str:
    """What --surge would make safe, for a refusal that did not use it."""
    if not plan.surgeable:
        return ""
    shown = ", ".join(plan.surgeable[:3]) + (", ..." if len(plan.surgeable) > 3 else "")
    return f"; --surge would replace the pods of {shown} before they go"


def _confirm(plan, yes):
    """On a terminal, show the plan with its risks, then ask; without one, --yes is required."""
    if not yes and sys.stdin.isatty():
        click.echo(as_text(published(plan), render_plan, stream=sys.stderr), err=True, nl=False)
    s = plan.counts()
    confirm(f"Cordon {', '.join(plan.node_names)} and evict {s[Action.EVICT] + s[Action.WAIT]} pod(s) "
            f"in {len(plan.waves)} wave(s), about {plan.estimated_seconds}s?", yes, "drain")


class _Drain(DrainReads):
    """One drain: its reads and plan, and the real or server-side dry-run execution."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.progress = DrainProgress()

    # -- real drain --------------------------------------------------------------------------
    def run(self, plan, timeout, order="default") -> int:
        """Cordon, re-plan the pods there once cordoned, let the engine drain them; report."""
        from kubectl_safety.engine.drain import cordon_and_drain
        from kubectl_safety.engine.drainer import Drainer
        from kubectl_safety.engine.watch import WatchGroup

        drainer = Drainer(self.s.connection("drain"), on_event=self.progress)
        started = time.monotonic()
        report = _Report(self.nodes, plan)
        with interrupts(drainer.executor, "stopping after the requests in flight; nodes stay cordoned"), \
                WatchGroup(drainer.connection) as group:  # the nodes' watches: plan, drainer
            run = cordon_and_drain(
                drainer, self.nodes, lambda: self.plan(group if self.view else None, self.nodes)[1], group=group,
                plan=plan, deadline=started + timeout if timeout else None, order=order,
                grace_period=self.options.grace_period if self.options.grace_period >= 0 else None,
                skip_wait_for_delete_timeout=self.options.skip_wait_for_delete_timeout)
        report.outcomes += [o.to_dict() for o in run.cordons]
        if run.failed is not None:
            report.finish(started, "error", f"unable to cordon node {run.failed.target!r}: {run.failed.message}")
            return self._emit(report, ExitCode.ERROR)
        result = run.result
        report.absorb(result)
        report.finish(started, result.status, result.message)
        if report.data["drained"]:
            for node in self.nodes:
                self.progress({"event": "drained", "pod": node})
        return self._emit(report, exit_code(result))

    def _emit(self, report, code) -> int:
        emit(report.to_dict(), self.s.g.output, render_report)
        return code

    # -- server dry run ----------------------------------------------------------------------
    def server_dry_run(self, plan, timeout) -> int:
        """The plan with the server's answers to its requests sent with dryRun=All (engine/drain.py)."""
        from kubectl_safety.engine.drain import server_dry_run

        plan = server_dry_run(self.s.connection("drain"), plan, timeout=timeout,
                              grace_period=self.options.grace_period if self.options.grace_period >= 0 else None,
                              on_event=self.progress,
                              interrupts=lambda executor: interrupts(
                                  executor, "stopping after the requests in flight; nodes stay cordoned"))
        emit(plan, self.s.g.output, render_plan)
        return ExitCode.OK if plan.safe else ExitCode.UNSAFE


def exit_code(result) -> int:
    """A drain's exit code: 0 drained, 3 blocked before anything moved, 130 interrupted, else 4."""
    if result.status == "blocked" and not (result.evicted or result.gone):
        return ExitCode.UNSAFE
    return {"drained": ExitCode.OK, "interrupted": ExitCode.INTERRUPTED}.get(result.status, ExitCode.PARTIAL)


class _Report:
    """The DrainReport being built while draining."""

    def __init__(self, nodes, plan):
        self.nodes = nodes
        self.initial = plan
        self.result = None
        self.outcomes = []
        self.data = None

    def absorb(self, result):
        self.result = result
        self.outcomes += result.outcomes

    def finish(self, started, status, message):
        r = self.result
        left = (r.left if r else []) + [  # the node is not empty: said, not chased
            {"namespace": a["pod"].split("/", 1)[0], "name": a["pod"].split("/", 1)[1], "node": a["node"],
             "action": "appeared", "reason": "came onto the drained node afterwards (it tolerates the cordon): "
                                             "reported, not evicted"} for a in (r.appeared if r else [])]
        self.data = {
            "kind": "DrainReport", "apiVersion": API_VERSION,
            "nodes": self.nodes, "status": status, "drained": status == "drained" and not left,
            "message": message, "elapsedSeconds": round(time.monotonic() - started, 1),
            "evicted": sorted(set(r.evicted)) if r else [], "goneMeanwhile": sorted(set(r.gone)) if r else [],
            "left": left, "appeared": r.appeared if r else [], "outcomes": self.outcomes,
            "requests": r.requests if r else {},
            "plan": {"summary": published(self.initial)["summary"], "waves": len(self.initial.waves),
                     "estimatedSeconds": self.initial.estimated_seconds},
        }
        if r is not None and r.surge is not None:
            self.data["surge"] = r.surge

    def to_dict(self):
        return self.data


# -- text rendering ------------------------------------------------------------------------------
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
        details = [(p, x) for p in r["pods"] for x in p["reasons"] if x["severity"] == "critical"]
        if details:
            lines.append("\nBlocked:")
            lines += [f"  {p['namespace']}/{p['name']}: {x['message']}" for p, x in details]
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
    if not r["drained"]:
        lines.append("The nodes stay cordoned; run the same command again to resume.")
    return "\n".join(lines) + "\n"
