"""``kubectl safety check``: the whole cluster's maintenance readiness in one command."""

from dataclasses import replace

import click

from kubectl_safety.cli.completers import complete_contexts
from kubectl_safety.cli.drain_flags import KUBECTL, SURGE, build_drain_options, drain_flags
from kubectl_safety.cli.drain_flags import selector as selector_of
from kubectl_safety.cli.engine_flags import check_engine_flags, engine_dry_run, engine_options
from kubectl_safety.cli.options import get_globals, global_options, snapshot_refuses
from kubectl_safety.cli.render import emit
from kubectl_safety.cli.session import Session
from kubectl_safety.model.duration import flag_seconds
from kubectl_safety.errors import SafetyError, UsageError

MAX_PARALLEL = 8  # clusters checked at once
EXIT = "\b\nJSON kind: ClusterCheck (a List of them with several contexts); EnginePlan (--engine)"


@click.command("check", epilog=EXIT)
@click.option("-l", "--selector", metavar="SELECTOR", help="Check only the nodes matching this label selector.")
@click.option("--fail-on", type=click.Choice(["error", "warning", "none"]), default="error", show_default=True,
              help="Findings of this severity or worse make the check fail (exit 3); none: only undrainable nodes.")
@click.option("--scope", type=click.Choice(["pool", "cluster"]), default="pool", show_default=True,
              help="With -l: pool gates on the findings about what the selected nodes touch (their pods and "
                   "those pods' PDBs and workloads) and reports the rest apart; cluster gates on every finding.")
@click.option("--ignore-finding", "ignore_finding", multiple=True, metavar="CODE[,CODE]",
              help="A finding code that never fails the check (it is still reported); repeatable.")
@drain_flags(*KUBECTL)
@click.option("--timeout", default="0", show_default=True, metavar="DURATION",
              help="A node whose drain would take longer is not drainable (0: no limit).")
@drain_flags("pod_selector", "disable_eviction", "accept_risk")
@drain_flags(*SURGE)
@engine_options
@click.option("--context", "contexts", multiple=True, metavar="NAME", shell_complete=complete_contexts,
              help="The kubeconfig context to check; repeatable: the clusters are checked in parallel.")
@click.option("--all-contexts", is_flag=True, help="Check every context of the kubeconfig, in parallel.")
@click.option("--publish", is_flag=True, help="Write the readiness to the cluster as OpenReports (server-side apply), "
                                               "replacing the previous ones; the check prints as -o says.")
@click.option("--report-api", type=click.Choice(["auto", "openreports", "wgpolicy", "both"]), default="auto",
              show_default=True, help="-o openreports/--publish: the report API (auto: openreports.io when served, "
                                      "else wgpolicyk8s.io/v1alpha2).")
