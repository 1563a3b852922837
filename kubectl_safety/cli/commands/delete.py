"""``kubectl safety delete pod``: graceful by default; force only after an assessment and --confirm."""

import time
from dataclasses import replace

import click

from kubectl_safety.cli.completers import complete_dry_run, complete_names
from kubectl_safety.cli.groups import WholeHelpGroup
from kubectl_safety.cli.interaction import interrupts
from kubectl_safety.cli.options import get_globals, global_options
from kubectl_safety.cli.delete_flags import check_flags, dry_run_value, grace_period_of
from kubectl_safety.cli.delete_flags import refusal as refusal_of
from kubectl_safety.cli.delete_reads import Selection, kubeconfig_user, load_live, load_offline
from kubectl_safety.cli.render import emit, warn
from kubectl_safety.cli.session import Session
from kubectl_safety.cluster import threads
from kubectl_safety.errors import UsageError

WAIT_MARGIN = 60  # seconds added to the longest grace period for the default --wait timeout
FORCE_WARNING = ("Force deleting a pod does not wait for it to terminate: the API object is removed at once "
                 "while its containers may keep running on the node, and a replacement may start beside them.")
EXIT = "\b\nJSON kind: ForceDeleteAssessment (nothing changed) or DeleteReport (after acting)"


@click.group("delete", cls=WholeHelpGroup, epilog=EXIT)
@global_options(clock_alias=False)
def command():
    """Delete pods gracefully, or force-delete them only with --confirm.

    \b
    Usage: kubectl safety delete pod NAME... [flags]
    """


@command.command("pod", epilog=EXIT)
@click.argument("names", nargs=-1, shell_complete=complete_names)
@click.option("-l", "--selector", metavar="SELECTOR", help="Delete the pods matching this label selector instead of NAMEs.")
@click.option("--field-selector", metavar="SELECTOR",
              help="Delete the pods whose fields match (spec.nodeName=NODE: a dead node's pods), as kubectl.")
@click.option("--all", "all_pods", is_flag=True, help="Delete every pod in the namespace (-A: in every namespace).")
@click.option("--grace-period", type=click.IntRange(min=-1), default=None, metavar="N",
              help="Seconds to let the pod terminate (-1: the pod's own). 0 means 1 unless --force is given (as kubectl).")
@click.option("--now", "now_flag", is_flag=True, help="Signal the pods for immediate shutdown: --grace-period=1 (as kubectl).")
@click.option("--force", is_flag=True, help="Force delete (grace period 0): assess, then refuse unless --confirm.")
@click.option("--confirm", is_flag=True, help="Proceed with a force delete after the assessment "
                                              "(also when force is not needed: the output says so).")
@click.option("--dry-run", default="none", is_flag=False, flag_value="client", callback=dry_run_value,
              metavar="[none|client|server]", shell_complete=complete_dry_run, help="client: show what would happen; server: also send the DELETE "
                                                   "with dryRun=All. Bare --dry-run means client.")
@click.option("--wait/--no-wait", default=True, show_default=True,
              help="Wait until the pods are gone, with progress (--wait=false: return after the DELETE).")
@click.option("--timeout", metavar="DURATION", help="With --wait: give up after this long, a Go duration "
                                                    "(default: longest grace period + 60s).")
@click.option("--ignore-not-found", is_flag=True, help="Pods that do not exist are not an error.")
@click.option("--reason", metavar="TEXT", help="Why you force delete; recorded in the ForceDeleted Event.")
@global_options(clock_alias=False)
def delete_pod(names, selector, field_selector, all_pods, grace_period, now_flag, force, confirm, dry_run, wait,
               timeout, ignore_not_found, reason):
    """Delete pods: show the termination timeline, or for a force delete the risk assessment.

    A graceful delete lets the kubelet run preStop hooks, send SIGTERM and, after the grace
    period, SIGKILL. A force delete (--force, with no or a zero --grace-period) removes the API
    object at once; it is refused unless --confirm is given, and then recorded as a ForceDeleted
    Event. Flags mean what they mean for kubectl delete: --grace-period=0 without --force is a
    1-second graceful delete, --now is --grace-period=1, --wait is on by default.
    When force brings nothing (the node is Ready, or the pod finished or was never scheduled)
    the output says so; --confirm still proceeds then, as asked.

    \b
    Usage: kubectl safety delete pod (NAME... | pod/NAME... | -l SELECTOR [-A]) [-n NS] [--grace-period N | --now] [--force [--confirm]] [--dry-run[=client|server]] [--wait=false] [--ignore-not-found] [--reason TEXT]
    Examples:
      kubectl safety delete pod web-7d9f -n shop
      kubectl safety delete pod/web-7d9f -n=shop --now --wait=false
      kubectl safety delete pod db-2 -n shop --force                      # assessment only, exit 3
      kubectl safety delete pod db-2 -n shop --force --confirm --reason "node-d1 powered off (INC-42)"
      kubectl safety delete pod -l app=legacy -n shop --force --dry-run -o json
      kubectl safety delete pod -A --field-selector spec.nodeName=node-d1 --force   # a dead node's pods
    """
    s = Session(get_globals())
    extra = click.get_current_context().meta.get("delete.name_after_dry_run")
    names = ((extra,) if extra else ()) + tuple(names)
    grace_period = grace_period_of(grace_period, now_flag, force)
    check_flags(names, selector, grace_period, force, timeout, s.g.all_namespaces, field_selector, all_pods)
    if field_selector or all_pods:  # every pod of the namespace, then the selectors (one LIST live)
        selector = Selection(selector, field_selector)
    force = force and grace_period == 0
    dry = dry_run != "none"
    ns = None if s.g.all_namespaces else s.namespace
    snap, pods, storage, unreadable = (load_offline if s.offline else load_live)(s, ns, names, selector, force,
                                                                                   ignore_not_found)
    from kubectl_safety.analysis.force_delete import assess
    from kubectl_safety.cli.views.delete import delete_code, render
    from kubectl_safety.engine.delete_report import DeleteAction, DeleteReport, PodDeletion

    entries = [assess(p, snap, snap.taken_at, grace_period, force, storage=storage,
                      node_readable=p.node_name not in unreadable) for p in pods]
    report = DeleteReport(ns or "", force, confirm, dry, reason, ())
    if force and entries and s.g.output in ("table", "wide"):
        warn(FORCE_WARNING)
    if force and confirm:
        for e in entries:
            if not e.force_needed:
                warn(f"pod/{e.name}: {e.verdict}; proceeding with the force delete because --confirm was given")
    refusal = refusal_of(force, confirm, dry_run, s.offline)
    if isinstance(refusal, UsageError):  # a usage error prints no assessment
        raise refusal
    if refusal or dry_run == "client" or not entries:
        action = DeleteAction.REFUSED if refusal else DeleteAction.WOULD_DELETE
        emit(replace(report, pods=tuple(PodDeletion(e, action) for e in entries)), s.g.output, render)
        if refusal:
            raise refusal
        return delete_code(report)
    return _act(s, report, pods, entries, grace_period, wait and not dry, timeout, dry_run == "server")


