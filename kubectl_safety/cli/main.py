"""Entry point: the ``kubectl safety`` group, lazy subcommands, and the error boundary."""

import importlib
import importlib.util
import os
import sys

import click

from kubectl_safety import __version__
from kubectl_safety.cli.options import global_options
from kubectl_safety.errors import ExitCode, SafetyError

# name -> module under kubectl_safety.cli.commands exposing ``command``; imported on demand.
COMMANDS = {
    "explain": "explain",
    "drain": "drain",
    "preemption": "preemption",
    "delete": "delete",
    "rebalance": "rebalance",
    "check": "check",
    "version": "version",
}

EXIT_CODES_HELP = """\b
Exit codes:
  0    OK
  1    error (one line on stderr)
  2    usage error
  3    unsafe, blocked or refused (nothing changed)
  4    partially done (timeout; run again to resume)
  130  interrupted"""


class LazyGroup(click.Group):
    """A group whose subcommands are imported only when used (fast --help and completion)."""

    def __init__(self, *args, lazy=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.lazy = lazy or {}

    def list_commands(self, ctx):
        return sorted(set(self.commands) | {n for n in self.lazy if self._available(n)})

    def _available(self, name):
        return importlib.util.find_spec(f"kubectl_safety.cli.commands.{self.lazy[name]}") is not None

    def get_command(self, ctx, name):
        if name in self.commands:
            return self.commands[name]
        if name not in self.lazy or not self._available(name):
            return None
        module = importlib.import_module(f"kubectl_safety.cli.commands.{self.lazy[name]}")
        return module.command


@click.group(cls=LazyGroup, lazy=COMMANDS, context_settings={"help_option_names": ["-h", "--help"]},
             epilog=EXIT_CODES_HELP)
@click.version_option(__version__, "--version", prog_name="kubectl-safety", message="%(prog)s %(version)s")
@global_options
def cli():
    """Know what a cluster action will do, then do it without breaking availability.

    \b
    kubectl safety explain pod NAME        QoS, priority, termination, eviction rank, PDBs
    kubectl safety drain NODE --dry-run    simulate a drain against PodDisruptionBudgets
    kubectl safety preemption -f POD.yaml  preview which pods the scheduler would preempt
    kubectl safety delete pod NAME --force force delete only with --confirm
    kubectl safety rebalance deploy/NAME   restore topology spread with the fewest evictions
    """


def main(argv=None):
    """Run the CLI; every error is one line on stderr with a documented exit code."""
    debug = os.environ.get("KUBECTL_SAFETY_DEBUG") not in (None, "", "0")
    try:
        code = cli.main(args=argv, prog_name="kubectl safety", standalone_mode=False,
                        complete_var="_KUBECTL_SAFETY_COMPLETE")
    except click.exceptions.Exit as e:
        code = e.exit_code
    except click.exceptions.Abort:
        click.echo("interrupted", err=True)
        code = ExitCode.INTERRUPTED
    except click.UsageError as e:
        hint = f" (see '{e.ctx.command_path} --help')" if e.ctx is not None else ""
        click.echo(f"error: {' '.join(e.format_message().split())}{hint}", err=True)
        code = ExitCode.USAGE
    except click.ClickException as e:
        click.echo(f"error: {' '.join(e.format_message().split())}", err=True)
        code = ExitCode.ERROR
    except SafetyError as e:
        if debug:
            raise
        click.echo(f"error: {e}", err=True)
        code = e.exit_code
    except KeyboardInterrupt:
        click.echo("interrupted", err=True)
        code = ExitCode.INTERRUPTED
    except BrokenPipeError:
        sys.stderr.close()
        code = ExitCode.OK
    except Exception as e:  # the boundary: never a traceback unless debugging
        if debug:
            raise
        click.echo(f"error: internal error: {type(e).__name__}: {str(e)[:200]} "
                   "(set KUBECTL_SAFETY_DEBUG=1 for the traceback)", err=True)
        code = ExitCode.ERROR
    sys.exit(int(code or 0))
