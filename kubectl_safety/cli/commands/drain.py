"""``kubectl safety drain``: simulate a drain against PodDisruptionBudgets, then drain safely."""

import sys

import click

from kubectl_safety.cli.completers import complete_dry_run, complete_names
from kubectl_safety.cli.drain_flags import (ACTING, KUBECTL, SURGE, build_drain_options, drain_flags, dry_run_value)
from kubectl_safety.cli.drain_flags import selector as drain_selector
from kubectl_safety.cli.drain_progress import DrainProgress
from kubectl_safety.cli.drain_reads import drain_planner
from kubectl_safety.cli.engine_flags import check_engine_flags, engine_dry_run, engine_options
from kubectl_safety.cli.interaction import confirm, interrupts
from kubectl_safety.cli.options import get_globals, global_options
from kubectl_safety.cli.render import as_text, emit
from kubectl_safety.cli.risks import unaccepted_codes
from kubectl_safety.cli.session import Session
from kubectl_safety.cli.report import verdict
from kubectl_safety.model.duration import flag_seconds
from kubectl_safety.errors import RefusedError, UsageError

EXIT = "\b\nJSON kind: DrainPlan (--dry-run, or a refused drain) or DrainReport (after acting); EnginePlan (--engine)"


@click.command("drain", epilog=EXIT)
@click.argument("nodes", nargs=-1, shell_complete=complete_names)
@click.option("-l", "--selector", metavar="SELECTOR", help="Drain the nodes this label selector matches.")
@click.option("--dry-run", default="none", is_flag=False, flag_value="client", callback=dry_run_value,
              metavar="[none|client|server]", shell_complete=complete_dry_run, help="client: print the plan, change nothing; server: also send the evictions "
                                        "allowed now with dryRun=All (bare --dry-run: client).")
@drain_flags(*KUBECTL, *ACTING)
@click.option("--timeout", default="0", show_default=True, metavar="DURATION",
              help="Give up after this long, e.g. 5m (0: wait forever). Nodes stay cordoned.")
@drain_flags("pod_selector", "disable_eviction")
@drain_flags(*SURGE)
@engine_options
@click.option("--chunk-size", type=int, default=500, show_default=True, metavar="N",
              help="List large collections in pages of this size (0: no paging).")
@global_options
def command(nodes, selector, dry_run, ignore_daemonsets, delete_emptydir_data, force, grace_period, timeout,
            pod_selector, disable_eviction, skip_wait_for_delete_timeout, chunk_size, no_capacity, accept_risk, order,
            yes, surge, surge_limit, wait_completed, engine, engine_setting,
            management_kubeconfig, management_snapshot):
    """Plan a drain against PodDisruptionBudgets and capacity, then drain without breaking them.

    The plan lists every pod of the nodes with its action (evict, delete, wait, skip,
    blocked) and every reason: kubectl drain's filters, the Eviction API's rules, PDB
    budgets across pods and nodes (waves), and whether each replacement fits on a node
    that stays (the scheduler's filters). It is SAFE only when nothing leaves a workload
    worse off; else it lists its risks (exit 3), which --accept-risk accepts by name.
    Without --dry-run the nodes are cordoned and pods evicted wave by wave within the
    budgets; a plan that is not SAFE is refused. Flags mean what they mean for kubectl
    drain; --yes skips the confirmation (required without a terminal).

    \b
    Usage: kubectl safety drain (NODE... | -l SELECTOR) [--dry-run[=client|server]] [kubectl drain flags] [--yes]
    Examples:
      kubectl safety drain node-a1 --dry-run --ignore-daemonsets
      kubectl safety drain node-a1 --dry-run -o json --snapshot cluster.yaml | jq '.pods[] | select(.action=="blocked")'
      kubectl safety drain -l pool=blue --ignore-daemonsets --timeout 15m --yes
      kubectl safety drain node-a1 --dry-run=server --ignore-daemonsets --timeout 1m
      kubectl safety drain node-a1 --dry-run --ignore-daemonsets --no-capacity   # large cluster, budgets only
      kubectl safety drain node-d1 --ignore-daemonsets --force --accept-risk=unreachable --skip-wait-for-delete-timeout=60
      kubectl safety drain node-a1 --dry-run --engine aks --engine-setting drainTimeoutInMinutes=60
    """
    s = Session(get_globals())
    extra = click.get_current_context().meta.get("node_after_dry_run")
    nodes = ((extra,) if extra else ()) + tuple(nodes)
    if bool(nodes) == bool(selector):
        raise UsageError("cannot specify both a node name and a --selector option" if nodes
                         else "specify the nodes to drain: kubectl safety drain NODE... or -l SELECTOR")
    deadline_seconds = flag_seconds(timeout, "--timeout")
    options = build_drain_options(click.get_current_context().params, deadline_seconds)
    if deadline_seconds and flag_seconds(s.g.request_timeout, "--request-timeout") == 0:
        s.limit_requests(timeout, "--timeout")  # a frozen API server cannot hold a request past --timeout
    node_sel = drain_selector(selector, "--selector")
    check_engine_flags(click.get_current_context().params, dry_run)
    if dry_run == "none" or dry_run == "server":
        s.require_live("a drain" if dry_run == "none" else "--dry-run=server")
    ctx = _Drain(s, drain_planner(s, options, nodes, node_sel, chunk_size, selector))
    if dry_run == "none":  # plans again once cordoned: from watches, not a second read
        with ctx.planner.watch():
            return _act(ctx, yes, deadline_seconds, order)
    snap, plan = ctx.planner.plan()
    if engine:
        return engine_dry_run(snap, ctx.planner.nodes, click.get_current_context().params, s.g.output)
    if dry_run == "client":
        from kubectl_safety.cli.views.drain import render_plan

        emit(plan, s.g.output, render_plan)
        if not plan.safe and plan.surgeable:
            from kubectl_safety.cli.render import warn

            warn(surge_hint(plan)[2:] + " (make before break)")
        return verdict(plan)
    return ctx.server_dry_run(plan, deadline_seconds)


