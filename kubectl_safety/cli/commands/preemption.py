"""``kubectl safety preemption``: preview which pods the scheduler would preempt, where, and why."""

import click

from kubectl_safety.cli.completion import complete_pods
from kubectl_safety.cli.options import get_globals, global_options
from kubectl_safety.cli.render import emit, table, warn
from kubectl_safety.cli.session import Session
from kubectl_safety.errors import InputError, NotFoundError, UsageError

PLACED = ("fits", "preempt", "waiting")
EXIT = ("\b\nJSON kind: PreemptionPreview\n"
        "\b\nExit codes: 0 the pod fits or preemption makes room (or it waits for victims already\n"
        "terminating), 1 error (e.g. unknown PriorityClass, invalid manifest), 2 usage,\n"
        "3 the pod cannot be placed (no node, not eligible to preempt, or some --replicas copies).\n"
        "Read-only: nothing is created, patched or deleted.")
OUTCOMES = {
    "fits": "fits without preemption",
    "preempt": "fits by preempting lower-priority pods",
    "waiting": "waits: lower-priority pods on its nominated node are already terminating by preemption",
    "not-eligible": "cannot be placed: no node fits and the pod may not preempt",
    "unschedulable": "cannot be placed: no node fits and preemption cannot make room",
    "partial": "only some copies can be placed",
}


@click.command("preemption", epilog=EXIT)
@click.argument("pod", required=False, shell_complete=complete_pods)
@click.option("-f", "--filename", metavar="FILE", type=click.Path(allow_dash=True, dir_okay=False),
              help="A manifest (YAML or JSON; - for stdin): a Pod, or a Deployment, StatefulSet, ReplicaSet, "
                   "Job or CronJob whose pod template is previewed. PriorityClasses in the file are used too.")
@click.option("--replicas", type=click.IntRange(min=1, max=1000), default=1, show_default=True, metavar="N",
              help="Place N copies one after another, each consuming what it took.")
@click.option("--kubernetes-version", metavar="VERSION",
              help="Validate the manifest against this version (default: the server's; offline 1.34).")
@global_options
def command(pod, filename, replicas, kubernetes_version):
    """Preview kube-scheduler preemption for a pending pod or a manifest.

    Shows whether the pod fits without preemption; if not, whether it may preempt, every
    candidate node with the victims the scheduler would choose (PDB-violating pods reprieved
    first, then the rest, most important first) ranked in the scheduler's order, the nodes
    excluded and why, and where the real scheduler's sampling or ties could choose otherwise.

    \b
    Usage: kubectl safety preemption (POD [-n NS] | -f FILE) [--replicas N] [--kubernetes-version V] [-o table|wide|json|yaml]
    \b
    Examples:
      kubectl safety preemption report-xyz -n jobs
      kubectl safety preemption -f deploy.yaml --replicas 3
      helm template ./chart | kubectl safety preemption -f - -o json | jq .victims
      kubectl safety preemption report-xyz -n jobs --snapshot cluster.yaml
    """
    from kubectl_safety.analysis.preemption import preview
    from kubectl_safety.analysis.priority import UnknownPriorityClass
    from kubectl_safety.cluster.scopes import cluster_scope

    s = Session(get_globals())
    if bool(pod) == bool(filename):
        raise UsageError("give either a POD name or -f FILE")
    if filename == "-" and "-" in s.g.snapshot:
        raise UsageError("-f - and --snapshot - cannot both read stdin")
    manifest = _read(filename, kubernetes_version, s) if filename else None
    snap = s.snapshot(() if s.offline else cluster_scope(), "preemption")
    if manifest:
        target, classes = manifest
        snap = _with_classes(snap, classes)
    else:
        target = snap.pod(s.namespace, pod)
        if target is None:
            raise NotFoundError(f'pod "{pod}" not found in namespace "{s.namespace}"')
    try:
        report = preview(target, snap, s.now() or snap.taken_at, replicas)
    except UnknownPriorityClass as e:
        raise InputError(f"the API server would reject the pod: {e}") from None
    emit(report, s.g.output, render)
    return 0 if report["outcome"] in PLACED else 3


def _read(filename, kubernetes_version, s):
    """(Pod, [PriorityClass dicts]) from the manifest, validated against the chosen version."""
    from kubectl_safety.analysis.manifest import TEMPLATE_KINDS, UnsupportedManifest, pod_from_manifest
    from kubectl_safety.cluster.manifest_io import read_manifest, supported_version, validate

    objects = read_manifest(filename)
    if kubernetes_version:
        version = supported_version(kubernetes_version, True)
    elif not s.offline:
        version = supported_version(s.connection("preemption").server_version(), False)
    else:
        version = supported_version(None, False)
    targets, classes = [], []
    for i, obj in enumerate(objects):
        origin = filename if len(objects) == 1 else f"{filename} object {i + 1}"
        kind = obj.get("kind")
        if kind == "PriorityClass":
            validate(obj, version, origin)
            classes.append(obj)
        elif kind == "Pod" or kind in TEMPLATE_KINDS:
            validate(obj, version, origin)
            targets.append(obj)
        else:
            warn(f"{origin}: ignoring {kind or 'an object without kind'}")
    if len(targets) != 1:
        raise InputError(f"{filename}: expected one Pod, Deployment, StatefulSet, ReplicaSet, Job or CronJob, "
                         f"found {len(targets)}")
    try:
        target, _ = pod_from_manifest(targets[0], s.namespace)
    except UnsupportedManifest as e:
        raise InputError(f"{filename}: {e}") from None
    return target, classes


