"""What a command ended with, and the one exit code that says it.

``ExitCode`` holds the documented codes, each meaning one thing; ``EXIT_CODES`` is their table for
every ``--help`` and the README. A ``Report`` owns a run's code: ``main`` makes one, records what the
command returned (``done``) or raised (``failed``: the single mapping of errors to codes and their
``error:`` line) and exits with ``Report.exit_code``, the worst outcome recorded. The functions at
the end turn what an action did (a drain, a rollout, a delete, a rebalance) into its code.
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


def drain_code(report) -> ExitCode:
    """A drain's (its typed DrainReport): drained; a cordon refused (error); blocked before anything moved
    (not safe); interrupted; else partly done."""
    from kubectl_safety.engine.drain_report import DrainStatus

    if report.status is DrainStatus.BLOCKED and not (report.evicted or report.gone):
        return ExitCode.UNSAFE
    return {DrainStatus.DRAINED: ExitCode.OK, DrainStatus.INTERRUPTED: ExitCode.INTERRUPTED,
            DrainStatus.ERROR: ExitCode.ERROR}.get(report.status, ExitCode.PARTIAL)


def rollout_code(report, blocked_left=False) -> ExitCode:
    """A rollout's (its typed RolloutReport): done; interrupted; error; blocked before any batch was
    done (not safe); else partly done. ``blocked_left``: nodes were left out as blocked
    (--skip-blocked), so a rollout done with the rest is not safe."""
    from kubectl_safety.engine.rollout_report import RolloutStatus

    ends = {RolloutStatus.DONE: ExitCode.UNSAFE if blocked_left else ExitCode.OK,
            RolloutStatus.INTERRUPTED: ExitCode.INTERRUPTED, RolloutStatus.ERROR: ExitCode.ERROR}
    if report.status in ends:
        return ends[report.status]
    nothing_done = not any(b.status is RolloutStatus.DONE for b in report.batches) and not report.resumed
    return ExitCode.UNSAFE if report.status is RolloutStatus.BLOCKED and nothing_done else ExitCode.PARTIAL


def check_code(checks) -> ExitCode:
    """``check``'s (its ClusterChecks, one per context): an error when one could not be checked, OK when
    every one is ready, else UNSAFE."""
    if any(c.error is not None for c in checks):
        return ExitCode.ERROR
    return ExitCode.OK if all(c.summary.ready for c in checks) else ExitCode.UNSAFE


def rebalance_plan_code(plan) -> ExitCode:
    """A RebalancePlan's: OK when it fixes the spread and is SAFE (or there is nothing to do)."""
    return ExitCode.OK if plan.summary.fixed and plan.safe else ExitCode.UNSAFE


def rebalance_code(executed) -> ExitCode:
    """An ExecutedRebalance's: interrupted; OK when the spread is fixed (measured again with --wait, else
    every eviction went and the plan fixes it); nothing went (UNSAFE when only budgets refused, else an
    error); else partly done."""
    from kubectl_safety.cluster.client import Result

    plan, execution = executed.plan, executed.execution
    if execution.interrupted:
        return ExitCode.INTERRUPTED
    results = execution.results()
    went = [e for e in results if e.went]
    if execution.waited and execution.last.summary.violated == 0:
        return ExitCode.OK
    if not went:
        return ExitCode.UNSAFE if all(e.result == Result.PDB_BLOCKED for e in results) else ExitCode.ERROR
    if not execution.waited and len(went) == len(plan.evictions) and plan.summary.fixed:
        return ExitCode.OK
    return ExitCode.PARTIAL


def delete_code(report, interrupted=False) -> ExitCode:
    """A DeleteReport's: interrupted; an error when every delete failed; partly done when one failed or
    a pod was not gone in time; else OK (a dry run, a refusal's assessment: nothing to fail)."""
    from kubectl_safety.engine.delete_report import DeleteAction

    if interrupted:
        return ExitCode.INTERRUPTED
    failed = [e for e in report.pods if e.action is DeleteAction.FAILED]
    if failed and len(failed) == len(report.pods):
        return ExitCode.ERROR
    if failed or any(e.gone is False for e in report.pods):
        return ExitCode.PARTIAL
    return ExitCode.OK


PLACED = ("fits", "preempt", "waiting", "bound")  # a PreemptionPreview's outcomes that place the pod


def preemption_code(previews, accepted=False) -> ExitCode:
    """PreemptionPreviews': OK when every pod is placed and no snapshot was incomplete (unless accepted)."""
    unheld = any(f.code == "SNAPSHOT_INCOMPLETE" for r in previews for f in r.findings)
    return ExitCode.OK if all(r.outcome in PLACED for r in previews) and (not unheld or accepted) \
        else ExitCode.UNSAFE
