"""Global flags, accepted anywhere on the command line (before or after the subcommand), as kubectl names them."""

import click

from kubectl_safety.cli import registry
from kubectl_safety.cli.completers import complete_contexts, complete_namespaces
from kubectl_safety.cli.globals import META, Globals, given_globals

OUTPUTS = ("table", "wide", "json", "yaml", "name")
TEMPLATED = ("jsonpath", "jsonpath-as-json", "jsonpath-file", "go-template", "go-template-file",
             "custom-columns", "custom-columns-file")
OUTPUT_HELP = {"table": "the default text report", "wide": "the report with more detail", "json": "the report as JSON",
               "yaml": "the report as YAML", "name": "TYPE/NAME of each object the report acts on",
               "jsonpath": "a kubectl JSONPath template over the JSON report",
               "jsonpath-as-json": "the JSONPath results as a JSON array", "jsonpath-file": "a JSONPath template file",
               "go-template": "a Go template over the JSON report", "go-template-file": "a Go template file",
               "custom-columns": "NAME:.path columns, one row per object", "custom-columns-file": "a custom-columns file"}


class OutputFormat(click.ParamType):
    """``-o``: table|wide|json|yaml|name, or FORMAT=TEMPLATE (jsonpath, go-template, custom-columns, ...)."""

    name = "format"

    def convert(self, value, param, ctx):
        kind, eq, template = str(value).partition("=")
        if (kind in OUTPUTS or kind in registry.OWN_FORMATS) and not eq:
            return kind
        if kind in TEMPLATED:
            if not template:
                self.fail(f"{kind} format specified but no template given: use -o {kind}=TEMPLATE", param, ctx)
            return value
        self.fail(f"unable to match a printer suitable for the output format {value!r}, allowed formats are: "
                  + ",".join(OUTPUTS + TEMPLATED), param, ctx)

    def shell_complete(self, ctx, param, incomplete):
        from click.shell_completion import CompletionItem

        values = list(OUTPUTS) + [f"{t}=" for t in TEMPLATED]
        return [CompletionItem(v, help=OUTPUT_HELP[v.rstrip("=")]) for v in values if v.startswith(incomplete)]


def _store(ctx, param, value):
    """Record a flag the user gave; later (inner) occurrences override earlier ones."""
    if value is None or value == ():
        return value
    name = param.name
    if name in ("now", "now_alias"):
        from kubectl_safety.errors import InputError
        from kubectl_safety.model.meta import parse_time

        try:
            parsed = parse_time(value)
        except InputError:
            parsed = None
        if parsed is None or parsed.tzinfo is None:  # a time without a zone is no instant
            raise click.BadParameter(f"{value!r} is not an RFC 3339 time like 2026-01-02T15:04:05Z") from None
        if name == "now_alias" and not ctx.resilient_parsing:  # as kubectl words a deprecated flag
            from kubectl_safety.cli.render import warn

            warn("flag --now has been deprecated, use --as-of instead")
        value, name = parsed, "now"
    ctx.meta.setdefault(META, {})[name] = value
    return value


def _opt(*decls, **kwargs):
    return click.option(*decls, callback=_store, expose_value=False, **kwargs)


CLOCK_ALIAS = _opt("--now", "now_alias", metavar="TIME", hidden=True,
                   help="Deprecated spelling of --as-of (not on delete, where --now is kubectl's).")

class NonNegative(click.ParamType):
    """An integer >= 0 (no ``[x>=0]`` in help, as kubectl shows none)."""

    name = "integer"

    def convert(self, value, param, ctx):
        try:
            n = int(value)
        except (TypeError, ValueError):
            self.fail(f"{value!r} is not a valid integer", param, ctx)
        if n < 0:
            self.fail(f"{value} must not be negative", param, ctx)
        return n


# (flag declarations, click.option arguments): listed once, by ``kubectl safety options``; a command's help
# shows only those in SHOWN (as kubectl shows -o with each command and lists the rest under `kubectl options`)
GLOBAL_SPECS = [
    (("--kubeconfig",), dict(metavar="PATH", type=click.Path(dir_okay=False),
         help="Path to the kubeconfig file (default: $KUBECONFIG or ~/.kube/config).")),
    (("--context",), dict(metavar="NAME", shell_complete=complete_contexts, help="The kubeconfig context to use.")),
    (("--cluster",), dict(metavar="NAME", help="The kubeconfig cluster to use (instead of the context's).")),
    (("--user",), dict(metavar="NAME", help="The kubeconfig user to use (instead of the context's).")),
    (("-s", "--server"), dict(metavar="URL", help="The address and port of the Kubernetes API server.")),
    (("--token",), dict(metavar="TOKEN", help="Bearer token for authentication to the API server.")),
    (("--certificate-authority",), dict(metavar="PATH", help="Path to a cert file for the certificate authority.")),
    (("--client-certificate",), dict(metavar="PATH", help="Path to a client certificate file for TLS.")),
    (("--client-key",), dict(metavar="PATH", help="Path to a client key file for TLS.")),
    (("--tls-server-name",), dict(metavar="NAME", help="Server name to use for server certificate validation.")),
    (("-n", "--namespace"), dict(metavar="NS", shell_complete=complete_namespaces,
         help="Namespace (default: the context's, else default).")),
    (("-A", "--all-namespaces"), dict(is_flag=True, default=None,
         help="All namespaces (rebalance, delete pod -l, explain priorities; an error elsewhere).")),
    (("--snapshot",), dict(multiple=True, metavar="PATH", type=click.Path(allow_dash=True),
         help="Analyse dump files (kubectl get -o yaml|json output, a directory, or - for stdin) instead of the "
              "live cluster. Repeatable.")),
    (("-o", "--output"), dict(type=OutputFormat(),
         help="Output format: table (default), wide, json, yaml, name, jsonpath=..., jsonpath-as-json=..., "
              "go-template=..., custom-columns=... (and the -file variants).")),
    (("--request-timeout",), dict(metavar="DURATION",
         help="Per-request timeout: a Go duration such as 10s, 1m30s (0: none).")),
    (("--as", "as_user"), dict(metavar="USER", help="Impersonate this user.")),
    (("--as-group", "as_groups"), dict(multiple=True, metavar="GROUP", help="Impersonate this group (repeatable).")),
    (("--as-uid",), dict(metavar="UID", help="Impersonate this UID.")),
    (("--insecure-skip-tls-verify",), dict(is_flag=True, default=None,
         help="Do not verify the server certificate (insecure).")),
    (("-v", "--v", "verbosity"), dict(type=NonNegative(), metavar="LEVEL",
         help="Log level: 6 logs each API request on stderr (method, URL, status, time).")),
    (("--as-of", "now"), dict(metavar="TIME",
         help="Analyse as of this RFC 3339 time (default: the clock; with --snapshot, the time a snapshot "
              "records, else the file's mtime).")),
]
SHOWN = {"--snapshot", "--output", "--as-of"}
OPTIONS_NOTE = "Use 'kubectl safety options' for a list of global command-line options (applies to all commands)."
GLOBAL_OPTIONS = [_opt(*decls, **dict(kw, hidden=not SHOWN & set(decls))) for decls, kw in GLOBAL_SPECS]


