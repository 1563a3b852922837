"""The few error types that carry a failure to the CLI boundary (``cli/report.py`` gives each its exit code)."""


class SafetyError(Exception):
    """An error shown to the user as one line on stderr."""


class UsageError(SafetyError):
    """Contradictory or invalid flags, or a command that cannot run as asked (no --yes without a terminal,
    acting on --snapshot files)."""


class InputError(SafetyError):
    """A snapshot file, manifest or quantity that cannot be parsed."""


class NotFoundError(SafetyError):
    """A named object does not exist."""


class ClusterError(SafetyError):
    """The API server could not be reached, refused, or answered an error."""


class RefusedError(SafetyError):
    """The tool refuses to act for safety: the plan is not safe, force without --confirm, or another
    rollout holds the nodes."""


class DeclinedError(SafetyError):
    """The person at the terminal did not confirm."""
