"""``kubectl safety rollout``: plan and run the maintenance of a node pool, batch by batch."""

import contextlib
import hashlib
import sys

import click

from kubectl_safety.cli.completers import complete_names
from kubectl_safety.cli.drain_flags import (ACTING, KUBECTL, SURGE, build_drain_options, drain_flags, dry_run_value,
                                            duration)
from kubectl_safety.cli.interaction import confirm, interrupts
from kubectl_safety.cli.options import get_globals, global_options
from kubectl_safety.cli.render import as_text, emit, table
from kubectl_safety.cli.risks import render_risks, unaccepted_codes
from kubectl_safety.cli.session import Session
from kubectl_safety.errors import ExitCode, NotFoundError, RefusedError, UsageError

EXIT = ("\b\nJSON kind: RolloutPlan (--dry-run, or a refused rollout) or RolloutReport (after acting)\n"
        "Exit codes: 0 SAFE (dry run) / every node maintained and back, 1 error, 2 usage, 3 not safe:\n"
        "risks not accepted, or the pool is in another rollout (nothing changed), 4 partial: a batch\n"
        "blocked, a drain timed out, --exec failed, a node did not come back or a health gate failed\n"
        "(state kept: run the same command again to resume), 130 interrupted (resumable).")
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
@click.option("--lease-namespace", default="kube-system", show_default=True, metavar="NAMESPACE",
              help="Namespace of the Lease that makes the rollout exclusive.")
