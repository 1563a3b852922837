"""``delete pod``'s view: its text (each pod's assessment and action, the summary, and the progress lines),
its published JSON (kinds ForceDeleteAssessment and DeleteReport) and its exit code."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from kubectl_safety.cli.published import finding
from kubectl_safety.cli.render import table, warn
from kubectl_safety.cli.report import ExitCode
from kubectl_safety.model.constants import API_VERSION
from kubectl_safety.model.duration import human_duration

if TYPE_CHECKING:
    from kubectl_safety.analysis.explanations.delete import DeleteAssessment
    from kubectl_safety.engine.delete_report import DeleteReport, PodDeletion


WORDS = {"refused": "refused", "wouldDelete": "would be deleted", "deleted": "deleted",
         "forceDeleted": "force deleted", "alreadyGone": "already gone", "failed": "failed"}


def progress(event):
    """One progress line for an event of the engine's Deleter."""
    from kubectl_safety.cli.progress import Progress, object_line

    kind = event.get("event")
    if kind == "evicted":  # wait_gone's word for "no longer there"
        Progress().line(object_line("pod", event["pod"].rsplit("/", 1)[-1], "gone"))
    elif kind == "pod-deleted":
        Progress().line(object_line("pod", event["pod"], event["how"]))
    elif kind == "pod-delete-failed":
        click.echo(f"error: {failure_line(event['outcome'])}", err=True)
    elif kind == "event-not-recorded":
        warn("the pod was force deleted but the ForceDeleted Event was not recorded: "
             f"{failure_line(event['outcome'])}")
    elif kind == "evidence-not-recorded":
        warn(event["message"])


def failure_line(outcome) -> str:
    if outcome.result == "forbidden":
        return f"Error from server (Forbidden): {outcome.message}"
    return f"{outcome.action} {outcome.target} failed ({outcome.status or 'no answer'}): {outcome.message}"


def render(r, wide=False) -> str:
    if not r["pods"]:
        return f"No pods found in namespace {r['namespace']}.\n"
    blocks = [_render_pod(e, wide) for e in r["pods"]]
    total = ", ".join(f"{n} {WORDS[a]}" for a, n in r["summary"].items())
    return "\n".join(blocks) + f"\nSummary: {total}{' (dry run)' if r['dryRun'] else ''}\n"


def _render_pod(e, wide) -> str:
    node, owner = e["node"], e["owner"]
    who = (f"{owner['kind']}/{owner['name']}" + (f" ({owner['via']})" if owner.get("via") else "") if owner
           else "no controller")
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


def delete_assessment(a: DeleteAssessment) -> dict:
    """One pod's delete assessment (a ForceDeleteAssessment's or DeleteReport's pod, explain pod's forceDelete)."""
    n, t, owner = a.node, a.terminating, a.owner
    return {
        "namespace": a.namespace, "name": a.name, "uid": a.uid, "phase": a.phase,
        "owner": delete_owner(owner),
        "node": {"name": n.name, "state": n.state.value, "partitioned": n.partitioned,
                 "heartbeatAgeSeconds": n.heartbeat_age_seconds, "message": n.message},
        "force": a.force,
        "gracePeriodSeconds": a.grace_period_seconds, "graceWhy": a.grace_why,
        "timeline": [{"at": x.at, "event": x.event} for x in a.timeline],
        "terminating": None if t is None else {"deletionTimestamp": t.deletion_timestamp,
                                               "gracePeriodSeconds": t.grace_period_seconds,
                                               "forSeconds": t.for_seconds, "overdueSeconds": t.overdue_seconds},
        "forceNeeded": a.force_needed,
        "verdict": a.verdict,
        "risks": [finding(r) for r in a.risks],
    }


def delete_owner(o):
    if o is None:
        return None
    return {"kind": o.kind, "name": o.name, **({"via": o.via} if o.via is not None else {})}


def delete_report(r: DeleteReport) -> dict:
    head = ({"kind": "DeleteReport", "apiVersion": API_VERSION} if r.deleted else  # DELETEs sent
            {"kind": "ForceDeleteAssessment", "apiVersion": API_VERSION})
    return {**head, "namespace": r.namespace, "force": r.force, "confirmed": r.confirmed, "dryRun": r.dry_run,
            "reason": r.reason, "pods": [pod_deletion(p) for p in r.pods],
            "summary": {a.value: n for a, n in r.counts().items()}}


def pod_deletion(p: PodDeletion) -> dict:
    out = delete_assessment(p.assessment)
    if p.outcome is not None:
        out.update(result=p.outcome.result, message=p.outcome.message)
    out["action"] = p.action.value
    if p.event is not None:
        out["event"] = p.event
    if p.gone is not None:
        out["gone"] = p.gone
    return out


SERIALIZERS = {"kubectl_safety.analysis.explanations.delete.DeleteAssessment": delete_assessment,
               "kubectl_safety.engine.delete_report.DeleteReport": delete_report}


def delete_code(report, interrupted=False) -> ExitCode:
    """A DeleteReport's: interrupted; an error when every delete failed; partly done when one failed or
    a pod was not gone in time; else OK (a dry run, a refusal's assessment: nothing to fail)."""
    from kubectl_safety.engine.delete_report import DeleteAction

    if interrupted:
        return ExitCode.INTERRUPTED
    failed = [e for e in report.pods if e.action is DeleteAction.FAILED]
    if failed and len(failed) == len(report.pods):
        return ExitCode.ERROR
    if failed or any(e.gone is False for e in report.pods):
        return ExitCode.PARTIAL
    return ExitCode.OK
