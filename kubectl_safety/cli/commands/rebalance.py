"""``kubectl safety rebalance``: restore topology spread with the fewest evictions, within PDBs."""

import dataclasses
import sys
import time

import click

from kubectl_safety.cli import registry
from kubectl_safety.cli.completers import complete_names
from kubectl_safety.cli.interaction import confirm, interrupts
from kubectl_safety.cli.options import get_globals, global_options
from kubectl_safety.cli.render import as_text, emit
from kubectl_safety.cli.risks import accepted_risks, unaccepted_codes
from kubectl_safety.cli.session import Session
from kubectl_safety.model.duration import flag_seconds
from kubectl_safety.errors import RefusedError, UsageError

EXIT = "\b\nJSON kind: RebalancePlan (with an 'execution' section after acting)"


def _dry_run_mode(ctx, param, value):
    """kubectl's ``--dry-run[=none|client|server]`` (bare: client; a following word is the WORKLOAD)."""
    if value in ("none", "client", "server"):
        return value
    ctx.meta["workload_after_dry_run"] = value
    return "client"


@click.command("rebalance", epilog=EXIT)
@click.argument("workload", required=False, shell_complete=complete_names)
@click.option("-l", "--selector", metavar="SELECTOR", help="Rebalance the workloads owning the pods matching this label selector.")
@click.option("--dry-run", default="none", is_flag=False, flag_value="client", callback=_dry_run_mode,
              metavar="[none|client|server]", help="client (bare --dry-run): show the plan, evict nothing; "
              "server: also send the first round's evictions with dryRun=All.")
@click.option("--max-evictions", type=click.IntRange(min=0), metavar="N", help="Plan at most N evictions.")
@click.option("--wait", is_flag=True, help="After each round wait for the replacements to be scheduled and ready, measure again and continue.")
@click.option("--max-rounds", type=click.IntRange(min=1), default=5, show_default=True, metavar="N", help="With --wait: at most N rounds of evictions.")
@click.option("--timeout", default="10m", show_default=True, metavar="DURATION", help="Give up (exit 4) after this long.")
@click.option("--include-soft", is_flag=True, help="Also rebalance ScheduleAnyway constraints.")
@click.option("--cluster-defaults", is_flag=True, help="Judge pods without constraints by the scheduler's built-in defaults (hostname maxSkew 3, zone maxSkew 5).")
@click.option("--evict-local-storage", is_flag=True, help="Allow evicting pods with emptyDir/hostPath volumes (their data is lost).")
@click.option("--accept-risk", "accept_risk", multiple=True, metavar="CODE[,CODE]",
              help="Go ahead despite these risks (codes of risks[], as for drain); repeatable.")
