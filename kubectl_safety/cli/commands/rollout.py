"""``kubectl safety rollout``: plan and run the maintenance of a node pool, batch by batch."""

import contextlib
import sys
from dataclasses import replace

import click

from kubectl_safety.cli.completers import complete_names
from kubectl_safety.cli.drain_flags import (ACTING, KUBECTL, SURGE, build_drain_options, drain_flags, dry_run_value)
from kubectl_safety.cli.engine_flags import check_engine_flags, engine_dry_run, engine_options
from kubectl_safety.cli.interaction import confirm, interrupts
from kubectl_safety.cli.options import get_globals, global_options
from kubectl_safety.cli.render import as_text, emit, warn
from kubectl_safety.cli.risks import unaccepted_codes
from kubectl_safety.cli.session import Session
from kubectl_safety.cli.report import verdict
from kubectl_safety.model.duration import flag_seconds
from kubectl_safety.errors import RefusedError, UsageError

EXIT = "\b\nJSON kind: RolloutPlan (--dry-run, or a refused rollout) or RolloutReport (after acting); EnginePlan (--engine)"
WAIT_FOR = ("boot-id", "kubelet-version")


def _wait_for(ctx, param, value):
    if value is None or value in WAIT_FOR or (value.startswith("label=") and len(value) > len("label=")):
        return value
    raise click.BadParameter("use boot-id, kubelet-version or label=KEY[=VALUE]")


def _no_server_dry_run(ctx, param, value):
    if value == "server":
        raise click.BadParameter("rollout has no server dry run: use --dry-run (client)")
    return dry_run_value(ctx, param, value)


@click.command("rollout", epilog=EXIT)
@click.argument("nodes", nargs=-1, shell_complete=complete_names)
@click.option("-l", "--selector", metavar="SELECTOR", help="The pool: nodes matching this label selector.")
@click.option("--dry-run", default="none", is_flag=False, flag_value="client", callback=_no_server_dry_run,
              metavar="[none|client]", help="Print the plan (batches, drain plans, risks), change nothing.")
@click.option("--max-unavailable", default="1", show_default=True, metavar="N|N%",
              help="Nodes maintained at once: a number or a percentage of the pool.")
@click.option("--by-zone", is_flag=True, help="One zone at a time: a batch never spans two zones.")
@click.option("--no-precordon", is_flag=True, help="Do not cordon the whole pool first (only each batch).")
@click.option("--skip-blocked", is_flag=True,
              help="Maintain the batches that are safe, leave the blocked nodes and name them (exit 3 at the end).")
@click.option("--keep-cordoned", is_flag=True, help="Leave the nodes cordoned after their maintenance.")
@click.option("--exec", "exec_command", metavar="CMD",
              help="Maintenance action, run once per drained node by the shell with NODE set; must exit 0.")
@click.option("--exec-timeout", default="10m", show_default=True, metavar="DURATION", help="Bound on each --exec.")
@click.option("--wait-for", callback=_wait_for, metavar="boot-id|kubelet-version|label=K[=V]",
              help="After --exec, wait until the node is Ready and this changed (default: Ready).")
@click.option("--ready-timeout", default="10m", show_default=True, metavar="DURATION",
              help="Bound on the wait for a node to come back.")
@click.option("--gate-timeout", default="5m", show_default=True, metavar="DURATION",
              help="Bound on the health gate after each batch (PDBs healthy, replacements Ready).")
@click.option("--timeout", default="0", show_default=True, metavar="DURATION",
              help="Bound on each batch's drain (0: none).")
@drain_flags(*KUBECTL, *ACTING)
@drain_flags(*SURGE)
@engine_options
@click.option("--lease-namespace", default="kube-system", show_default=True, metavar="NAMESPACE",
              help="Namespace of the Lease that makes the rollout exclusive.")
@click.option("--window", "windows", multiple=True, metavar='"DAYS HH:MM-HH:MM [ZONE]"',
              help='A maintenance window, e.g. "Mon-Fri 02:00-05:00 Europe/Berlin" (repeatable). A batch starts '
                   "only inside one that stays open for the batch's estimated duration; checked before every batch.")
@click.option("--outside-window", type=click.Choice(["wait", "stop"]), default="wait", show_default=True,
              help="When a window, an alert or a blocking pod says not now: wait (re-checking) or stop (resumable).")
@click.option("--block-on-alerts", metavar="URL",
              help="Prometheus base URL: any firing alert (GET /api/v1/alerts) holds the next batch; a failed query "
                   "holds it too. Checked before every batch and while waiting.")
@click.option("--alert-filter", metavar="REGEX",
              help="With --block-on-alerts: only alerts whose name or a label=value matches REGEX hold the rollout.")
@click.option("--blocking-pod-selector", metavar="SELECTOR",
              help="A pod matching this label selector that has not ended holds its node's batch (as kured's).")
@click.option("--pushgateway", metavar="URL",
              help="After each batch and at the end, push the rollout's metrics (kubectl_safety_rollout_*) to "
                   "this Pushgateway (job kubectl-safety, grouped by rollout).")
