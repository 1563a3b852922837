"""``kubectl safety explain pod|node|priorities``."""

import click

from kubectl_safety.cli.completers import complete_names
from kubectl_safety.cli.groups import WholeHelpGroup
from kubectl_safety.cli.options import get_globals, global_options
from kubectl_safety.cli.render import emit, table
from kubectl_safety.cli.session import Session
from kubectl_safety.errors import NotFoundError, UsageError
from kubectl_safety.model.duration import human_duration


@click.group("explain", cls=WholeHelpGroup)
@global_options
def command():
    """Explain a pod, a node or the cluster's priorities.

    \b
    Usage: kubectl safety explain (pod NAME | node NAME | priorities) [flags]
    """


@command.command("pod", epilog="\b\nJSON kind: PodExplanation")
@click.argument("name", shell_complete=complete_names)
@global_options
def explain_pod(name):
    """QoS, priority, termination timeline, eviction rank, PDBs and topology spread of a pod.

    \b
    Usage: kubectl safety explain pod NAME [-n NS] [-o table|json|yaml]
    Examples:
      kubectl safety explain pod web-7d9f -n shop
      kubectl safety explain pod web-7d9f -n shop -o json | jq .findings
      kubectl safety explain pod db-0 -n shop --snapshot cluster.yaml
    """
    from kubectl_safety.analysis.explain import explain_pod as build
    from kubectl_safety.cluster.scopes import pod_scope

    s = Session(get_globals())
    if s.g.all_namespaces:
        raise UsageError("-A/--all-namespaces cannot be used with a pod name: use -n NAMESPACE")
    ns = s.namespace
    queries = () if s.offline else pod_scope(s.connection("explain pod"), ns, name)
    snap = s.snapshot(queries, "explain pod")
    pod = snap.pod(ns, name)
    if pod is None:
        raise NotFoundError(f'pod "{name}" not found in namespace "{ns}"')
    emit(build(pod, snap, snap.taken_at), s.g.output, render_pod)
    return 0


@command.command("node", epilog="\b\nJSON kind: NodeExplanation")
@click.argument("name", shell_complete=complete_names)
@global_options
def explain_node(name):
    """A node's conditions, its pods in kubelet eviction order, and allocation.

    \b
    Usage: kubectl safety explain node NAME [-o table|wide|json|yaml]
    Examples:
      kubectl safety explain node worker-3
      kubectl safety explain node worker-3 -o wide --snapshot cluster.yaml
    """
    from kubectl_safety.analysis.explain import explain_node as build
    from kubectl_safety.cluster.scopes import node_scope

    s = Session(get_globals())
    snap = s.snapshot(() if s.offline else node_scope([name]), "explain node")
    node = snap.node(name)
    if node is None:
        raise NotFoundError(f'node "{name}" not found')
    emit(build(node, snap, snap.taken_at), s.g.output, render_node)
    return 0


@command.command("priorities", epilog="\b\nJSON kind: PriorityAudit")
@global_options
def explain_priorities():
    """Cluster-wide priority audit: classes, global default, levels, rollout risks.

    \b
    Usage: kubectl safety explain priorities [-o table|json|yaml]
    Examples:
      kubectl safety explain priorities
      kubectl safety explain priorities --snapshot cluster.yaml -o json
    """
    from kubectl_safety.analysis.explain import explain_priorities as build
    from kubectl_safety.cluster.source import Query

    s = Session(get_globals())
    snap = s.snapshot(() if s.offline else [Query("priorityclasses"), Query("pods")], "explain priorities")
    emit(build(snap), s.g.output, render_priorities)
    return 0


def _findings(report) -> str:
    rows = [[f["severity"], f["code"], f["message"]] for f in report["findings"]]
    return "\nFindings:\n" + (table(rows, ["severity", "code", "message"]) if rows else "  none\n")


