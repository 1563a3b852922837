"""The command line as pflag (kubectl) reads it, rewritten for click before parsing.

- ``-n=shop`` and ``-o=json``: a short flag with ``=`` takes the rest as its value (click would keep the ``=``).
- ``--force=true``, ``--wait=false``, ``-A=true``: boolean flags with an explicit value.
- ``--dry-run=VALUE``: a mode, or a boolean as kubectl still takes it (deprecated); never a name.
- ``pod/web``, ``no/n1``, ``pods/web`` (``TYPE/NAME``) where a command's declaration takes that resource
  (``cli/registry.py``), and ``delete pod/web`` / ``explain nodes/n1`` for the subcommand plus its name.
"""

import click

from kubectl_safety.cli import registry

TRUE = {"1", "t", "T", "true", "TRUE", "True"}
FALSE = {"0", "f", "F", "false", "FALSE", "False"}


def normalize(group, ctx, args) -> list:
    """``args`` (everything after ``kubectl safety``) rewritten so click reads them as pflag would."""
    out, cmd, path, i = [], group, [], 0
    while i < len(args):
        arg = args[i]
        i += 1
        if arg == "--":
            out += args[i - 1:]
            break
        if arg.startswith("-") and len(arg) > 1 and not _number(arg):
            opt_name, eq, value = arg.partition("=")
            opt = _option(cmd, opt_name)
            if opt is None:
                out.append(arg)
            elif opt.is_flag and not opt.count:
                out += _flag(opt, opt_name, value) if eq else [arg]
            elif eq and opt.name == "dry_run":
                out.append(f"{opt_name}={dry_run_mode(value)}")
            elif eq and not opt_name.startswith("--"):
                out += [opt_name, value]  # -n=shop
            else:
                out.append(arg)
                if not eq and not _optional_value(opt) and i < len(args):
                    out.append(args[i])  # the value: never a subcommand or a name
                    i += 1
            continue
        if isinstance(cmd, click.Group):
            word, slash, name = arg.partition("/")
            declared = registry.subcommand(" ".join(path), word)
            sub_name = declared.path.rsplit(" ", 1)[-1] if declared and (not slash or declared.takes) else None
            sub = cmd.get_command(ctx, sub_name) if sub_name in (cmd.list_commands(ctx) or ()) else None
            if sub is not None and (name or not slash):
                cmd, path = sub, path + [sub_name]
                out += [sub_name] + ([name] if name else [])
                continue
        out.append(_strip_type(" ".join(path), arg))
    return out


def _number(arg) -> bool:
    return arg[1:].replace(".", "", 1).isdigit()


def _option(cmd, name):
    for p in getattr(cmd, "params", ()):
        if isinstance(p, click.Option) and (name in p.opts or name in p.secondary_opts):
            return p
    return None


def _optional_value(opt) -> bool:
    """An option whose value may be left out (drain's ``--dry-run[=MODE]``)."""
    return bool(getattr(opt, "_flag_needs_value", False))


def _flag(opt, name, value) -> list:
    """``--flag=BOOL`` as click spells it: the flag, its ``--no-`` form, or nothing (the default is off)."""
    if value in TRUE:
        return [opt.opts[0] if name in opt.opts else name]
    if value in FALSE:
        if opt.secondary_opts:
            return [opt.secondary_opts[0]]
        if opt.default is not True:  # off by default: --flag=false is the flag left out
            return []
    raise click.UsageError(f'invalid argument "{value}" for "{name}" flag: use true or false')


DRY_RUN_MODES = ("none", "client", "server")


def dry_run_mode(value) -> str:
    """kubectl's ``GetDryRunStrategy`` for ``--dry-run=VALUE``: a mode; ``true``/``false`` (any Go boolean)
    are client/none with a deprecation warning; anything else is a usage error."""
    if value in DRY_RUN_MODES:
        return value
    if value in TRUE or value in FALSE:
        from kubectl_safety.cli.render import warn

        mode = "client" if value in TRUE else "none"
        warn(f"--dry-run={value} is deprecated (boolean value) and can be replaced with --dry-run={mode}.")
        return mode
    raise click.UsageError(f'invalid dry-run value ({value}): must be "none", "server", or "client"')


def _strip_type(path, arg) -> str:
    """``po/web`` -> ``web`` where the command takes pod names; a NAME of a type it does not take is an error.
    (A command whose TYPE is part of the argument, ``rebalance deploy/web``, reads it itself.)"""
    declared = registry.command(path)
    word, slash, name = arg.partition("/")
    if declared is None or not declared.takes or declared.typed or not slash or not name:
        return arg
    if registry.resource(word) in declared.takes:
        return name
    kinds = " or ".join(r.name for r in declared.takes)
    raise click.UsageError(f"'{path}' takes {kinds} names: {arg!r} is not a {kinds}")
