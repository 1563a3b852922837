"""Exit codes and the few error types that carry them to the CLI boundary."""

from enum import IntEnum


class ExitCode(IntEnum):
    """Documented exit codes (README, every command's --help)."""

    OK = 0
    ERROR = 1
    USAGE = 2
    UNSAFE = 3  # unsafe, blocked or refused; a dry run that found blockers
    PARTIAL = 4  # partially done (timeout, some pods left)
    INTERRUPTED = 130


class SafetyError(Exception):
    """An error shown to the user as one line on stderr, with an exit code."""

    exit_code = ExitCode.ERROR

    def __init__(self, message, exit_code=None):
        super().__init__(message)
        if exit_code is not None:
            self.exit_code = exit_code


class UsageError(SafetyError):
    """Contradictory or invalid flags."""

    exit_code = ExitCode.USAGE


class InputError(SafetyError):
    """A snapshot file, manifest or quantity that cannot be parsed."""


class NotFoundError(SafetyError):
    """A named object does not exist."""


class ClusterError(SafetyError):
    """The API server could not be reached, refused, or answered an error."""


class RefusedError(SafetyError):
    """The tool refuses to act (unsafe, blocked, needs confirmation)."""

    exit_code = ExitCode.UNSAFE
