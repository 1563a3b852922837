"""Global flags, accepted anywhere on the command line (before or after the subcommand)."""

from dataclasses import dataclass, field

import click

from kubectl_safety.cli.completion import complete_contexts, complete_namespaces

OUTPUTS = ("table", "wide", "json", "yaml")
_META = "kubectl_safety.globals"


@dataclass
class Globals:
    kubeconfig: str = None
    context: str = None
    namespace: str = None
    all_namespaces: bool = False
    snapshot: tuple = ()
    output: str = "table"
    request_timeout: str = "0"
    as_user: str = None
    as_groups: tuple = ()
    insecure_skip_tls_verify: bool = False
    now: object = None
    warnings: list = field(default_factory=list)


def _store(ctx, param, value):
    """Record a flag the user gave; later (inner) occurrences override earlier ones."""
    if value is None or value == ():
        return value
    if param.name == "now":
        from kubectl_safety.errors import InputError
        from kubectl_safety.model.objects import parse_time

        try:
            parsed = parse_time(value)
        except InputError:
            parsed = None
        if parsed is None or parsed.tzinfo is None:  # a time without a zone is no instant
            raise click.BadParameter(f"{value!r} is not an RFC 3339 time like 2026-01-02T15:04:05Z") from None
        value = parsed
    ctx.meta.setdefault(_META, {})[param.name] = value
    return value


def _opt(*decls, **kwargs):
    return click.option(*decls, callback=_store, expose_value=False, **kwargs)


GLOBAL_OPTIONS = [
    _opt("--kubeconfig", metavar="PATH", type=click.Path(dir_okay=False), help="Path to the kubeconfig file (default: $KUBECONFIG or ~/.kube/config)."),
    _opt("--context", metavar="NAME", shell_complete=complete_contexts, help="The kubeconfig context to use."),
    _opt("-n", "--namespace", metavar="NS", shell_complete=complete_namespaces, help="Namespace (default: the context's, else default)."),
    _opt("-A", "--all-namespaces", is_flag=True, default=None, help="All namespaces, where the command supports it."),
    _opt("--snapshot", multiple=True, metavar="PATH", type=click.Path(allow_dash=True),
         help="Analyse dump files (kubectl get -o yaml|json output, a directory, or - for stdin) instead of the live cluster. Repeatable."),
    _opt("-o", "--output", type=click.Choice(OUTPUTS), help="Output format: table (default), wide, json or yaml."),
    _opt("--request-timeout", metavar="DURATION", help="Per-request timeout, e.g. 10s or 1m (0: none)."),
    _opt("--as", "as_user", metavar="USER", help="Impersonate this user."),
    _opt("--as-group", "as_groups", multiple=True, metavar="GROUP", help="Impersonate this group (repeatable)."),
    _opt("--insecure-skip-tls-verify", is_flag=True, default=None, help="Do not verify the server certificate (insecure)."),
    _opt("--now", metavar="TIME", help="Treat this RFC 3339 time as now (reproducible analysis of dumps)."),
]


def global_options(f):
    """Add every global flag to a command or group."""
    for opt in reversed(GLOBAL_OPTIONS):
        f = opt(f)
    return f


def get_globals(ctx=None) -> Globals:
    """The merged global flags (the occurrence nearest the end of the command line wins)."""
    ctx = ctx or click.get_current_context()
    values = ctx.meta.get(_META, {})
    g = Globals(**{k: v for k, v in values.items() if k in Globals.__dataclass_fields__})
    g.output = g.output or "table"
    g.request_timeout = g.request_timeout or "0"
    return g
