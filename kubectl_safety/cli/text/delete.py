"""``delete pod`` as text: each pod's assessment and action, the summary, and the progress lines."""

import click

from kubectl_safety.cli.render import table, warn
from kubectl_safety.model.duration import human_duration


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
