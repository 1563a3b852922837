"""What a command needs from the global flags: a namespace, a connection, a snapshot."""

from kubectl_safety.cli.render import warn
from kubectl_safety.errors import UsageError


_KEPT = None  # [the last snapshot loaded], once ``keep_snapshots`` was called


def keep_snapshots():
    """Hold the last snapshot loaded until the process ends (``main.run``: it is never freed)."""
    global _KEPT
    _KEPT = []


class Session:
    """Built once per command from the merged global flags; I/O happens only when asked."""

    def __init__(self, g):
        self.g = g
        self._connection = None
        self._request_limit = None  # (DURATION, the flag that gave it) when not --request-timeout

    def limit_requests(self, duration: str, flag: str):
        """Bound each request by ``duration``, which the user gave as ``flag`` (drain's ``--timeout``)."""
        self._request_limit = (duration, flag)

    @property
    def offline(self) -> bool:
        return bool(self.g.snapshot)

    def connection(self, command=""):
        if self._connection is None:
            from kubectl_safety.cluster.live import Connection

            timeout, flag = self._request_limit or (self.g.request_timeout, "--request-timeout")
            self._connection = Connection(
                kubeconfig=self.g.kubeconfig, context=self.g.context,
                request_timeout=timeout, timeout_flag=flag, as_user=self.g.as_user,
                as_groups=tuple(self.g.as_groups),
                insecure_skip_tls_verify=bool(self.g.insecure_skip_tls_verify),
                user_agent_suffix=f" ({command})" if command else "",
                overrides=self.g.overrides(), as_uid=self.g.as_uid, verbosity=self.g.verbosity)
        return self._connection

    @property
    def namespace(self) -> str:
        if self.g.namespace:
            return self.g.namespace
        if self.offline:
            return "default"
        return self.connection().default_namespace()

    def now(self):
        """--as-of when given; else live: the clock (read here, in the CLI layer); dumps: the file time."""
        if self.g.now is not None:
            return self.g.now
        if self.offline:
            return None
        from datetime import datetime, timezone

        return datetime.now(timezone.utc)

    def snapshot(self, queries=(), command=""):
        """Dumps when --snapshot was given, else the live API restricted to ``queries``."""
        from kubectl_safety.cluster.source import load_snapshot

        for path in self.g.snapshot:
            hint = yaml_hint(path)
            if hint:
                warn(hint)

        snap = load_snapshot(snapshot_paths=self.g.snapshot,
                             connection=None if self.offline else self.connection(command),
                             queries=queries, now=self.now(), warnings=self.g.warnings)
        for line in self.g.warnings:
            warn(line)
        self.g.warnings.clear()
        if _KEPT is not None:
            _KEPT[:] = [snap]  # the last one: a command that loads again frees the one before
        return snap

    def require_live(self, what: str):
        """Mutating commands refuse to act on a snapshot."""
        if self.offline:
            raise UsageError(f"{what} needs a live cluster: --snapshot files can only be analysed "
                               "(add --dry-run to see the plan)")

    def check_flags(self, **conflicts):
        """``check_flags(a=(x, "--x"), ...)``: error when two given flags contradict."""
        given = [name for name, (value, _) in conflicts.items() if value]
        if len(given) > 1:
            names = " and ".join(conflicts[n][1] for n in given)
            raise UsageError(f"{names} cannot be used together")


YAML_HINT_BYTES = 4 << 20  # a YAML dump this large takes seconds to load; the same dump as JSON a fraction


def yaml_hint(path) -> str:
    """One line for a large YAML dump file: JSON loads many times faster ("" otherwise)."""
    import os

    try:
        if path == "-" or not os.path.isfile(path) or os.path.getsize(path) < YAML_HINT_BYTES:
            return ""
        with open(path, "rb") as f:
            start = f.read(4096).lstrip()
    except OSError:
        return ""
    if start[:1] in (b"{", b"["):
        return ""
    return (f"{path} is a large YAML dump ({os.path.getsize(path) >> 20} MiB): a JSON dump loads about 20 times "
            "faster (kubectl get ... -A -o json > cluster.json)")

