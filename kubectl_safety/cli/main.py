"""Entry point: the ``kubectl safety`` group, lazy subcommands, and the error boundary."""

import importlib
import os
import sys

import click

from kubectl_safety import __version__
from kubectl_safety.cli.groups import WholeHelpGroup, noted
from kubectl_safety.cli.options import OPTIONS_NOTE, global_options
from kubectl_safety.cli.registry import LAZY
from kubectl_safety.cli.report import EXIT_CODES, ExitCode, Report

# name -> module under kubectl_safety.cli.commands exposing ``command``; imported on demand.
COMMANDS = LAZY

EXIT_CODES_HELP = f"\b\n{EXIT_CODES}\n{OPTIONS_NOTE}"


class LazyGroup(WholeHelpGroup):
    """A group whose subcommands are imported only when used (fast --help and completion)."""

    def __init__(self, *args, lazy=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.lazy = lazy or {}

    def list_commands(self, ctx):
        return sorted(set(self.commands) | {n for n in self.lazy if self._available(n)})

    def _available(self, name):
        import importlib.util

        return importlib.util.find_spec(f"kubectl_safety.cli.commands.{self.lazy[name]}") is not None

    def parse_args(self, ctx, args):
        if ctx.parent is None and not ctx.resilient_parsing:  # the whole line, as kubectl (pflag) reads it
            from kubectl_safety.cli.argv import normalize

            args = normalize(self, ctx, args)
        return super().parse_args(ctx, args)

    def get_command(self, ctx, name):
        if name in self.commands:
            return noted(self.commands[name])
        if name not in self.lazy:
            return None
        path = f"kubectl_safety.cli.commands.{self.lazy[name]}"
        try:
            module = importlib.import_module(path)
        except ModuleNotFoundError as e:
            if e.name != path:
                raise
            return None
        return noted(module.command)


@click.group(cls=LazyGroup, lazy=COMMANDS, context_settings={"help_option_names": ["-h", "--help"]},
             epilog=EXIT_CODES_HELP)
@click.version_option(__version__, "--version", prog_name="kubectl-safety", message="%(prog)s %(version)s")
@global_options  # the deprecated --now TIME too: before the subcommand it cannot be delete's --now
def cli():
    """Know what a cluster action will do, then do it without breaking availability.

    \b
    Examples:
      kubectl safety check -l pool=blue          gate a node pool: what blocks its maintenance
      kubectl safety rollout -l pool=blue --dry-run
                                                 plan the pool's maintenance batch by batch
      kubectl safety drain NODE --dry-run        simulate a drain against PodDisruptionBudgets
      kubectl safety explain pod NAME            QoS, priority, termination, eviction rank, PDBs
      kubectl safety preemption -f POD.yaml      preview which pods the scheduler would preempt
      kubectl safety delete pod NAME --force     force delete only with --confirm
      kubectl safety rebalance deploy/NAME       restore topology spread with the fewest evictions
      kubectl safety help [COMMAND]              help for a command
    """


@cli.command("help", epilog="\b\nJSON kind: none (help text only)")
@click.argument("words", nargs=-1)
@click.pass_context
def help_command(ctx, words):
    """Help for any command, as kubectl help prints it.

    \b
    Usage: kubectl safety help [COMMAND [SUBCOMMAND]]
    Examples:
      kubectl safety help
      kubectl safety help drain
      kubectl safety help explain pod
    """
    root = ctx.parent
    cmd, sub = cli, root
    for word in words:
        found = cmd.get_command(sub, word) if isinstance(cmd, click.Group) else None
        if found is None:
            raise click.UsageError(f"unknown command {word!r} for '{sub.command_path}'")
        sub = click.Context(found, info_name=found.name, parent=sub)
        cmd = found
    click.echo(sub.get_help())


_SIGNALLED = []  # SIGTERM seen: the exit is 130 even where Python swallowed the interrupt (a weakref callback)


def _terminated(signum, frame):
    _SIGNALLED.append(signum)
    raise KeyboardInterrupt  # SIGTERM ends like Ctrl-C: exit 130, temporary files removed


def _say(line: str):
    """One line on stderr after ending a live status line: credentials removed, made printable
    (stderr gone: silently dropped)."""
    from kubectl_safety.cli.progress import end_live_line
    from kubectl_safety.printable import for_terminal

    try:
        end_live_line()
        click.echo(for_terminal(line), err=True)
    except (OSError, ValueError):
        pass


def _stdout_failed(e) -> int:
    """stdout closed (EPIPE: exit 1 quietly, as click does) or full (one line); later flushes go nowhere."""
    import errno

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass
    if isinstance(e, BrokenPipeError) or getattr(e, "errno", None) == errno.EPIPE:
        return ExitCode.ERROR
    _say(f"error: cannot write the output: {e.strerror or e}")
    return ExitCode.ERROR


def run():
    """The installed command, ``bin/kubectl-safety`` and ``python -m kubectl_safety``: ``main`` in a
    process of its own, which exits without freeing its objects one by one. A large snapshot is
    many small dicts: tearing them down one by one delays the exit after the answer is out,
    and the operating system takes the memory back at once. Exit handlers still run; with a thread
    still alive the exit is the usual one (which waits for it)."""
    import threading

    from kubectl_safety.cli import session

    session.keep_snapshots()
    try:
        main()
        code = 0
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else 0 if e.code is None else 1
    if threading.active_count() > 1:
        sys.exit(code)
    import atexit

    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):  # closed, or never open (None)
            pass
    os._exit(code)


