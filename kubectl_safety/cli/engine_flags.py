"""``--engine NAME`` and ``--engine-setting KEY=VALUE``: what an upgrade engine's drain of the nodes does
(``analysis/profiles``), for drain and rollout (with --dry-run) and check."""

import click

from kubectl_safety.errors import UsageError

ENGINE_HELP = "Predict an upgrade engine's drain: kubectl, eks, gke, aks, karpenter, capi, kured, suc."


def engine_options(f):
    """The engine's flags, on a command that plans drains."""
    f = click.option("--management-snapshot", "management_snapshot", metavar="PATH",
                     help="capi: a dump of the management cluster.")(f)
    f = click.option("--management-kubeconfig", "management_kubeconfig", metavar="PATH",
                     help="capi: the management cluster's kubeconfig.")(f)
    f = click.option("--engine-setting", "engine_setting", multiple=True, metavar="KEY=VALUE",
                     help="An engine setting by its own name (e.g. maxUnavailable=2); repeatable.")(f)
    return click.option("--engine", metavar="NAME", help=ENGINE_HELP)(f)


def check_engine_flags(params, dry_run="client"):
    """--engine-setting needs --engine; --engine needs --dry-run (it predicts, it never acts)."""
    if params.get("engine_setting") and not params.get("engine"):
        raise UsageError("--engine-setting needs --engine")
    management = [f for f, p in (("--management-kubeconfig", "management_kubeconfig"),
                                 ("--management-snapshot", "management_snapshot")) if params.get(p)]
    if len(management) > 1:
        raise UsageError("--management-kubeconfig and --management-snapshot cannot be used together")
    if management:
        from kubectl_safety.analysis import profiles

        engine = params.get("engine")
        if not engine or not getattr(profiles.module(engine), "MANAGEMENT_CLUSTER", False):
            raise UsageError(f"{management[0]} needs an --engine whose objects live in a management cluster "
                             f"({', '.join(n for n in profiles.engines() if getattr(profiles.module(n), 'MANAGEMENT_CLUSTER', False))})")
    if params.get("engine") and dry_run != "client":
        raise UsageError("--engine needs --dry-run: it predicts what the engine would do, it changes nothing")


# the commands' own flags that plan kubectl-safety's drain or rollout: an engine drains by its own settings
# (--surge and --surge-limit are not: they plan a surge ahead of the engine, ``profiles.ahead``)
PLANNING = {"ignore_daemonsets", "delete_emptydir_data", "force", "grace_period", "skip_wait_for_delete_timeout",
            "pod_selector", "disable_eviction", "no_capacity", "accept_risk", "order", "wait_completed", "timeout", "max_unavailable", "by_zone", "no_precordon", "skip_blocked",
            "keep_cordoned", "exec_command", "exec_timeout", "wait_for", "ready_timeout", "gate_timeout",
            "lease_namespace", "fail_on", "scope", "ignore_finding"}


def _refuse_unused(name, flags):
    """A planning flag given with an engine whose settings it is not would change nothing: a usage error."""
    ctx = click.get_current_context()
    for p in ctx.command.params:
        if p.name in PLANNING and p.name not in flags \
                and ctx.get_parameter_source(p.name) is click.core.ParameterSource.COMMANDLINE:
            flag = max(p.opts, key=len)
            raise UsageError(f"{flag} has no effect with --engine {name}: the engine drains by its own settings "
                             "(--engine-setting KEY=VALUE)")


def _drain_flags_given(params, flags) -> dict:
    """The command's drain flags given on its command line that are the engine's settings (``flags``:
    the profile module's ``DRAIN_FLAGS``, {click parameter: setting})."""
    ctx = click.get_current_context()
    out = {}
    for param, name in flags.items():
        if param in params and ctx.get_parameter_source(param) is click.core.ParameterSource.COMMANDLINE:
            value = params[param]
            out[name] = str(value).lower() if isinstance(value, bool) else str(value)
    return out


def engine_dry_run(snapshot, nodes, params, output) -> int:
    """Print what the engine does to ``nodes`` (EnginePlan); 0 when every node COMPLETES, else 3."""
    from kubectl_safety.analysis import profiles
    from kubectl_safety.analysis.profiles.outcome import simulate
    from kubectl_safety.cli.render import emit
    from kubectl_safety.cli.views.engine import engine_code, render_engine

    name = params["engine"]
    flags = getattr(profiles.module(name), "DRAIN_FLAGS", {})
    _refuse_unused(name, flags)
    given = {**_drain_flags_given(params, flags), **profiles.parse_assignments(params.get("engine_setting"))}
    if not nodes:
        raise UsageError("no node to drain")
    if params.get("management_kubeconfig") or params.get("management_snapshot"):
        snapshot = _with_management(snapshot, params)
    outcome = simulate(profiles.load(name, given, snapshot, nodes), snapshot, list(nodes), snapshot.taken_at)
    if params.get("surge"):
        from kubectl_safety.analysis.profiles.ahead import surge_ahead
        from kubectl_safety.cli.drain_flags import surge_limit

        outcome = surge_ahead(outcome, snapshot, snapshot.taken_at, surge_limit(params.get("surge_limit")))
    emit(outcome, output, render_engine)
    return engine_code(outcome)


def _with_management(snapshot, params):
    """The snapshot with the management cluster's Cluster API objects (cluster/management.py)."""
    from kubectl_safety.cli.options import get_globals
    from kubectl_safety.cli.render import warn
    from kubectl_safety.cluster.management import merge_management

    warnings = []
    merged = merge_management(snapshot, kubeconfig=params.get("management_kubeconfig"),
                              snapshot_path=params.get("management_snapshot"),
                              request_timeout=get_globals().request_timeout, warnings=warnings)
    for line in warnings:
        warn(f"management cluster: {line}")
    return merged