@click.option("--metrics-file", metavar="PATH",
              help="After each batch and at the end, write the rollout's metrics to PATH in the node exporter's "
                   "textfile-collector format (written whole, then renamed).")
@global_options
def command(nodes, selector, dry_run, max_unavailable, by_zone, no_precordon, skip_blocked, keep_cordoned, exec_command,
            exec_timeout, wait_for, ready_timeout, gate_timeout, timeout, order, ignore_daemonsets,
            delete_emptydir_data, force, grace_period, skip_wait_for_delete_timeout, no_capacity, accept_risk,
            lease_namespace, windows, outside_window, block_on_alerts, alert_filter, blocking_pod_selector,
            pushgateway, metrics_file, yes, surge, surge_limit, wait_completed, engine,
            engine_setting, management_kubeconfig, management_snapshot):
    """Maintain a node pool batch by batch: drain, maintain, wait for Ready, uncordon, check health.

    The pool is cordoned first (unless --no-precordon). The plan orders the nodes so PodDisruptionBudgets and topology spread stay satisfiable as long
    as possible (zones take turns, or one zone at a time with --by-zone) and shows, per batch, the
    drain plan (the same planner, risks and exit codes as drain), the capacity left and the
    estimated duration. Acting, each batch is drained by the shared engine (each pod evicted once,
    watched rather than polled), --exec runs once per node with NODE set, the node must come back
    Ready (--wait-for), and a health gate (PDBs back at their desired healthy count, every moved
    workload Ready again) must pass within --gate-timeout. Progress lives in the cluster (node
    annotations and a Lease naming the rollout): the same command resumes, a second rollout over
    the same nodes is refused with the holder's name.

    \b
    Usage: kubectl safety rollout (NODE... | -l SELECTOR) [--dry-run] [flags] [--yes]
    Examples:
      kubectl safety rollout -l pool=blue --dry-run --ignore-daemonsets
      kubectl safety rollout -l pool=blue --max-unavailable 25% --by-zone --ignore-daemonsets \\
          --exec './patch-and-reboot.sh "$NODE"' --wait-for boot-id --yes
      kubectl safety rollout node-a1 node-a2 --dry-run -o json | jq '.batches[] | {batch, nodes, safe}'
      kubectl safety rollout -l pool=blue --dry-run --engine eks --engine-setting maxUnavailable=2
    """
    from kubectl_safety.analysis.rollout_plan import BadMaxUnavailable, RolloutOptions, batch_size
    from kubectl_safety.cli.drain_reads import drain_planner
    from kubectl_safety.engine.rollout_planner import RolloutPlanner
    from kubectl_safety.model.selectors import LabelSelector

    s = Session(get_globals())
    extra = click.get_current_context().meta.get("node_after_dry_run")
    nodes = ((extra,) if extra else ()) + tuple(nodes)
    if bool(nodes) == bool(selector):
        raise UsageError("cannot specify both a node name and a --selector option" if nodes
                         else "specify the pool: kubectl safety rollout NODE... or -l SELECTOR")
    if wait_for and not exec_command and wait_for in WAIT_FOR:
        raise UsageError(f"--wait-for={wait_for} needs --exec (the maintenance that changes it)")
    seconds = {flag: flag_seconds(value, flag) for flag, value in
               (("--exec-timeout", exec_timeout), ("--ready-timeout", ready_timeout),
                ("--gate-timeout", gate_timeout), ("--timeout", timeout))}
    drain_options = build_drain_options(click.get_current_context().params, seconds["--timeout"])
    try:
        batch_size(max_unavailable, 1)
    except BadMaxUnavailable as e:
        raise UsageError(str(e)) from None
    try:
        node_sel = LabelSelector.from_string(selector) if selector else None
    except Exception:
        raise UsageError(f"--selector={selector} must be a valid label selector") from None
    check_engine_flags(click.get_current_context().params, dry_run)
    if dry_run == "none":
        s.require_live("a rollout")
    loader = drain_planner(s, drain_options, nodes, node_sel, 500, selector)
    planner = RolloutPlanner(loader, nodes, node_sel, selector)
    flags = dict(precordon=not no_precordon, keep_cordoned=keep_cordoned, exec_command=exec_command,
                 wait_for=wait_for, order=order, lease_namespace=lease_namespace)
    sinks = dict(pushgateway=pushgateway, metrics_file=metrics_file)
    gates = _gate_options(windows, outside_window, block_on_alerts, alert_filter, blocking_pod_selector)
    options = RolloutOptions(drain=drain_options, max_unavailable=max_unavailable, by_zone=by_zone,
                             precordon=not no_precordon, maintenance=bool(exec_command), skip_blocked=skip_blocked)
    # acting, batches are planned again: from watches (LIST once + WATCH), never by re-reading the cluster
    with loader.watch() if dry_run == "none" else contextlib.nullcontext():
        snap, pool = planner.pool()
        if engine:
            return engine_dry_run(snap, pool, click.get_current_context().params, s.g.output)
        from kubectl_safety.cli.views.rollout import render_plan, rollout_code

        planned = planner.plan(snap, pool, options, gates)
        plan = planned.plan
        if dry_run == "client":
            emit(plan, s.g.output, render_plan)
            return verdict(plan)
        left = plan.left_nodes if skip_blocked and not plan.safe and any(b.safe for b in plan.batches) else None
        if left:  # the safe batches go; the blocked nodes are named at the end
            safe = replace(plan, batches=tuple(b for b in plan.batches if b.safe))
            report = _act(s, loader, replace(planned, plan=safe), drain_options, seconds, yes, flags, sinks, gates)
            click.echo(f"error: {len(left)} node(s) left, blocked (--skip-blocked): {', '.join(left)}", err=True)
            return rollout_code(report, blocked_left=True)
        if not plan.safe:
            emit(plan, s.g.output, render_plan)
            raise RefusedError("the rollout is not safe: " + unaccepted_codes(plan)
                               + " (see risks; --accept-risk=CODE to go ahead anyway); nothing was changed")
        return rollout_code(_act(s, loader, planned, drain_options, seconds, yes, flags, sinks, gates))


