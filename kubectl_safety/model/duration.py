"""Go durations (``1h30m``, ``5m30s``, ``500ms``) as kubectl's flags take them, and kubectl's humanized form."""

import re

_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
_PART = re.compile(r"(\d+\.?\d*|\.\d+)(ns|us|µs|μs|ms|s|m|h)")


MAX_SECONDS = (2 ** 63 - 1) / 1e9  # Go's time.Duration: int64 nanoseconds (about 292 years)


class DurationError(ValueError):
    """Not a Go duration (the CLI names the flag)."""


BARE_SECONDS = ("--request-timeout",)  # strings kubectl parses itself (clientcmd.ParseTimeout): ``30`` is 30 s


def flag_seconds(text, flag) -> float:
    """Seconds of the duration given to ``flag``, as kubectl reads its duration flags: a Go duration, ``0``
    alone needs no unit, never negative; a plain integer is seconds only for ``BARE_SECONDS`` flags.
    A usage error names the flag."""
    from kubectl_safety.errors import UsageError

    try:
        seconds = parse_duration(text, bare_seconds=flag in BARE_SECONDS)
    except DurationError as e:
        raise UsageError(f"invalid {flag} {text!r}: {e}") from None
    if seconds < 0:
        raise UsageError(f"invalid {flag} {text!r}: must not be negative")
    return seconds


def parse_duration(text, bare_seconds=False) -> float:
    """Seconds of a Go duration such as ``1h30m`` or ``-1.5h``; ``0`` alone needs no unit.

    ``bare_seconds`` accepts a plain integer as seconds (kubectl's ``--request-timeout``). More
    than Go's ``time.Duration`` holds is out of range, as Go's ``ParseDuration`` says.
    """
    s = str(text).strip()
    if bare_seconds and re.fullmatch(r"\d+", s):
        return _in_range(float(s))
    sign = -1.0 if s.startswith("-") else 1.0
    body = s.lstrip("+-")
    if body == "0":
        return 0.0
    total, pos = 0.0, 0
    for m in _PART.finditer(body):
        if m.start() != pos:
            break
        total += float(m.group(1)) * _UNITS[m.group(2)]
        pos = m.end()
    if not body or pos != len(body):
        hint = "missing unit" if re.fullmatch(r"\d+\.?\d*", body) else "not a duration"
        raise DurationError(f"{hint}: use a Go duration such as 30s, 5m30s, 1h30m or 500ms")
    return sign * _in_range(total)


def _in_range(seconds: float) -> float:
    if not seconds <= MAX_SECONDS:
        raise DurationError("out of range: at most 2562047h47m16s")
    return seconds


# (below this many seconds, big unit, its name, small unit or None, its name): kubectl's HumanDuration tiers
_TIERS = [(600, 60, "m", 1, "s"), (10800, 60, "m", None, ""), (28800, 3600, "h", 60, "m"),
          (172800, 3600, "h", None, ""), (691200, 86400, "d", 3600, "h"), (63072000, 86400, "d", None, ""),
          (252288000, 31536000, "y", 86400, "d"), (float("inf"), 31536000, "y", None, "")]


def human_duration(seconds) -> str:
    """kubectl's ``HumanDuration``: ``45s``, ``5m30s``, ``90m``, ``5h30m``, ``36h``, ``3d4h``, ``20d``."""
    if seconds is None:
        return "-"
    s = int(round(seconds))
    if s < 0:
        return "<invalid>"
    if s < 120:
        return f"{s}s"
    for limit, big, big_name, small, small_name in _TIERS:
        if s < limit:
            rest = (s % big) // small if small else 0
            return f"{s // big}{big_name}" + (f"{rest}{small_name}" if rest else "")
    return f"{s}s"