# -- acting --------------------------------------------------------------------------------------

def _act(s, report, pods, entries, grace_period, wait, timeout, server_dry_run=False):
    """Let the engine send the DELETEs (with dryRun=All for --dry-run=server) and record force deletes;
    wait until gone; report."""
    from kubectl_safety.cli.views.delete import delete_code, progress, render
    from kubectl_safety.cluster.client import Result
    from kubectl_safety.engine.delete import Deleter
    from kubectl_safety.engine.delete_report import DeleteAction, PodDeletion

    conn = s.connection("delete pod")
    deleter = Deleter(conn, server_dry_run=server_dry_run, on_event=progress)
    force = report.force
    who = s.g.as_user or kubeconfig_user(conn)
    messages = {pod.key: _event_message(entry, who, report.reason) for pod, entry in zip(pods, entries)}
    deletions = deleter.delete(pods, grace_period=grace_period, force=force, event_messages=messages)
    done, results = [], []
    for pod, entry, deletion in zip(pods, entries, deletions):
        outcome, event = deletion.outcome, None
        if outcome.done and server_dry_run:
            action = DeleteAction.WOULD_DELETE
        elif outcome.done:
            action = DeleteAction.FORCE_DELETED if force else DeleteAction.DELETED
            done.append(pod)
            event = deletion.event
        elif outcome.result is Result.GONE:
            action = DeleteAction.ALREADY_GONE
        else:
            action = DeleteAction.FAILED
        results.append(PodDeletion(entry, action, outcome, event))
    gone = _wait(deleter, done, entries, timeout) if wait and done else {}
    report = replace(report, deleted=not server_dry_run,
                     pods=tuple(replace(r, gone=gone.get(pod.key)) for pod, r in zip(pods, results)))
    emit(report, s.g.output, render)
    interrupted = deleter.interrupted.is_set()
    if not interrupted and any(e.gone is False and e.assessment.node.partitioned and not e.assessment.force
                               for e in report.pods):
        warn("a pod on a partitioned node cannot finish a graceful delete; assess with --force")
    return delete_code(report, interrupted)


def _event_message(entry, who, reason) -> str:
    """The ForceDeleted Event's message: who, why, and the node state at the time."""
    node = entry.node
    return (f"force deleted by {who} with kubectl-safety; node {node.name or '-'} was {node.state.value}; "
            f"reason: {reason or '(none given)'}")


def _wait(deleter, pods, entries, timeout) -> dict:
    """Wait until the pods are gone, a countdown on a live status line (``--timeout``: a Go duration)."""
    import threading

    from kubectl_safety.model.duration import flag_seconds
    from kubectl_safety.cli.progress import Progress

    seconds = flag_seconds(timeout, "--timeout") if timeout else max(e.grace_period_seconds for e in entries) + WAIT_MARGIN
    deadline = time.monotonic() + seconds if seconds else None
    progress, stop = Progress(), threading.Event()

    def tick():
        while not stop.is_set():
            progress.status(f"waiting for {len(pods)} pod(s) to be gone",
                            None if deadline is None else deadline - time.monotonic())
            stop.wait(1.0)

    ticker = threads.start(tick, "countdown")
    try:
        with interrupts(deleter):
            return deleter.wait_gone(pods, deadline)
    finally:
        stop.set()
        ticker.join()