def _gate_options(windows, outside, alerts, alert_filter, selector):
    """The gates' flags checked and parsed (None: no gate asked for)."""
    import re

    from kubectl_safety.model.selectors import LabelSelector
    from kubectl_safety.model.windows import parse_window

    if alert_filter and not alerts:
        raise UsageError("--alert-filter needs --block-on-alerts")
    if not (windows or alerts or selector):
        return None
    try:
        parsed = [parse_window(w) for w in windows]
    except ValueError as e:
        raise UsageError(f"--window {e}") from None
    if alerts and not alerts.startswith(("http://", "https://")):
        raise UsageError(f"--block-on-alerts={alerts} must be an http:// or https:// URL")
    try:
        re.compile(alert_filter or "")
    except re.error as e:
        raise UsageError(f"--alert-filter={alert_filter} is not a regular expression: {e}") from None
    try:
        pod_selector = LabelSelector.from_string(selector) if selector else None
    except Exception:
        raise UsageError(f"--blocking-pod-selector={selector} must be a valid label selector") from None
    return dict(windows=parsed, window_texts=tuple(windows), outside=outside, alerts=alerts,
                alert_filter=alert_filter, selector=pod_selector, selector_text=selector)


def _act(s, loader, planned, drain_options, seconds, yes, flags, sinks, gates):
    from kubectl_safety.cli.views.rollout import progress as progress_printer
    from kubectl_safety.cli.views.rollout import render_report
    from kubectl_safety.engine.rollout import Rollout, RolloutSpec
    from kubectl_safety.engine.rollout_metrics import MetricsSink
    from kubectl_safety.engine.rollout_report import PlanBrief

    snap, pool, plan = planned.snapshot, planned.pool, planned.plan
    connection = s.connection("rollout")
    spec = RolloutSpec(name=planned.name, nodes=pool, batches=[list(b.nodes) for b in plan.batches],
                       exec_timeout=seconds["--exec-timeout"], ready_timeout=seconds["--ready-timeout"],
                       gate_timeout=seconds["--gate-timeout"], drain_timeout=seconds["--timeout"],
                       grace_period=drain_options.grace_seconds,
                       skip_wait_for_delete_timeout=drain_options.skip_wait_for_delete_timeout,
                       states={n: st for n, st in planned.states.items() if st}, surges=planned.surges,
                       **flags)
    progress = progress_printer()
    metrics = MetricsSink(planned.name, **sinks, warn=warn) if any(sinks.values()) else None
    if metrics is not None:
        progress = metrics.observing(progress)


    checks = None
    if gates is not None:
        from kubectl_safety.engine.gates import RolloutGates

        checks = RolloutGates(connection, windows=gates["windows"], outside=gates["outside"], alerts=gates["alerts"],
                              alert_filter=gates["alert_filter"], blocking_selector=gates["selector_text"],
                              estimates=[b.estimated_seconds for b in plan.batches])
        if metrics is not None:
            metrics.held = lambda: checks.held
    rollout = Rollout(connection, spec, planner=loader, on_event=progress,
                      before_batch=checks.before_batch if checks is not None else None,
                      after_batch=metrics.publish if metrics is not None else None)
    if checks is not None:
        checks.emit, checks.interrupted = rollout.emit, rollout.interrupted
    rollout.check_exclusive([snap.node(n).raw for n in pool])
    _confirm(plan, yes)
    with interrupts(rollout.executor, "stopping after the current step; progress is kept, run again to resume"):
        report = replace(rollout.run(), plan=PlanBrief(len(plan.batches), plan.estimated_seconds, plan.done))
    if metrics is not None:
        metrics.publish(report)
    emit(report, s.g.output, render_report)
    return report


def _confirm(plan, yes):
    if not yes and sys.stdin.isatty():
        from kubectl_safety.cli.published import published
        from kubectl_safety.cli.views.rollout import render_plan

        click.echo(as_text(published(plan), render_plan, stream=sys.stderr), err=True, nl=False)
    confirm(f"Maintain {len(plan.nodes) - len(plan.done)} node(s) in {len(plan.batches)} batch(es), "
            f"about {plan.estimated_seconds}s?", yes, "roll out")