@click.option("-y", "--yes", is_flag=True, help="Do not ask for confirmation (required when stdin is not a terminal).")
@global_options
def command(workload, selector, dry_run, max_evictions, wait, max_rounds, timeout, include_soft,
            cluster_defaults, evict_local_storage, accept_risk, yes):
    """Restore topology spread by evicting the fewest pods, within PodDisruptionBudgets.

    Skew is counted as the scheduler counts it. The plan simulates each eviction and where the
    scheduler would re-place the pod (it assumes the least-loaded feasible domain), evicts
    lowest priority, then not-ready, then newest pods first, and never makes another
    constraint worse. Without WORKLOAD every Deployment, StatefulSet and ReplicaSet of the
    namespace (or all, with -A) is checked. Acting evicts one round (what the PDBs allow now);
    --wait waits for the replacements, measures again and continues. On a terminal a
    confirmation is asked (--yes skips it); without a terminal --yes is required.

    \b
    Usage: kubectl safety rebalance [WORKLOAD | -l SELECTOR] [-n NS | -A] [--dry-run] [--max-evictions N] [--wait] [--include-soft] [--yes]
    WORKLOAD: deployment/NAME (deploy/), statefulset/NAME (sts/), replicaset/NAME (rs/)
    Examples:
      kubectl safety rebalance deployment/web -n shop --dry-run
      kubectl safety rebalance deployment/web -n shop --dry-run=server
      kubectl safety rebalance deployment/web -n shop --wait --yes
      kubectl safety rebalance -A --dry-run -o json | jq .constraints
      kubectl safety rebalance deploy/web -n shop --dry-run --snapshot cluster.yaml
    """
    from kubectl_safety.analysis.rebalance import RebalanceOptions
    from kubectl_safety.engine.rebalance_planner import RebalancePlanner

    s = Session(get_globals())
    after = click.get_current_context().meta.get("workload_after_dry_run")
    if after and workload:
        raise UsageError(f"one WORKLOAD only: got {after} and {workload}")
    workload = workload or after
    server = dry_run == "server"
    dry_run = dry_run != "none"
    target = _parse_workload(workload) if workload else None
    if target and selector:
        raise UsageError("give WORKLOAD or -l SELECTOR, not both")
    if target and s.g.all_namespaces:
        raise UsageError("WORKLOAD names one workload in one namespace: drop -A")
    if (server or not dry_run) and s.offline:
        raise UsageError(f"{'--dry-run=server' if server else 'rebalance'} needs a live cluster: --snapshot files "
                         "can only be planned (add --dry-run)")
    accepted = accepted_risks(accept_risk)
    options = RebalanceOptions(include_soft=include_soft, cluster_defaults=cluster_defaults,
                               evict_local_storage=evict_local_storage, max_evictions=max_evictions,
                               accept_risks=accepted)
    scope = {"namespace": None if s.g.all_namespaces else s.namespace, "workload": target, "selector": selector}
    seconds = flag_seconds(timeout, "--timeout")
    planner = RebalancePlanner(lambda queries: s.snapshot(() if s.offline else queries, "rebalance"), scope, options)
    snap, plan = planner.plan()
    from kubectl_safety.cli.views.rebalance import rebalance_plan_code, render, server_progress

    if server:
        from kubectl_safety.engine.rebalancer import server_dry_run

        plan = server_dry_run(s.connection("rebalance"), snap, plan, accepted=accepted, timeout=seconds,
                              on_event=server_progress, interrupts=interrupts)
    if dry_run or not plan.evictions:
        emit(plan, s.g.output, render)
        return rebalance_plan_code(plan)
    if not plan.safe:
        emit(plan, s.g.output, render)
        raise RefusedError(f"the rebalance is not safe: {unaccepted_codes(plan)} (see risks; --accept-risk=CODE to go ahead anyway); "
                           "nothing was changed")
    _confirm(plan, yes)
    return _execute(s, planner, snap, plan, wait, max_rounds, seconds)


def _parse_workload(text):
    kind, _, name = text.partition("/")
    workload = registry.resource(kind)
    if not name or workload not in registry.command("rebalance").takes:
        raise UsageError(f"invalid WORKLOAD {text!r}: use deployment/NAME, statefulset/NAME or replicaset/NAME")
    return workload.kind, name


def _confirm(plan, yes):
    """Like drain: ask on a terminal (after showing the plan); without one, --yes is required."""
    if not yes and sys.stdin.isatty():
        from kubectl_safety.cli.published import published
        from kubectl_safety.cli.views.rebalance import render

        click.echo(as_text(published(plan), render, stream=sys.stderr), err=True)
    confirm(f"Evict {len(_round_one(plan))} pod(s) now?", yes, "rebalance")


def _round_one(plan) -> list:
    from kubectl_safety.engine.rebalancer import first_round

    return first_round(plan)


# -- acting --------------------------------------------------------------------------------------

def _execute(s, planner, snap, plan, wait, max_rounds, seconds):
    """The engine evicts round by round; with --wait it waits for health, measures and plans again."""
    from kubectl_safety.cli.views.rebalance import progress, rebalance_code, render
    from kubectl_safety.engine.rebalance_report import ExecutedRebalance
    from kubectl_safety.engine.rebalancer import Rebalancer

    engine = Rebalancer(s.connection("rebalance"), on_event=progress)
    deadline = time.monotonic() + seconds if seconds else None
    with interrupts(engine.executor):
        execution = engine.run(snap, plan, measure=planner.plan, wait=wait, max_rounds=max_rounds, deadline=deadline)
    execution = dataclasses.replace(execution, interrupted=engine.executor.interrupted.is_set())
    executed = ExecutedRebalance(plan, execution)
    emit(executed, s.g.output, render)
    return rebalance_code(executed)

