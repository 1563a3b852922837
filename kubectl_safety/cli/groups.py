"""Command groups: whole one-line summaries in help and completion, subcommands named as kubectl names
resources (``explain pods``, ``delete po``)."""

import click

from kubectl_safety.cli import registry
from kubectl_safety.cli.options import OPTIONS_NOTE
from kubectl_safety.cli.report import EXIT_CODES


def unknown(group, ctx, word) -> str:
    """kubectl's message for a mistyped command, with its suggestion (``dran``: did you mean drain?)."""
    import difflib

    path = ctx.command_path
    close = difflib.get_close_matches(word, group.list_commands(ctx), n=3, cutoff=0.6)
    hint = f"; did you mean {' or '.join(close)}?" if close else ""
    return f'unknown command "{word}" for "{path}"{hint}'


def noted(command):
    """The command, its help ending with the table of exit codes and where the global flags are listed
    (as kubectl's does; not in the help of ``options``, which lists them)."""
    if command is not None and EXIT_CODES not in (command.epilog or ""):
        ending = EXIT_CODES if command.name == "options" else f"{EXIT_CODES}\n{OPTIONS_NOTE}"
        command.epilog = f"{command.epilog}\n{ending}" if command.epilog else f"\b\n{ending}"
    return command


def summary(command) -> str:
    """A command's whole one-line summary (the docstring's first paragraph), not click's 45-character cut."""
    text = command.short_help or (command.help or "").split("\n\n")[0]
    return " ".join(text.split())


class WholeHelpGroup(click.Group):
    """A group whose help and subcommand completions carry each subcommand's whole summary, and whose
    subcommands named after a resource answer to each of its kubectl spellings."""

    def get_command(self, ctx, name):
        found = super().get_command(ctx, name)
        if found is None:
            declared = registry.subcommand(registry.command_path(ctx), name)
            if declared is not None and declared.path.rsplit(" ", 1)[-1] != name:
                found = super().get_command(ctx, declared.path.rsplit(" ", 1)[-1])
        return noted(found)

    def resolve_command(self, ctx, args):
        if args and not args[0].startswith("-") and self.get_command(ctx, args[0]) is None:
            raise click.UsageError(unknown(self, ctx, args[0]), ctx)
        name, cmd, rest = super().resolve_command(ctx, args)
        return (cmd.name if cmd is not None else name), cmd, rest  # `explain pods` runs as `explain pod`

    def format_commands(self, ctx, formatter):
        rows = [(name, summary(cmd)) for name in self.list_commands(ctx)
                if (cmd := self.get_command(ctx, name)) is not None and not cmd.hidden]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)

    def shell_complete(self, ctx, incomplete):
        from click.shell_completion import CompletionItem

        items = [CompletionItem(name, help=summary(cmd)) for name in self.list_commands(ctx)
                 if name.startswith(incomplete) and (cmd := self.get_command(ctx, name)) is not None and not cmd.hidden]
        return items + self._typed_names(ctx, incomplete) + click.Command.shell_complete(self, ctx, incomplete)

    def _typed_names(self, ctx, incomplete) -> list:
        """``delete pod/<TAB>``, ``explain no/<TAB>``: the subcommand's own NAME completion."""
        word, slash, _ = incomplete.partition("/")
        declared = registry.subcommand(registry.command_path(ctx), word) if slash else None
        sub = self.get_command(ctx, word) if declared is not None and declared.takes else None
        arguments = [p for p in getattr(sub, "params", ()) if isinstance(p, click.Argument)]
        if not arguments:
            return []
        return arguments[0].shell_complete(click.Context(sub, info_name=sub.name, parent=ctx), incomplete)