@global_options
def command(selector, fail_on, scope, ignore_finding, ignore_daemonsets, delete_emptydir_data, force,
            disable_eviction, grace_period,
            timeout, skip_wait_for_delete_timeout, pod_selector, accept_risk, contexts, all_contexts,
            surge, surge_limit, wait_completed, engine, engine_setting, publish, report_api,
            management_kubeconfig, management_snapshot):
    """What blocks maintenance: every node's drain, PDBs, workloads and priorities at once.

    One pass over one snapshot (live: the capacity-aware drain's few LIST requests, or
    --snapshot). Each node is planned alone exactly as `drain NODE --dry-run` plans it, with
    the same drain flags and the same defaults (the report starts with the flags it assumed;
    a runbook draining with --ignore-daemonsets --delete-emptydir-data passes them here too,
    as it does to rollout). A node is drainable when that plan is SAFE, removable
    when the replacements of all its pods fit on the other nodes. Findings cover
    PodDisruptionBudgets (never allow, select nothing, overlap, stale status, no scale
    subresource, unhealthy-pod policy), workloads (one replica without a PDB, all replicas on
    one node or zone, spread and anti-affinity with one node out) and priorities (bottom-up
    rollout risk, pods without a class, preempting pods). The summary first lists what blocks
    a rolling upgrade of all nodes, the objects that block the most nodes first.

    \b
    Usage: kubectl safety check [-l NODE_SELECTOR [--scope pool|cluster]] [--fail-on error|warning|none]
                                [--ignore-finding CODE...] [drain flags]
                                [--context NAME... | --all-contexts] [-o table|wide|json|yaml]
    Examples:
      kubectl safety check
      kubectl safety check --ignore-daemonsets --delete-emptydir-data   # as the runbook drains
      kubectl safety check -l pool=blue --ignore-daemonsets --delete-emptydir-data --fail-on warning   # a CI gate
      kubectl safety check -o json | jq '.nodes[] | select(.drainable | not) | .name'
      kubectl safety check --context prod-eu --context prod-us
      kubectl safety check --snapshot cluster.yaml --as-of 2026-11-22T09:00:00Z
      kubectl safety check -l pool=blue --engine gke   # what GKE's upgrade does to each node (JSON kind EnginePlan)
    """
    from kubectl_safety.analysis.check import CheckOptions

    g = get_globals()
    params = click.get_current_context().params
    drain = build_drain_options(params, flag_seconds(timeout, "--timeout"))
    node_sel = selector_of(selector, "--selector")
    ignore = frozenset(c.strip() for x in ignore_finding for c in x.split(",") if c.strip())
    bad = sorted(c for c in ignore if not c.replace("_", "").isalnum() or c.upper() != c)
    if bad:
        raise UsageError(f"--ignore-finding={bad[0]}: use a finding code such as PDB_SELECTS_NOTHING")
    options = CheckOptions(node_selector=node_sel, drain=drain, fail_on=fail_on, scope=scope, ignore=ignore)
    if g.snapshot and (contexts or all_contexts):
        raise snapshot_refuses("--context" if contexts else "--all-contexts")
    names = list(dict.fromkeys(([g.context] if g.context else []) + list(contexts)))
    if all_contexts:
        if names:
            raise UsageError("--context and --all-contexts cannot be used together")
        names = _all_contexts(g.kubeconfig)
    check_engine_flags(params)
    reporting = publish or g.output == "openreports"
    if g.snapshot and publish:
        raise snapshot_refuses("--publish")
    if reporting and (engine or len(names) > 1 or all_contexts):
        raise UsageError("-o openreports/--publish: one cluster, without --engine or several contexts")
    if engine and (len(names) > 1 or all_contexts):
        raise UsageError("--engine checks one cluster: drop --context/--all-contexts or give one context")
    from kubectl_safety.cli.views.check import check_code, render_check, render_list

    if len(names) <= 1 and not all_contexts:
        if names:
            g.context = names[0]
        if engine:
            return _engine(g, node_sel, params)
        report = _check_one(g, options)
        if reporting:
            from kubectl_safety.cli.openreports import deliver

            deliver(report, g, publish, report_api)
        else:
            emit(report, g.output, render_check)
        return check_code([report])
    items = _check_many(g, names, options)
    emit({"kind": "List", "apiVersion": "v1", "items": items}, g.output, render_list)
    for r in items:  # errors on stderr, as kubectl prints them; the List keeps each in its item
        if r.error is not None:
            from kubectl_safety.printable import for_terminal

            click.echo(f"error: context {for_terminal(r.context)}: {for_terminal(r.error)}", err=True)
    return check_code(items)


def _check_one(g, options):
    """The ClusterCheck of one cluster (the context of ``g``, or its --snapshot files)."""
    from kubectl_safety.analysis.check import check
    from kubectl_safety.cluster.dump import bulk_load
    from kubectl_safety.cluster.scopes import cluster_scope, node_lease_queries, surge_scope

    s = Session(g)
    queries = cluster_scope() + node_lease_queries() + (surge_scope(True) if options.drain.surge else [])
    snap = s.snapshot(() if s.offline else queries, "check")
    if options.node_selector is not None:
        from kubectl_safety.model.selectors import matching_nodes

        matching_nodes(options.node_selector, snap.nodes)  # a selector that matches no node gates nothing
    with bulk_load():  # the analysis makes no cycles: collections would only rescan what it keeps (10% of it)
        report = check(snap, options, snap.taken_at)
    return replace(report, context=g.context) if g.context else report


def _engine(g, node_sel, params) -> int:
    """check --engine: what the engine's upgrade does to every node (or those -l selects)."""
    from kubectl_safety.cluster.scopes import cluster_scope, engine_scope

    s = Session(g)
    snap = s.snapshot(() if s.offline else cluster_scope() + engine_scope(), "check")
    if node_sel is not None:
        from kubectl_safety.model.selectors import matching_nodes

        nodes = matching_nodes(node_sel, snap.nodes)
    else:
        nodes = sorted(n.name for n in snap.nodes)
    return engine_dry_run(snap, nodes, params, g.output)


def _check_many(g, names, options) -> list:
    """One ClusterCheck per context, checked in parallel; a cluster that fails gets ``error``."""
    from concurrent.futures import ThreadPoolExecutor

    from kubectl_safety.analysis.plans.check import ClusterCheck

    def one(name):
        try:
            return _check_one(replace(g, context=name, warnings=[]), options)
        except SafetyError as e:
            return ClusterCheck(context=name, error=str(e))

    with ThreadPoolExecutor(max_workers=min(MAX_PARALLEL, len(names))) as pool:
        return list(pool.map(one, names))


def _all_contexts(kubeconfig) -> list:
    from kubectl_safety.cluster.kubeconfig import context_names

    names = context_names(kubeconfig)
    if not names:
        raise UsageError("--all-contexts: the kubeconfig has no contexts")
    return list(dict.fromkeys(names))


# The group-wide --context takes one value; this command's own takes several.
command.params = [p for p in command.params if p.name != "context"]