@global_options
def command(nodes, selector, dry_run, max_unavailable, by_zone, no_precordon, skip_blocked, keep_cordoned, exec_command,
            exec_timeout, wait_for, ready_timeout, gate_timeout, timeout, order, ignore_daemonsets,
            delete_emptydir_data, force, grace_period, skip_wait_for_delete_timeout, no_capacity, accept_risk,
            lease_namespace, yes, surge, surge_limit, wait_completed):
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
    """
    from kubectl_safety.analysis.rollout_plan import BadMaxUnavailable, RolloutOptions, batch_size, plan_rollout
    from kubectl_safety.cli.drain_reads import DrainReads
    from kubectl_safety.model.selectors import LabelSelector

    s = Session(get_globals())
    extra = click.get_current_context().meta.get("node_after_dry_run")
    nodes = ((extra,) if extra else ()) + tuple(nodes)
    if bool(nodes) == bool(selector):
        raise UsageError("cannot specify both a node name and a --selector option" if nodes
                         else "specify the pool: kubectl safety rollout NODE... or -l SELECTOR")
    if wait_for and not exec_command and wait_for in WAIT_FOR:
        raise UsageError(f"--wait-for={wait_for} needs --exec (the maintenance that changes it)")
    seconds = {flag: duration(value, flag) for flag, value in
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
    if dry_run == "none":
        s.require_live("a rollout")
    loader = DrainReads(s, drain_options, nodes, node_sel, 500, selector)
    flags = dict(precordon=not no_precordon, keep_cordoned=keep_cordoned, exec_command=exec_command,
                 wait_for=wait_for, order=order, lease_namespace=lease_namespace)
    # acting, batches are planned again: from watches (LIST once + WATCH), never by re-reading the cluster
    with loader.watch() if dry_run == "none" else contextlib.nullcontext():
        snap = loader.snapshot()
        pool = sorted(n.name for n in snap.nodes if node_sel.matches(n.labels)) if node_sel is not None \
            else list(nodes)
        if not pool:
            raise NotFoundError("no nodes match the selector")
        missing = [n for n in pool if snap.node(n) is None]
        if missing:
            raise NotFoundError(f'node "{missing[0]}" not found')
        name = rollout_name(pool)
        states = {n: _annotations(snap.node(n)).get("safety.kubectl.io/rollout-state") for n in pool
                  if _annotations(snap.node(n)).get("safety.kubectl.io/rollout") == name}
        done = frozenset(n for n, st in states.items() if st == "done")
        options = RolloutOptions(drain=drain_options, max_unavailable=max_unavailable, by_zone=by_zone,
                                 precordon=not no_precordon, maintenance=bool(exec_command), done=done,
                                 skip_blocked=skip_blocked)
        plan = plan_rollout(snap, pool, options, snap.taken_at)
        plan["rollout"] = name
        if dry_run == "client":
            emit(plan, s.g.output, render_plan)
            return ExitCode.OK if plan["safe"] else ExitCode.UNSAFE
        left = plan["leftNodes"] if skip_blocked and not plan["safe"] and any(b["safe"] for b in plan["batches"]) \
            else None
        if left:  # the safe batches go; the blocked nodes are named at the end
            code = _act(s, loader, snap, dict(plan, batches=[b for b in plan["batches"] if b["safe"]]), pool, name,
                        states, drain_options, seconds, yes, flags)
            click.echo(f"error: {len(left)} node(s) left, blocked (--skip-blocked): {', '.join(left)}", err=True)
            return code if code != ExitCode.OK else ExitCode.UNSAFE
        if not plan["safe"]:
            emit(plan, s.g.output, render_plan)
            raise RefusedError("the rollout is not safe: " + unaccepted_codes(plan)
                               + " (see risks; --accept-risk=CODE to go ahead anyway); nothing was changed")
        return _act(s, loader, snap, plan, pool, name, states, drain_options, seconds, yes, flags)


def rollout_name(pool) -> str:
    """The rollout's identity (its Lease's name): the same pool gives the same name, so a re-run resumes."""
    digest = hashlib.sha256("\n".join(sorted(pool)).encode()).hexdigest()[:10]
    return f"kubectl-safety-rollout-{digest}"


def _annotations(node) -> dict:
    return (node.raw.get("metadata") or {}).get("annotations") or {} if node is not None else {}


def _act(s, loader, snap, plan, pool, name, states, drain_options, seconds, yes, flags):
    from kubectl_safety.analysis.drain import plan_drain
    from kubectl_safety.engine.rollout import Rollout, RolloutSpec

    connection = s.connection("rollout")
    spec = RolloutSpec(name=name, nodes=pool, batches=[b["nodes"] for b in plan["batches"]],
                       exec_timeout=seconds["--exec-timeout"], ready_timeout=seconds["--ready-timeout"],
                       gate_timeout=seconds["--gate-timeout"], drain_timeout=seconds["--timeout"],
                       grace_period=drain_options.grace_period if drain_options.grace_period >= 0 else None,
                       skip_wait_for_delete_timeout=drain_options.skip_wait_for_delete_timeout,
                       states={n: st for n, st in states.items() if st}, **flags)
    progress = _progress()

    def replan(batch, group):  # from the view's watches, the batch's nodes watched in its group
        loader.nodes = list(batch)
        loader.node_selector = None
        fresh = loader.snapshot(group, cordoned=batch)
        return plan_drain(fresh, batch, drain_options, fresh.taken_at)

    rollout = Rollout(connection, spec, replan=replan, on_event=progress)
    rollout.check_exclusive([snap.node(n).raw for n in pool])
    _confirm(plan, yes)
    with interrupts(rollout.executor, "stopping after the current step; progress is kept, run again to resume"):
        report = rollout.run()
    report["plan"] = {"batches": len(plan["batches"]), "estimatedSeconds": plan["estimatedSeconds"],
                      "done": plan["done"]}
    emit(report, s.g.output, render_report)
    return exit_code(report)


def exit_code(report) -> int:
    status = report["status"]
    if status == "done":
        return ExitCode.OK
    if status == "interrupted":
        return ExitCode.INTERRUPTED
    if status == "error":
        return ExitCode.ERROR
    nothing_done = not any(b["status"] == "done" for b in report["batches"]) and not report["resumed"]
    return ExitCode.UNSAFE if status == "blocked" and nothing_done else ExitCode.PARTIAL


def _confirm(plan, yes):
    if not yes and sys.stdin.isatty():
        click.echo(as_text(plan, render_plan, stream=sys.stderr), err=True, nl=False)
    confirm(f"Maintain {len(plan['nodes']) - len(plan['done'])} node(s) in {len(plan['batches'])} batch(es), "
            f"about {plan['estimatedSeconds']}s?", yes, "roll out")


def _progress():
    from kubectl_safety.cli.drain_progress import DrainProgress, event_line

    class Progress(DrainProgress):
        """The drain's events, and the rollout's: batches, maintenance, readiness, health gates."""

        LIVE = DrainProgress.LIVE + ("waiting-ready", "gate")

        @staticmethod
        def text(event) -> str:
            line = ROLLOUT_LINES.get(event["event"])
            return line(event) if line else event_line(event)

    return Progress()


def _exec_done(e) -> str:
    code = e.get("exitCode")
    return (f"node/{e['pod']} maintenance " + ("timed out" if code is None else f"exited {code}")
            + (f": {e['message']}" if e.get("message") and code else ""))


ROLLOUT_LINES = {  # the rollout's own events -> progress line
    "batch": lambda e: f"batch {e['batch']}/{e['total']}: {', '.join(e['nodes'])}",
    "exec": lambda e: f"node/{e['pod']} maintenance: {e['command']}",
    "exec-done": _exec_done,
    "waiting-ready": lambda e: e["message"],
    "ready": lambda e: f"node/{e['pod']} Ready",
    "gate": lambda e: f"batch {e['batch']}: {e['message']}",
    "gate-passed": lambda e: f"batch {e['batch']}: health gate passed",
    "node-done": lambda e: f"node/{e['pod']} done",
}


# -- text rendering ------------------------------------------------------------------------------
def render_plan(r, wide=False) -> str:
    from kubectl_safety.model.duration import human_duration

    o = r["options"]
    lines = [f"Rollout of {len(r['nodes'])} node(s): batches of {o['batchSize']}"
             + (", one zone at a time" if o["byZone"] else "")
             + (", pool cordoned first" if o["precordon"] else ", no pre-cordon")]
    if r["done"]:
        lines.append(f"Already done (resumed): {', '.join(r['done'])}")
    rows = []
    for b in r["batches"]:
        s, c = b["drain"]["summary"], b["capacity"]
        rows.append([b["batch"], ",".join(b["nodes"]), ",".join(z for z in b["zones"] if z) or "-",
                     s["evict"] + s["wait"] + s["delete"], s["blocked"],
                     f"{c['schedulableNodes']} nodes, {c['cpuFree']}m/{_gib(c['memoryFree'])} free",
                     f"{c['cpuNeeded']}m/{_gib(c['memoryNeeded'])}", human_duration(b["estimatedSeconds"]),
                     "SAFE" if b["safe"] else "BLOCKED: " + ",".join(b["blockedNodes"])])
    lines.append("")
    lines.append(table(rows, ["batch", "nodes", "zones", "move", "blocked", "capacity left", "needed",
                              "estimate", "verdict"]).rstrip() or "nothing to do")
    if wide:
        from kubectl_safety.cli.commands.drain import render_plan as render_drain

        for b in r["batches"]:
            lines.append(f"\nBatch {b['batch']}:")
            lines.append(render_drain(b["drain"]).rstrip())
    lines += (render_risks([dict(x, message=f"batch {x['batch']}: {x['message']}") for x in r["risks"]]) if wide
              else _grouped_risks(r["risks"]))
    for cause in r.get("causes") or []:
        lines.append(f"\nCause: {cause['message']}.\n  Pre-cordoning buys: {cause['buys']}.\n  Alternatives:")
        lines += [f"    {a}" for a in cause["alternatives"]]
    left = r.get("leftNodes") or []
    if left:
        import textwrap

        lines.append("")
        lines += textwrap.wrap(f"Left unmaintained: {len(left)} node(s): {', '.join(left[:20])}"
                               + (f" and {len(left) - 20} more (-o json lists them)" if len(left) > 20 else "")
                               + ("" if o.get("skipBlocked") else
                                  "; --skip-blocked maintains the other batches and names them"),
                               width=120, subsequent_indent="  ", break_on_hyphens=False)
    verdict = ("SAFE: every batch can complete" if r["safe"] else
               f"NOT SAFE ({unaccepted_codes(r)}): " + (
                   f"{len(left)} node(s) blocked would be left (--skip-blocked); exit 3" if o.get("skipBlocked") else
                   f"the rollout would stop at batch {r['stopsAtBatch']}; exit 3 "
                   + ("(the cause and its alternatives are above)" if r.get("causes") else
                      "unless accepted with --accept-risk")))
    lines.append(f"\n{verdict}; estimated {human_duration(r['estimatedSeconds'])} in total"
                 + (" (maintenance assumed 60s a node)" if o["maintenance"] else "") + ".")
    return "\n".join(lines) + "\n"


GROUP_NODES = 5  # nodes shown with a group of risks (each node's reason: -o wide)


def _grouped_risks(risks) -> list:
    """The risks grouped by code and workload: the first one's message and nodes, the batches of all."""
    if not risks:
        return []
    groups = {}
    for x in risks:
        groups.setdefault((x["code"], x.get("workload"), x["accepted"]), []).append(x)
    causes = {}  # workloads whose risks have the same code, batches and cause: one entry
    for (code, workload, accepted), found in groups.items():
        batches = tuple(sorted({x["batch"] for x in found}))
        causes.setdefault((code, accepted, batches, _cause(found[0])), []).append((workload, found))
    lines = ["\nRisks" + (" (grouped by workload and cause; -o wide lists each):" if len(causes) < len(risks)
                           else ":")]
    for (code, accepted, batches, _), entries in causes.items():
        workloads = [w for w, _ in entries if w]
        found = [x for _, xs in entries for x in xs]
        first = found[0]
        where = f"batch {batches[0]}" if len(batches) == 1 else f"{len(batches)} batches ({_spans(list(batches))})"
        named = (f", {workloads[0]}" if len(workloads) == 1 else
                 f", {len(workloads)} workloads ({', '.join(workloads[:5])}"
                 + (f" and {len(workloads) - 5} more" if len(workloads) > 5 else "") + ")" if workloads else "")
        lines.append(f"  {code}{' (accepted)' if accepted else ''}: {where}{named}"
                     + (f", {len(found)} times" if len(found) > 1 else "") + f": {first['message']}")
        nodes = list((first.get("nodes") or {}).items())
        lines += [f"      {node}: {why}" for node, why in nodes[:GROUP_NODES]]
        more = len(nodes[GROUP_NODES:]) + (first.get("nodesNotListed") or 0)
        if more:
            lines.append(f"      and {more} more node(s) (-o wide, -o json)")
    return lines


