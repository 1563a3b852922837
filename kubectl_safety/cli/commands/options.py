"""``kubectl safety options``: the global flags, listed once (as ``kubectl options``)."""

import click

from kubectl_safety.cli.options import get_globals, global_options


@click.command("options", epilog="\b\nJSON kind: none (help text only)")
@global_options
def command():
    """Print the flags every command accepts (before or after the command's name).

    \b
    Usage: kubectl safety options
    Examples:
      kubectl safety options
    """
    get_globals()  # -A and the other global flags are checked as everywhere
    from kubectl_safety.cli.options import CLOCK_ALIAS, RULE, listed_options

    del CLOCK_ALIAS  # the deprecated --now is not listed
    ctx = click.get_current_context()
    formatter = ctx.make_formatter()
    formatter.write_text("The following options can be passed to any command:")
    with formatter.section("Options"):
        formatter.write_dl([o.get_help_record(ctx) for o in listed_options()])
    with formatter.section("Flags that would change nothing"):
        formatter.write_text("\b\n" + RULE)
    click.echo(formatter.getvalue(), nl=False)
    return 0