def main(argv=None):
    """Run the CLI; every error is one line on stderr with a documented exit code."""
    import signal

    debug = debugging()
    if sys.stderr is None:  # stderr closed: messages go nowhere, the command still runs
        sys.stderr = open(os.devnull, "w", encoding="utf-8")
    if sys.stdout is None:  # stdout closed (>&-): nothing can be printed, so nothing is done
        _say("error: cannot write the output: stdout is closed")
        sys.exit(ExitCode.ERROR)
    try:
        previous = signal.signal(signal.SIGTERM, _terminated)
    except ValueError:  # not the main thread (tests)
        previous = None
    from kubectl_safety.printable import SafeStream

    streams = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = SafeStream(sys.stdout), SafeStream(sys.stderr)
    try:
        code = _run(argv, debug)
    except SystemExit as e:  # click exits 1 by itself when stdout is closed (EPIPE)
        code = e.code
    finally:
        sys.stdout, sys.stderr = streams
    if _SIGNALLED and code != ExitCode.INTERRUPTED:
        _say("interrupted")
        code = ExitCode.INTERRUPTED
    try:
        sys.stdout.flush()
    except (OSError, ValueError) as e:
        code = _stdout_failed(e) if isinstance(e, OSError) else code
    if previous is not None:
        signal.signal(signal.SIGTERM, previous)
    sys.exit(int(code or 0))


def debugging() -> bool:
    """KUBECTL_SAFETY_DEBUG set to a true value (1, true, yes, on): errors raise with their traceback."""
    return os.environ.get("KUBECTL_SAFETY_DEBUG", "").strip().lower() in ("1", "true", "yes", "on")


def _run(argv, debug) -> int:
    """The command's exit code (its ``Report``'s); every error is one line on stderr."""
    from kubectl_safety.cli.completion_request import instruction_error

    report = Report()
    problem = instruction_error()
    if problem:
        _say(f"error: {problem}")
        return ExitCode.ERROR
    try:
        report.done(cli.main(args=argv, prog_name="kubectl safety", standalone_mode=False,
                             complete_var="_KUBECTL_SAFETY_COMPLETE", obj=report))
    except click.exceptions.Exit as e:
        report.done(e.exit_code)
    except click.exceptions.NoArgsIsHelpError as e:  # bare `kubectl safety` or a bare group: help, exit 0
        click.echo(e.ctx.get_help())
        report.done(ExitCode.OK)
    except OSError as e:
        if debug:
            raise
        if e.errno in _OUTPUT_ERRNOS:
            report.done(_stdout_failed(e))
        else:
            _say(report.failed(e))
    except (click.exceptions.Abort, click.ClickException, KeyboardInterrupt) as e:
        _say(report.failed(e))
    except Exception as e:  # the boundary: never a traceback unless debugging
        if debug:
            raise
        _say(report.failed(e))
    return report.exit_code


_OUTPUT_ERRNOS = (32, 28, 5, 27)  # EPIPE, ENOSPC, EIO, EFBIG: writing the output failed