def _cause(risk) -> str:
    """A risk's message without the pod it names: what the same cause says for every pod."""
    message = risk["message"]
    return message.split(" fits on no node: ", 1)[1] if " fits on no node: " in message else message


def _spans(numbers) -> str:
    """1-3,5,7-9"""
    out, start = [], numbers[0]
    for a, b in zip(numbers, numbers[1:] + [None]):
        if b != a + 1:
            out.append(str(start) if start == a else f"{start}-{a}")
            start = b
    return ",".join(out)


def _gib(n) -> str:
    return f"{n / 2**30:.1f}Gi"


def render_report(r, wide=False) -> str:
    lines = [f"Rollout {r['rollout']}: {r['status']}" + (f" ({r['message']})" if r["message"] else ""),
             f"Lease {r['lease']}, holder {r['holder']}; {r['elapsedSeconds']}s"]
    rows = []
    for n in r["nodes"]:
        d = n.get("drain") or {}
        ex = n.get("exec") or {}
        rows.append([n["name"], n["batch"] or "-", n["state"], len(d.get("evicted") or []),
                     len(d.get("appeared") or []), "-" if not ex else ex["exitCode"],
                     "yes" if n.get("uncordoned") else "no"])
    lines.append("")
    lines.append(table(rows, ["node", "batch", "state", "evicted", "appeared", "exec", "uncordoned"]).rstrip())
    for b in r["batches"]:
        if b.get("gate") and not b["gate"]["passed"]:
            lines.append(f"\nBatch {b['batch']} health gate: {b['gate']['message']}")
    if r["status"] != "done":
        lines.append("\nProgress is kept in the cluster; run the same command again to resume.")
    return "\n".join(lines) + "\n"
