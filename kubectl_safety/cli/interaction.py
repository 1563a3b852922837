"""Talking to the person running a mutating command: confirmation and Ctrl-C/SIGTERM."""

import signal
import sys
from contextlib import contextmanager

import click

from kubectl_safety.errors import DeclinedError, UsageError


def confirm(question: str, yes: bool, verb: str):
    """Ask on a terminal; without one, ``--yes`` is required (scripts never hang on a prompt)."""
    if yes:
        return
    from kubectl_safety.cli.progress import end_live_line

    end_live_line()
    if not sys.stdin.isatty():
        raise UsageError(f"stdin is not a terminal: add --yes to {verb} without confirmation (nothing was changed)")
    try:
        confirmed = click.confirm(question, default=False, err=True)
    except click.Abort:  # Ctrl-C or end of input at the question: what follows starts on a line of its own
        click.echo(err=True)
        raise
    if not confirmed:
        raise DeclinedError("not confirmed; nothing was changed")


@contextmanager
def interrupts(executor, message=None):
    """SIGINT/SIGTERM set ``executor.interrupted`` (no new requests) instead of raising."""

    def handler(signum, frame):
        executor.interrupted.set()
        if message:
            from kubectl_safety.cli.progress import end_live_line

            ended = end_live_line()  # the countdown stops where it is
            click.echo(("" if ended else "\n") + f"interrupt: {message}", err=True)

    saved = {}
    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            saved[sig] = signal.signal(sig, handler)
        except ValueError:  # not the main thread (tests)
            pass
    try:
        yield executor
    finally:
        for sig, old in saved.items():
            signal.signal(sig, old)
