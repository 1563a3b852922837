"""``kubectl safety why pod|node``."""

import click

from kubectl_safety.cli.completers import complete_names
from kubectl_safety.cli.groups import WholeHelpGroup
from kubectl_safety.cli.options import get_globals, global_options
from kubectl_safety.cli.render import emit
from kubectl_safety.cli.session import Session
from kubectl_safety.errors import NotFoundError, UsageError


@click.group("why", cls=WholeHelpGroup)
@global_options
def command():
    """Who disrupted a pod, or why a node takes no pods, from the evidence the cluster keeps.

    \b
    Usage: kubectl safety why (pod NAME | node NAME) [flags]
    """


@command.command("pod", epilog="\b\nJSON kind: PodPostMortem")
@click.argument("name", shell_complete=complete_names)
@global_options
def why_pod(name):
    """Who disrupted a pod (it may be gone): the cause, the actor, when, and the evidence.

    \b
    Causes: PREEMPTED, KUBELET_EVICTION, OOM_KILLED, EVICTION_API, TAINT_MANAGER, POD_GC, DELETED, UNKNOWN.
    It reads the pod, the events naming it and its owner's, its node and the node's events.
    Exit 0: a cause found; 3: UNKNOWN (the source that would answer is named); 1: no pod and no event names it.

    \b
    Usage: kubectl safety why pod NAME [-n NS] [-o table|json|yaml]
    Examples:
      kubectl safety why pod web-7d9f-x2k4q -n shop
      kubectl safety why pod db-0 -n shop -o json | jq .cause
      kubectl safety why pod db-0 -n shop --snapshot dump.json
    """
    from kubectl_safety.analysis.why.pod import why_pod as build
    from kubectl_safety.cli.views.why import postmortem_code, render_pod
    from kubectl_safety.cluster.scopes import why_pod_scope

    s = Session(get_globals())
    if s.g.all_namespaces:
        raise UsageError("-A/--all-namespaces cannot be used with a pod name: use -n NAMESPACE")
    ns = s.namespace
    snap = s.snapshot(() if s.offline else why_pod_scope(s.connection("why pod"), ns, name), "why pod")
    report = build(snap, ns, name, snap.taken_at)
    if report is None:
        raise NotFoundError(f'pod "{name}" not found in namespace "{ns}", and no event names it')
    emit(report, s.g.output, render_pod, typed=True)
    return postmortem_code(report)


@command.command("node", epilog="\b\nJSON kind: NodePostMortem")
@click.argument("name", shell_complete=complete_names)
@global_options
def why_node(name):
    """Why a node is cordoned, tainted, not ready or gone, and by whom; what is still on it.

    \b
    Codes: CORDONED, TAINTED, NOT_READY, DELETED, SCHEDULABLE, UNKNOWN.
    Exit 0: answered; 3: UNKNOWN; 1: no node and no event names it.

    \b
    Usage: kubectl safety why node NAME [-o table|json|yaml]
    Examples:
      kubectl safety why node worker-3
      kubectl safety why node worker-3 --snapshot dump.json -o json
    """
    from kubectl_safety.analysis.why.node import why_node as build
    from kubectl_safety.cli.views.why import postmortem_code, render_node
    from kubectl_safety.cluster.scopes import why_node_scope

    s = Session(get_globals())
    snap = s.snapshot(() if s.offline else why_node_scope(s.connection("why node"), name), "why node")
    report = build(snap, name, snap.taken_at)
    if report is None:
        raise NotFoundError(f'node "{name}" not found, and no event names it')
    emit(report, s.g.output, render_node, typed=True)
    return postmortem_code(report)
