"""What a command ended with, and the one exit code that says it.

``ExitCode`` holds the documented codes, each meaning one thing; ``EXIT_CODES`` is their table for
every ``--help`` and the README. A ``Report`` owns a run's code: ``main`` makes one, records what the
command returned (``done``) or raised (``failed``: the single mapping of errors to codes and their
``error:`` line) and exits with ``Report.exit_code``, the worst outcome recorded. ``verdict`` is a
plan's code; each command's view (``cli/views/<module>.py``) turns what its command found or did into its
code.
"""

from enum import IntEnum

import click

from kubectl_safety.errors import DeclinedError, RefusedError, SafetyError, UsageError


class ExitCode(IntEnum):
    """The documented exit codes (``MEANINGS``: what each says)."""

    OK = 0
    ERROR = 1
    USAGE = 2
    UNSAFE = 3
    PARTIAL = 4
    DECLINED = 5
    INTERRUPTED = 130


MEANINGS = {
    ExitCode.OK: "OK: safe, ready, done, or nothing to do",
    ExitCode.ERROR: "error: one line on stderr (not found, forbidden, unreachable, a bad file)",
    ExitCode.USAGE: "usage: a bad flag; --yes missing without a terminal; acting on --snapshot",
    ExitCode.UNSAFE: "not safe: unaccepted risks, blocked, not ready, no room for the pod, held by another "
                     "rollout; nothing changed",
    ExitCode.PARTIAL: "partly done (a timeout, a batch blocked, a pod failed): run it again to resume",
    ExitCode.DECLINED: "declined at the confirmation prompt; nothing changed",
    ExitCode.INTERRUPTED: "interrupted (Ctrl-C, SIGTERM)",
}

EXIT_CODES = "Exit codes:\n" + "\n".join(f"  {code.value:<4} {text}" for code, text in MEANINGS.items())


def markdown_table() -> str:
    """The README's table of exit codes (the same rows as ``EXIT_CODES``)."""
    return "| code | meaning |\n|---|---|\n" + "".join(f"| {c.value} | {t} |\n" for c, t in MEANINGS.items())


# worst last: a run that recorded several outcomes exits with the worst
_WORST = (ExitCode.OK, ExitCode.UNSAFE, ExitCode.DECLINED, ExitCode.PARTIAL, ExitCode.USAGE, ExitCode.ERROR,
          ExitCode.INTERRUPTED)
_ERRORS = ((DeclinedError, ExitCode.DECLINED), (UsageError, ExitCode.USAGE), (RefusedError, ExitCode.UNSAFE),
           (SafetyError, ExitCode.ERROR))


class Report:
    """The outcomes of one run; ``exit_code`` is the worst of them (OK when none was recorded)."""

    def __init__(self):
        self.outcomes = []

    def done(self, code):
        """What a command returned: an ``ExitCode`` (an int; None is OK)."""
        self.outcomes.append(ExitCode(code or 0))

    def interrupted(self):
        self.outcomes.append(ExitCode.INTERRUPTED)

    def failed(self, error) -> str:
        """Record what ``error`` means and return its one line for stderr ("" when there is none to say)."""
        code, line = _judge(error)
        self.outcomes.append(code)
        return line

    @property
    def exit_code(self) -> ExitCode:
        return max(self.outcomes, key=_WORST.index, default=ExitCode.OK)


def _judge(error):
    """``(code, line)`` for an exception that ended a command."""
    if isinstance(error, (KeyboardInterrupt, click.exceptions.Abort)):
        return ExitCode.INTERRUPTED, "interrupted"
    if isinstance(error, click.UsageError):
        hint = f" (see '{error.ctx.command_path} --help')" if error.ctx is not None else ""
        return ExitCode.USAGE, f"error: {' '.join(error.format_message().split())}{hint}"
    if isinstance(error, click.ClickException):
        return ExitCode.ERROR, f"error: {' '.join(error.format_message().split())}"
    if isinstance(error, SafetyError):
        return next(code for kind, code in _ERRORS if isinstance(error, kind)), f"error: {error}"
    if isinstance(error, OSError):
        return ExitCode.ERROR, f"error: {type(error).__name__}: {error.strerror or error}"
    if isinstance(error, RecursionError):
        return ExitCode.ERROR, "error: the input is nested too deeply"
    return ExitCode.ERROR, (f"error: internal error: {type(error).__name__}: {str(error)[:200]} "
                            "(set KUBECTL_SAFETY_DEBUG=1 for the traceback)")


def verdict(plan) -> ExitCode:
    """A plan's code (a DrainPlan, a RolloutPlan, a drain's server dry run): OK when it is SAFE, else UNSAFE."""
    return ExitCode.OK if plan.safe else ExitCode.UNSAFE
