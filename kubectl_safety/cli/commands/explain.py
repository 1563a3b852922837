"""``kubectl safety explain pod|node|priorities``."""

import click

from kubectl_safety.cli.completers import complete_names
from kubectl_safety.cli.groups import WholeHelpGroup
from kubectl_safety.cli.options import get_globals, global_options
from kubectl_safety.cli.render import emit
from kubectl_safety.cli.session import Session
from kubectl_safety.errors import NotFoundError, UsageError


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
    from kubectl_safety.cli.views.explain import render_pod
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
    emit(build(pod, snap, snap.taken_at), s.g.output, render_pod, typed=True)
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
    from kubectl_safety.cli.views.explain import render_node
    from kubectl_safety.cluster.scopes import node_scope

    s = Session(get_globals())
    snap = s.snapshot(() if s.offline else node_scope([name]), "explain node")
    node = snap.node(name)
    if node is None:
        raise NotFoundError(f'node "{name}" not found')
    emit(build(node, snap, snap.taken_at), s.g.output, render_node, typed=True)
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
    from kubectl_safety.cli.views.explain import render_priorities
    from kubectl_safety.cluster.source import Query

    s = Session(get_globals())
    snap = s.snapshot(() if s.offline else [Query("priorityclasses"), Query("pods")], "explain priorities")
    emit(build(snap), s.g.output, render_priorities, typed=True)
    return 0