def _with_classes(snap, classes):
    """The snapshot with the manifest's PriorityClasses added (replacing same-named ones)."""
    if not classes:
        return snap
    from kubectl_safety.model.objects import PriorityClass

    names = {(c.get("metadata") or {}).get("name") for c in classes}
    kept = [c for c in snap.priority_classes if c.name not in names]
    return snap.replace(priority_classes=kept + [PriorityClass(c) for c in classes])


# -- text output --------------------------------------------------------------------------------

def render(r, wide=False) -> str:
    p = r["pod"]
    cls = f"class {p['priorityClassName']}, " if p["priorityClassName"] else ""
    lines = [f"Pod:        {p['namespace']}/{p['name']}: priority {p['priority']} ({cls}{p['prioritySource']}), "
             f"preemptionPolicy {p['preemptionPolicy']}",
             f"Result:     {OUTCOMES.get(r['outcome'], r['outcome'])}"
             + (f" ({r['placed']} of {r['replicas']} copies placed)" if r["replicas"] > 1 else "")]
    if r["feasibleNodes"]:
        lines.append(f"Feasible:   {len(r['feasibleNodes'])} node(s): {', '.join(r['feasibleNodes'][:10])}"
                     + (" ..." if len(r["feasibleNodes"]) > 10 else ""))
    if r["eligible"] is not None:
        lines.append(f"Eligible:   {r['eligibility']}")
    if r["placements"]:
        lines.append("\nCopies, placed one after another:")
        rows = [[p["replica"], p["name"], OUTCOMES.get(p["outcome"], p["outcome"]).split(":")[0], p["node"] or "-",
                 ", ".join(f"{v['namespace']}/{v['name']}" for v in p["victims"]) or "-"] for p in r["placements"]]
        lines.append(table(rows, ["copy", "name", "outcome", "node", "victims"]).rstrip())
        lines.append("Below: all copies' victims, then candidates and excluded nodes for copy 1.")
    elif r["node"] and not r["fitsWithoutPreemption"]:
        lines.append(f"Node:       {r['node']} (status.nominatedNodeName; the pod may still land elsewhere)")
    for note in r["notes"]:
        lines.append(f"Note:       {note}")
    if r["victims"]:
        lines.append(f"\nVictims{' of all copies' if r['placements'] else ''} (deleted by the scheduler with their "
                     "own grace period; PDBs are not enforced):")
        rows = [[v["node"], v["namespace"], v["name"], v["priority"], v["startTime"] or "-",
                 ", ".join(v["pdbs"]) if v["pdbViolation"] else "", f"{v['gracePeriodSeconds']}s"] for v in r["victims"]]
        lines.append(table(rows, ["node", "namespace", "name", "priority", "started", "pdb-violated", "grace"]).rstrip())
    if r["candidates"]:
        lines.append("\nCandidates in the scheduler's order (fewest PDB violations, lowest highest priority, "
                     "lowest priority sum, fewest victims, latest start):")
        rows = [[c["rank"], c["node"], len(c["victims"]), c["pdbViolations"], c["highestPriority"],
                 c["prioritySum"], c["earliestStart"] or "-"]
                + ([", ".join(f"{v['namespace']}/{v['name']}" for v in c["victims"])] if wide else [])
                for c in r["candidates"]]
        headers = ["rank", "node", "victims", "pdb-violations", "highest-priority", "priority-sum", "earliest-start"]
        lines.append(table(rows, headers + (["victim-pods"] if wide else [])).rstrip())
        lines.append(f"Scheduler:  {r['sampling']['note']}")
    if r["excluded"] and not r["fitsWithoutPreemption"] or wide:
        lines.append("\nExcluded nodes:" if not r["fitsWithoutPreemption"] else "\nNodes that do not fit:")
        lines.append(table([[e["node"], e["reason"]] for e in r["excluded"]], ["node", "reason"]).rstrip() or "  none")
    rows = [[f["severity"], f["code"], f["message"]] for f in r["findings"]]
    lines.append("\nFindings:\n" + (table(rows, ["severity", "code", "message"]) if rows else "  none\n"))
    return "\n".join(lines).rstrip() + "\n"
