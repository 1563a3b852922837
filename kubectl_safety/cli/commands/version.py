"""``kubectl safety version``."""

import click

from kubectl_safety import __version__
from kubectl_safety.cli.options import get_globals, global_options
from kubectl_safety.cli.render import emit
from kubectl_safety.cli.session import Session
from kubectl_safety.errors import SafetyError
from kubectl_safety.model.constants import API_VERSION


@click.command("version", epilog="\b\nJSON kind: Version (exit 0 also when the server is unreachable)")
@global_options
def command():
    """Print the tool's version and, when reachable, the server's.

    \b
    Usage: kubectl safety version [-o json]
    Examples:
      kubectl safety version
      kubectl safety version --context prod -o json
    """
    g = get_globals()
    report = {"kind": "Version", "apiVersion": API_VERSION, "clientVersion": __version__, "serverVersion": None}
    if not g.snapshot:
        try:
            report["serverVersion"] = Session(g).connection("version").server_version()
        except SafetyError as e:
            report["serverError"] = str(e)
    from kubectl_safety.cli.views.version import render

    emit(report, g.output, render)
    return 0