def _act(ctx, yes, deadline_seconds, order) -> int:
    _, plan = ctx.planner.plan()
    if not plan.safe:
        from kubectl_safety.cli.views.drain import render_plan

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
    unblocks = {True: ", and the drain would be safe", False: ", but the drain would still not be safe"}
    return f"; --surge would replace the pods of {shown} before they go{unblocks.get(plan.safe_with_surge, '')}"


def _confirm(plan, yes):
    """On a terminal, show the plan with its risks, then ask; without one, --yes is required."""
    from kubectl_safety.analysis.plans.common import Action
    from kubectl_safety.cli.published import published
    from kubectl_safety.cli.views.drain import render_plan

    if not yes and sys.stdin.isatty():
        click.echo(as_text(published(plan), render_plan, stream=sys.stderr), err=True, nl=False)
    s = plan.counts()
    confirm(f"Cordon {', '.join(plan.node_names)} and evict {s[Action.EVICT] + s[Action.WAIT]} pod(s) "
            f"in {len(plan.waves)} wave(s), about {plan.estimated_seconds}s?", yes, "drain")


class _Drain:
    """One drain: its planner (reads and plan), and the real or server-side dry-run execution."""

    def __init__(self, s, planner):
        self.s, self.planner = s, planner
        self.options = planner.options
        self.progress = DrainProgress()

    # -- real drain --------------------------------------------------------------------------
    def run(self, plan, timeout, order="default") -> int:
        """Let the engine cordon, plan the pods there again once cordoned (from watches) and drain them; report."""
        from kubectl_safety.cli.views.drain import drain_code, render_report
        from kubectl_safety.engine.drain import drain_nodes
        from kubectl_safety.engine.drainer import Drainer

        drainer = Drainer(self.s.connection("drain"), on_event=self.progress)
        with interrupts(drainer.executor, "stopping after the requests in flight; nodes stay cordoned"):
            report = drain_nodes(
                drainer, self.planner.nodes, self.planner, plan=plan, timeout=timeout, order=order,
                grace_period=self.options.grace_seconds,
                skip_wait_for_delete_timeout=self.options.skip_wait_for_delete_timeout)
        emit(report, self.s.g.output, render_report)
        return drain_code(report)

    # -- server dry run ----------------------------------------------------------------------
    def server_dry_run(self, plan, timeout) -> int:
        """The plan with the server's answers to its requests sent with dryRun=All (engine/drain.py)."""
        from kubectl_safety.cli.views.drain import render_plan
        from kubectl_safety.engine.drain import server_dry_run

        plan = server_dry_run(self.s.connection("drain"), plan, timeout=timeout,
                              grace_period=self.options.grace_seconds,
                              on_event=self.progress,
                              interrupts=lambda executor: interrupts(
                                  executor, "stopping after the requests in flight; nodes stay cordoned"))
        emit(plan, self.s.g.output, render_plan)
        return verdict(plan)

