"""``kubectl safety delete pod``: graceful by default; force only after an assessment and --confirm."""

import time

import click

from kubectl_safety.cli.completers import complete_dry_run, complete_names
from kubectl_safety.cli.groups import WholeHelpGroup
from kubectl_safety.cli.interaction import interrupts
from kubectl_safety.cli.options import get_globals, global_options
from kubectl_safety.cli.render import emit, table, warn
from kubectl_safety.cli.session import Session
from kubectl_safety.cli.report import ExitCode
from kubectl_safety.errors import ClusterError, NotFoundError, RefusedError, UsageError
from kubectl_safety.model.constants import API_VERSION
from kubectl_safety.model.duration import human_duration

WAIT_MARGIN = 60  # seconds added to the longest grace period for the default --wait timeout
WORDS = {"refused": "refused", "wouldDelete": "would be deleted", "deleted": "deleted",
         "forceDeleted": "force deleted", "alreadyGone": "already gone", "failed": "failed"}
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


def _dry_run_value(ctx, param, value):
    """kubectl's ``--dry-run[=none|client|server]`` (bare: client); a following word that is no mode is a NAME."""
    if value in ("none", "client", "server"):
        return value
    ctx.meta["delete.name_after_dry_run"] = value
    return "client"


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
@click.option("--dry-run", default="none", is_flag=False, flag_value="client", callback=_dry_run_value,
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
    grace_period = _grace(grace_period, now_flag, force)
    _check_flags(names, selector, grace_period, force, timeout, s.g.all_namespaces, field_selector, all_pods)
    if field_selector or all_pods:  # every pod of the namespace, then the selectors (one LIST live)
        selector = Selection(selector, field_selector)
    force = force and grace_period == 0
    dry = dry_run != "none"
    ns = None if s.g.all_namespaces else s.namespace
    snap, pods, storage, unreadable = (_load_offline if s.offline else _load_live)(s, ns, names, selector, force,
                                                                                   ignore_not_found)
    from kubectl_safety.analysis.force_delete import assess

    entries = [assess(p, snap, snap.taken_at, grace_period, force, storage=storage,
                      node_readable=p.node_name not in unreadable) for p in pods]
    report = {"kind": "ForceDeleteAssessment", "apiVersion": API_VERSION, "namespace": ns or "", "force": force,
              "confirmed": confirm, "dryRun": dry, "reason": reason, "pods": entries}
    if force and entries and s.g.output in ("table", "wide"):
        warn(FORCE_WARNING)
    if force and confirm:
        for e in entries:
            if not e["forceNeeded"]:
                warn(f"pod/{e['name']}: {e['verdict']}; proceeding with the force delete because --confirm was given")
    refusal = _refusal(force, confirm, dry_run, s.offline)
    if isinstance(refusal, UsageError):  # a usage error prints no assessment
        raise refusal
    if refusal or dry_run == "client" or not entries:
        for e in entries:
            e["action"] = "refused" if refusal else "wouldDelete"
        emit(_summarize(report), s.g.output, render)
        if refusal:
            raise refusal
        return ExitCode.OK
    return _act(s, report, pods, grace_period, wait and not dry, timeout, dry_run == "server")


def _grace(grace_period, now, force):
    """kubectl's rules: --now is 1 s; 0 without --force is 1 s; --force alone is 0; -1 is the pod's own."""
    if now:
        if grace_period is not None:
            raise UsageError("--now and --grace-period cannot be specified together")
        return 1
    if grace_period == -1:
        grace_period = None
    if grace_period == 0 and not force:
        return 1  # as kubectl: only --force bypasses this conversion
    if force and grace_period is None:
        return 0
    return grace_period


def _check_flags(names, selector, grace_period, force, timeout, all_namespaces, field_selector=None, all_pods=False):
    if names and (selector or field_selector or all_pods):
        raise UsageError("give pod NAMEs or -l/--field-selector/--all, not both")
    if not names and not selector and not field_selector and not all_pods:
        raise UsageError("give at least one pod NAME, -l SELECTOR, --field-selector SELECTOR or --all")
    if all_pods and (selector or field_selector):
        raise UsageError("--all cannot be used with -l or --field-selector")
    if field_selector:
        from kubectl_safety.model.field_selector import FieldSelectorError, parse

        try:
            parse(field_selector)
        except FieldSelectorError as e:
            raise UsageError(f"--field-selector={field_selector}: {e}") from None
    if names and all_namespaces:
        raise UsageError("a resource cannot be retrieved by name across all namespaces: use -n NAMESPACE")
    if force and grace_period:
        raise UsageError("--force deletes with grace period 0: drop --grace-period, or drop --force for a graceful delete")
    if timeout:
        from kubectl_safety.cli.options import duration_flag

        duration_flag(timeout, "--timeout")


def _refusal(force, confirm, dry_run, offline):
    """Why nothing may be changed (the error to raise), or None. Force without --confirm is refused in
    every mode."""
    if force and not confirm:
        return RefusedError("refused: force deletion needs --confirm (nothing was changed); "
                            "review the assessment above")
    if offline and dry_run != "client":
        return UsageError("delete needs a live cluster: --snapshot files can only be assessed (add --dry-run)")
    return None


# -- reading -------------------------------------------------------------------------------------

class Selection(str):
    """-l, --field-selector and --all together: the label selector (as a string, possibly empty) and the fields."""

    def __new__(cls, labels, fields):
        made = super().__new__(cls, labels or "")
        made.fields = fields
        return made

    def __bool__(self):
        return True  # --all: a selection, even without a selector


def _select(candidates, ns, names, selector, ignore_not_found=False):
    """The pods named or selected (``ns`` None: every namespace, with a selector only)."""
    from kubectl_safety.model.selectors import LabelSelector

    if selector:
        sel = LabelSelector.from_string(selector) if str(selector) else None
        fields = getattr(selector, "fields", None)
        if fields:
            from kubectl_safety.model.field_selector import matches, parse

            terms = parse(fields)
        return [p for p in candidates if ns in (None, p.namespace) and (sel is None or sel.matches(p.labels))
                and (not fields or matches(terms, p.raw))]
    by_name = {p.name: p for p in candidates if p.namespace == ns}
    missing = [n for n in names if n not in by_name]
    if missing and not ignore_not_found:
        raise NotFoundError(f'pod "{missing[0]}" not found in namespace "{ns}"')
    return [by_name[n] for n in dict.fromkeys(names) if n in by_name]


def _load_offline(s, ns, names, selector, force, ignore_not_found=False):
    snap = s.snapshot((), "delete pod")
    pods = snap.pods if ns is None else snap.pods_in(ns)
    return snap, _select(pods, ns, names, selector, ignore_not_found), (), set()


def _load_live(s, ns, names, selector, force, ignore_not_found=False):
    """The pods, their nodes (a 404 means the Node is gone), and for a force delete their claims."""
    from kubectl_safety.cluster.source import Query, fetch
    from kubectl_safety.model.parse import build_snapshot

    conn = s.connection("delete pod")
    queries = ([Query("pods", ns, label_selector=str(selector) or None,
                      field_selector=getattr(selector, "fields", None))] if selector
               else [Query("pods", ns, name=n) for n in dict.fromkeys(names)])
    objects = []
    for query in queries:
        try:
            objects += list(fetch(conn, [query]))
        except NotFoundError:
            if not ignore_not_found:
                raise
    unreadable = set()
    for node in sorted({(o.get("spec") or {}).get("nodeName") for _, o in objects} - {None, ""}):
        try:
            found = conn.get("nodes", node, optional=True)
        except ClusterError as e:
            if "Forbidden" not in str(e):
                raise
            warn(f"{e} (the state of node {node} is unknown)")
            unreadable.add(node)
            continue
        if found is not None:
            objects.append(("nodes from the API server", found))
    storage = _read_storage(conn, [o for _, o in objects if o.get("kind") == "Pod"]) if force else []
    snap = build_snapshot(objects, taken_at=s.now(), source=f"cluster {conn.host}")
    return snap, _select(snap.pods, ns, names, selector, ignore_not_found), storage, unreadable


def _read_storage(conn, pods) -> list:
    """The pods' PersistentVolumeClaims and bound PersistentVolumes, as far as we may read them."""
    out = []
    for pod in pods:
        ns = pod["metadata"].get("namespace")
        for v in (pod.get("spec") or {}).get("volumes") or []:
            claim = (v.get("persistentVolumeClaim") or {}).get("claimName")
            pvc = _optional_get(conn, "persistentvolumeclaims", claim, ns) if claim else None
            if pvc is None:
                continue
            out.append(pvc)
            volume = (pvc.get("spec") or {}).get("volumeName")
            pv = _optional_get(conn, "persistentvolumes", volume) if volume else None
            if pv is not None:
                out.append(pv)
    return out


def _optional_get(conn, resource, name, namespace=None):
    """GET or None when missing or forbidden (the assessment then says what it could not read)."""
    try:
        return conn.get(resource, name, namespace, optional=True)
    except ClusterError as e:
        if "Forbidden" in str(e):
            return None
        raise


# -- acting --------------------------------------------------------------------------------------

def _act(s, report, pods, grace_period, wait, timeout, server_dry_run=False):
    """Let the engine send the DELETEs (with dryRun=All for --dry-run=server) and record force deletes;
    wait until gone; report."""
    from kubectl_safety.engine.delete import Deleter

    conn = s.connection("delete pod")
    deleter = Deleter(conn, server_dry_run=server_dry_run, on_event=_progress)
    force = report["force"]
    who = s.g.as_user or _kubeconfig_user(conn)
    if not server_dry_run:
        report["kind"] = "DeleteReport"
    messages = {pod.key: _event_message(entry, who, report["reason"]) for pod, entry in zip(pods, report["pods"])}
    deletions = deleter.delete(pods, grace_period=grace_period, force=force, event_messages=messages)
    done = []
    for pod, entry, deletion in zip(pods, report["pods"], deletions):
        outcome = deletion.outcome
        entry.update(result=outcome.result, message=outcome.message)
        if outcome.result == "done" and server_dry_run:
            entry["action"] = "wouldDelete"
        elif outcome.result == "done":
            entry["action"] = "forceDeleted" if force else "deleted"
            done.append(pod)
            if deletion.event is not None:
                entry["event"] = deletion.event
        elif outcome.result == "gone":
            entry["action"] = "alreadyGone"
        else:
            entry["action"] = "failed"
    gone = _wait(deleter, done, report["pods"], timeout) if wait and done else {}
    for pod, entry in zip(pods, report["pods"]):
        if pod.key in gone:
            entry["gone"] = gone[pod.key]
    emit(_summarize(report), s.g.output, render)
    return _exit_code(report, deleter)


def _event_message(entry, who, reason) -> str:
    """The ForceDeleted Event's message: who, why, and the node state at the time."""
    node = entry["node"]
    return (f"force deleted by {who} with kubectl-safety; node {node['name'] or '-'} was {node['state']}; "
            f"reason: {reason or '(none given)'}")


def _wait(deleter, pods, entries, timeout) -> dict:
    """Wait until the pods are gone, a countdown on a live status line (``--timeout``: a Go duration)."""
    import threading

    from kubectl_safety.cli.options import duration_flag
    from kubectl_safety.cli.progress import Progress

    seconds = duration_flag(timeout, "--timeout") if timeout else max(e["gracePeriodSeconds"] for e in entries) + WAIT_MARGIN
    deadline = time.monotonic() + seconds if seconds else None
    progress, stop = Progress(), threading.Event()

    def tick():
        while not stop.is_set():
            progress.status(f"waiting for {len(pods)} pod(s) to be gone",
                            None if deadline is None else deadline - time.monotonic())
            stop.wait(1.0)

    ticker = threading.Thread(target=tick, daemon=True)
    ticker.start()
    try:
        with interrupts(deleter):
            return deleter.wait_gone(pods, deadline)
    finally:
        stop.set()
        ticker.join()


def _progress(event):
    from kubectl_safety.cli.progress import Progress, object_line

    kind = event.get("event")
    if kind == "evicted":  # wait_gone's word for "no longer there"
        Progress().line(object_line("pod", event["pod"].rsplit("/", 1)[-1], "gone"))
    elif kind == "pod-deleted":
        Progress().line(object_line("pod", event["pod"], event["how"]))
    elif kind == "pod-delete-failed":
        click.echo(f"error: {_failure_line(event['outcome'])}", err=True)
    elif kind == "event-not-recorded":
        warn("the pod was force deleted but the ForceDeleted Event was not recorded: "
             f"{_failure_line(event['outcome'])}")


def _failure_line(outcome) -> str:
    if outcome.result == "forbidden":
        return f"Error from server (Forbidden): {outcome.message}"
    return f"{outcome.action} {outcome.target} failed ({outcome.status or 'no answer'}): {outcome.message}"


def _exit_code(report, deleter) -> int:
    if deleter.interrupted.is_set():
        return ExitCode.INTERRUPTED
    entries = report["pods"]
    failed = [e for e in entries if e["action"] == "failed"]
    waited_out = [e for e in entries if e.get("gone") is False]
    if failed and len(failed) == len(entries):
        return ExitCode.ERROR
    if failed or waited_out:
        if waited_out and any(e["node"]["partitioned"] and not e["force"] for e in waited_out):
            warn("a pod on a partitioned node cannot finish a graceful delete; assess with --force")
        return ExitCode.PARTIAL
    return ExitCode.OK


def _kubeconfig_user(conn) -> str:
    """The kubeconfig user of the current context (the Event's 'who'); 'unknown' if unreadable."""
    try:
        from kubernetes import config

        contexts, active = config.list_kube_config_contexts(config_file=conn.kubeconfig)
        name = conn.context or (active or {}).get("name")
        ctx = next((c for c in contexts if c.get("name") == name), active) or {}
        return (ctx.get("context") or {}).get("user") or "unknown"
    except Exception:  # in-cluster config or an unreadable kubeconfig
        return "unknown"


# -- output --------------------------------------------------------------------------------------

def _summarize(report) -> dict:
    counts = {}
    for e in report["pods"]:
        counts[e["action"]] = counts.get(e["action"], 0) + 1
    report["summary"] = counts
    return report


def render(r, wide=False) -> str:
    if not r["pods"]:
        return f"No pods found in namespace {r['namespace']}.\n"
    blocks = [_render_pod(e, wide) for e in r["pods"]]
    total = ", ".join(f"{n} {WORDS[a]}" for a, n in r["summary"].items())
    return "\n".join(blocks) + f"\nSummary: {total}{' (dry run)' if r['dryRun'] else ''}\n"


def _render_pod(e, wide) -> str:
    node, owner = e["node"], e["owner"]
    who = f"{owner['kind']}/{owner['name']}" + (f" ({owner['via']})" if owner.get("via") else "") if owner else "no controller"
    lines = [f"Pod {e['namespace']}/{e['name']} ({e['phase']}, {who})",
             f"  Node:     {node['name'] or '-'}: {node['message']}",
             f"  Grace:    {human_duration(e['gracePeriodSeconds'])}, {e['graceWhy']}"]
    if not e["force"] or wide:
        lines += [f"    {'t+' + human_duration(s['at']):<7} {s['event']}" for s in e["timeline"]]
    if e["force"]:
        lines.append(f"  Verdict:  {e['verdict']}")
    if e["risks"]:
        rows = [[r["severity"], r["code"], r["message"]] for r in e["risks"]]
        lines.append("  " + table(rows, ["severity", "risk", "explanation"]).rstrip().replace("\n", "\n  "))
    lines.append(f"  Action:   {_action_text(e)}")
    return "\n".join(lines) + "\n"


def _action_text(e) -> str:
    action = e["action"]
    text = {"refused": "refused (nothing changed)", "wouldDelete": "would delete" + (" by force" if e["force"] else ""),
            "deleted": "deleted (terminating gracefully)", "forceDeleted": "force deleted",
            "alreadyGone": "already gone (or replaced)", "failed": f"failed: {e.get('message')}"}[action]
    if e.get("event"):
        text += "; ForceDeleted Event " + ("recorded" if e["event"]["recorded"] else "NOT recorded")
    if "gone" in e:
        text += "; gone" if e["gone"] else "; still there when the wait ended"
    return text