def listed_options() -> list:
    """The global flags as click options shown in help (for ``kubectl safety options``)."""
    return [click.Option(list(decls), expose_value=False, **kw) for decls, kw in GLOBAL_SPECS]


def global_options(f=None, *, clock_alias=True):
    """Add every global flag to a command or group (``clock_alias``: also the deprecated ``--now TIME``)."""

    def decorate(f):
        for opt in reversed(GLOBAL_OPTIONS + ([CLOCK_ALIAS] if clock_alias else [])):
            f = opt(f)
        return f

    return decorate(f) if f is not None else decorate


def command_path(ctx) -> str:
    """The subcommand words after ``kubectl safety`` (``explain pod``)."""
    return registry.command_path(ctx)


def get_globals(ctx=None) -> Globals:
    """The merged global flags (the occurrence nearest the end of the command line wins).

    Called by a command (no ``ctx``), a flag that would change nothing is a usage error (``RULE``).
    """
    check = ctx is None
    ctx = ctx or click.get_current_context()
    g = given_globals(ctx)
    if check and g.request_timeout != "0":
        from kubectl_safety.model.duration import flag_seconds

        flag_seconds(g.request_timeout, "--request-timeout")  # as kubectl: also offline
    if check:
        _check_header_values(g)
        _check_unused(g, command_path(ctx))
    return g


RULE = ("A global flag is never ignored: one that would change nothing is a usage error\n"
        "(exit 2), in every command. With --snapshot no cluster is read: a connection flag\n"
        "(--kubeconfig, --context, --cluster, --user, --server, --token, the\n"
        "certificate flags, --as, --as-group, --as-uid, --insecure-skip-tls-verify)\n"
        "is refused. -n is refused where no one namespace is read (drain and rollout\n"
        "work on nodes; check and explain priorities read every namespace), -A where\n"
        "it has no use. --request-timeout and -v are checked, and bound or log requests.")
# the Globals fields of the connection flags (``GLOBAL_SPECS``): with --snapshot there is no connection
CONNECTION = ("kubeconfig", "context", "cluster", "user", "server", "token", "certificate_authority",
              "client_certificate", "client_key", "tls_server_name", "as_user", "as_groups", "as_uid",
              "insecure_skip_tls_verify")


def flag_name(field: str) -> str:
    """The flag of a global option's ``Globals`` field (``as_user`` -> ``--as``)."""
    for decls, _ in GLOBAL_SPECS:
        longs = [d for d in decls if d.startswith("--")]
        if field in decls or longs[-1][2:].replace("-", "_") == field:
            return "/".join(d for d in decls if d.startswith("-"))


def snapshot_refuses(flag: str):
    """The usage error of a connection flag given with --snapshot."""
    from kubectl_safety.errors import UsageError

    return UsageError(f"{flag} cannot be used with --snapshot: the files are read instead of a cluster "
                      "(see 'kubectl safety options')")


def _check_unused(g, path):
    """``RULE``: a connection flag with --snapshot, or -n/-A where the command has no use for it, is refused."""
    from kubectl_safety.errors import UsageError

    if g.snapshot:
        given = [f for f in CONNECTION if getattr(g, f)]
        if given:
            raise snapshot_refuses(flag_name(given[0]))
    declared = registry.command(path)
    for field in ("all_namespaces", "namespace"):
        why = getattr(declared, field) if declared else "it has no use for it"
        if getattr(g, field) and why is not True:
            raise UsageError(f"{flag_name(field)} is not supported by '{path}': {why}")


# flags whose values are sent as HTTP request headers: (Globals field, flag, header, the value may be shown)
HEADER_FLAGS = (("token", "--token", "Authorization"),)  # flags sent as a header that must be ASCII


def _check_header_values(g):
    """A token that is not ASCII is a usage error naming the flag, never "unable to connect" (its value is not shown).

    Impersonation values are sent as UTF-8, as kubectl sends them."""
    from kubectl_safety.errors import UsageError

    for name, flag, header in HEADER_FLAGS:
        value = getattr(g, name)
        if value and not str(value).isascii():
            raise UsageError(f"{flag} value is not ASCII: the {header} header is sent in ASCII only")
