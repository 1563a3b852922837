"""``kubectl safety snapshot``: one file of everything the commands read, that says what it holds."""

import click

from kubectl_safety.cli.options import get_globals, global_options
from kubectl_safety.cli.render import warn
from kubectl_safety.cli.session import Session
from kubectl_safety.errors import InputError, UsageError


@click.command("snapshot", epilog="\b\nJSON kind: none (writes a kubectl List that --snapshot reads)")
@click.option("-o", "--output", "path", metavar="FILE", help="Write the snapshot to FILE (default: stdout).")
@global_options
def command(path):
    """Read everything the commands use, once, into one file every command reads with --snapshot.

    The same requests as a live run (paged, bounded); the file also records the kinds read (those
    that came back empty too), the kinds forbidden or not served, the server version, the time of
    the read (no --as-of needed) and the context. No Secret is read; no credential is written.

    \b
    Usage: kubectl safety snapshot [-o FILE] [--context NAME]
    Examples:
      kubectl safety snapshot -o cluster.json
      kubectl safety check --snapshot cluster.json
      kubectl safety drain node-a1 --dry-run --snapshot cluster.json
    """
    from datetime import datetime, timezone

    from kubectl_safety.cluster.kubeconfig import context_name
    from kubectl_safety.cluster.scopes import snapshot_scope
    from kubectl_safety.cluster.snapshot_file import write
    from kubectl_safety.cluster.source import read_everything

    g = get_globals()
    if g.snapshot:
        raise UsageError("snapshot reads a live cluster: --snapshot files are snapshots already")
    connection = Session(g).connection("snapshot")
    context = None if connection.overrides.get("server") else context_name(g.kubeconfig, g.context)
    record, objects = read_everything(connection, snapshot_scope(), datetime.now(timezone.utc), context,
                                      warnings=g.warnings)
    for line in g.warnings:
        warn(line)
    if path is None:
        write(click.get_binary_stream("stdout"), record, objects)
        return 0
    _write_file(path, record, objects)
    click.echo(f"{path}: {len(objects)} object(s) of {len(record['read'])} kind(s) read"
               + (f"; not read: {', '.join(f'{r} ({why})' for r, why in record['unread'].items())}"
                  if record["unread"] else ""))
    return 0


def _write_file(path, record, objects):
    """Written whole or not at all: a failed write leaves no half snapshot under ``path``."""
    import os

    from kubectl_safety.cluster.snapshot_file import write

    partial = f"{path}.partial"
    try:
        with open(partial, "wb") as f:
            write(f, record, objects)
        os.replace(partial, path)
    except OSError as e:
        raise InputError(f"{path}: cannot write: {e.strerror or e}") from None
    finally:
        if os.path.exists(partial):
            os.remove(partial)


# -o is this command's FILE, not the global output format.
command.params = [p for p in command.params if p.name != "output"]
