"""``kubectl safety schema [KIND]``: the published JSON Schemas of the -o json reports."""

import click

from kubectl_safety.cli.completers import complete_kinds
from kubectl_safety.cli.options import get_globals, global_options

from kubectl_safety.errors import NotFoundError


@click.command("schema", epilog="\b\nJSON kind: a JSON Schema (draft 2020-12)")
@click.argument("kind", required=False, shell_complete=complete_kinds)
@global_options
def command(kind):
    """Print the JSON Schema of an -o json report kind, or list the kinds.

    Every report a command prints with -o json names its kind (DrainPlan, ClusterCheck,
    RolloutPlan, ...); its schema gives each field's type, the closed sets of values (enums) and
    the required fields.

    \b
    Usage: kubectl safety schema [KIND]
    Examples:
      kubectl safety schema
      kubectl safety schema ClusterCheck > ClusterCheck.json
      kubectl safety schema rolloutplan
    """
    get_globals()  # -A and the other global flags are checked as everywhere
    from importlib.resources import files

    from kubectl_safety.cli.registry import OUTPUTS

    kinds = sorted(OUTPUTS)
    if kind is None:
        click.echo("\n".join(kinds))
        return 0
    found = next((k for k in kinds if k.lower() == kind.lower()), None)
    if found is None:
        raise NotFoundError(f"no schema for kind {kind!r}; the kinds are: {', '.join(kinds)}")
    click.echo(files("kubectl_safety").joinpath(OUTPUTS[found].schema).read_text(encoding="utf-8"), nl=False)
    return 0