def render_pod(r, wide=False) -> str:
    p, q, pr, t = r["pod"], r["qos"], r["priority"], r["termination"]
    lines = [f"Pod:          {p['namespace']}/{p['name']} on {p['node'] or '(unscheduled)'} ({p['phase']}{', ready' if p['ready'] else ''}{', terminating' if p['terminating'] else ''})",
             f"QoS:          {q['class']}: {q['reason']}" + ("" if q["matchesStatus"] else f" (status says {q['status']}, spec computes {q['computed']})")]
    for c in q["containers"]:
        lines.append(f"  {'init ' if c['init'] else ''}{c['name']}: {c['class']} ({c['reason']})")
    lines.append(f"Priority:     {pr['value']} from {pr['source']}" + (f" (class {pr['className']})" if pr["className"] else "")
                 + f"; preemptionPolicy {pr['preemptionPolicy']}")
    lines.append(f"Termination:  grace {human_duration(t['gracePeriodSeconds'])} ({t['why']})")
    for step in t["steps"]:
        lines.append(f"  t+{human_duration(step['at'])}  {step['event']}")
    lines.append(f"  eviction: {human_duration(t['eviction']['gracePeriodSeconds'])}; kubelet soft eviction: {t['kubeletSoftEviction']['note']}; hard: 1s")
    for pr_ in t["probeFailure"]:
        lines.append(f"  {pr_['probe']} failure on {pr_['container']}: {human_duration(pr_['gracePeriodSeconds'])}" + (" (probe-level)" if pr_["probeOverride"] else ""))
    lines.append(f"OOM score:    oom_score_adj {r['oomScoreAdj']}")
    if r["evictionRank"]:
        e = r["evictionRank"]
        lines.append(f"Eviction:     rank {e['rank'] or '-'} of {e['of']} under memory pressure: {e['reason']}")
    if r["nodeState"]:
        lines.append(f"Node state:   {r['nodeState']['message']}")
    fd = r["forceDelete"]
    lines.append(f"Force delete: {fd['verdict']}")
    for risk in fd["risks"]:
        lines.append(f"  {risk['code']}: {risk['message']}")
    owners = " <- ".join(f"{o['kind']}/{o['name']}" for o in r["owners"]) or "none (unmanaged pod)"
    lines.append(f"Owners:       {owners}")
    if r["pdbs"]:
        for b in r["pdbs"]:
            spec = f"minAvailable {b['minAvailable']}" if b["minAvailable"] is not None else f"maxUnavailable {b['maxUnavailable']}"
            lines.append(f"PDB:          {b['name']} ({spec}): disruptionsAllowed {b['disruptionsAllowed']}, healthy {b['currentHealthy']}/{b['desiredHealthy']} desired, {b['unhealthyPodEvictionPolicy']}")
    else:
        lines.append("PDB:          none")
    for c in r["topologySpread"]:
        domains = ", ".join(f"{k}={v}" for k, v in c["domains"].items())
        lines.append(f"Spread:       {c['topologyKey']} maxSkew {c['maxSkew']} {c['whenUnsatisfiable']}: skew {c['skew']}{' VIOLATED' if c['violated'] else ''} [{domains}]")
    return "\n".join(lines) + "\n" + _findings(r)


def render_node(r, wide=False) -> str:
    n, st = r["node"], r["state"]
    lines = [f"Node:   {n['name']}{' (cordoned)' if n['unschedulable'] else ''}", f"State:  {st['message']}{' (partitioned?)' if st['partitioned'] else ''}"]
    lines.append("\nConditions:")
    lines.append(table([[c["type"], c["status"], c["reason"] or ""] for c in r["conditions"]], ["type", "status", "reason"]).rstrip() or "  none")
    lines.append("\nAllocated (sum of the pods' requests, as kubectl describe node):")
    lines.append(table([[a["resource"], a["requested"], a["allocatable"], "" if a["percent"] is None else f"{a['percent']}%"] for a in r["allocation"]],
                       ["resource", "requests", "allocatable", "requests%"]).rstrip())
    lines.append("\nPods in memory-pressure eviction order (" + r["evictionOrderAssumption"] + "):")
    headers = ["rank", "namespace", "name", "qos", "priority", "oom_score_adj", "pdb"] + (["reason"] if wide else [])
    rows = [[p["rank"] or "-", p["namespace"], p["name"], p["qos"], p["priority"], p["oomScoreAdj"], p["pdb"] or ""]
            + ([p["reason"]] if wide else []) for p in r["pods"]]
    lines.append(table(rows, headers).rstrip() or "  none")
    return "\n".join(lines) + "\n" + _findings(r)


def render_priorities(r, wide=False) -> str:
    rows = [[c["name"], c["value"], "yes" if c["globalDefault"] else "", c["preemptionPolicy"], c["pods"]] for c in r["classes"]]
    out = table(rows, ["name", "value", "global-default", "preemption-policy", "pods"])
    out += f"\nPods without a class: {r['podsWithoutClass']}; at priority 0: {r['podsAtZeroCount']}\n"
    return out + _findings(r)
