"""Standard cron schedules, as github.com/robfig/cron/v3 ``ParseStandard`` reads them (v3.0.1 parser.go
``getRange``, ``parseDescriptor``; spec.go ``dayMatches``), in UTC: Karpenter's disruption budget schedules.

Five fields (minute hour day-of-month month day-of-week: ``*``, ``?``, ``a``, ``a-b``, ``*/n``, ``a/n``,
``a-b/n``, lists; month and weekday names) or a descriptor (``@yearly`` ... ``@hourly``). When day of month
or day of week is ``*`` or ``?`` (without a step over 1) both must match; else either one does.
"""

from datetime import datetime, timedelta
from typing import FrozenSet, Optional

from kubectl_safety.record import record

MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
WEEKDAYS = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")
BOUNDS = ((0, 59, {}), (0, 23, {}), (1, 31, {}), (1, 12, {n: i + 1 for i, n in enumerate(MONTHS)}),
          (0, 6, {n: i for i, n in enumerate(WEEKDAYS)}))
DESCRIPTORS = {"@yearly": "0 0 1 1 *", "@annually": "0 0 1 1 *", "@monthly": "0 0 1 * *",
               "@weekly": "0 0 * * 0", "@daily": "0 0 * * *", "@midnight": "0 0 * * *", "@hourly": "0 * * * *"}


class CronError(ValueError):
    """Not a schedule robfig/cron's standard parser takes."""


@record
class Schedule:
    minutes: FrozenSet[int]
    hours: FrozenSet[int]
    days: FrozenSet[int]
    months: FrozenSet[int]
    weekdays: FrozenSet[int]  # Sunday 0
    both_days: bool  # day of month or day of week is a star: both must match, else either

    def matches(self, t: datetime) -> bool:
        """``t``'s minute is a hit (``t`` in UTC)."""
        if t.minute not in self.minutes or t.hour not in self.hours or t.month not in self.months:
            return False
        day, weekday = t.day in self.days, (t.weekday() + 1) % 7 in self.weekdays
        return day and weekday if self.both_days else day or weekday

    def last_hit(self, after: datetime, upto: datetime) -> Optional[datetime]:
        """The latest hit in (``after``, ``upto``], or None (both in UTC)."""
        t = upto.replace(second=0, microsecond=0)
        while t > after:
            if self.matches(t):
                return t
            t -= timedelta(minutes=1)
        return None


def _number(text, names, field) -> int:
    if text.lower() in names:
        return names[text.lower()]
    if not (text.isascii() and text.isdigit()):
        raise CronError(f"{field!r}: {text!r} is not a number")
    return int(text)


def _range(expr, low, high, names):
    """(values, star) of one comma-separated part (robfig's getRange)."""
    span, slash, step_text = expr.partition("/")
    bounds = span.split("-")
    star = bounds[0] in ("*", "?")
    if star:
        start, end = low, high
    elif len(bounds) > 2:
        raise CronError(f"too many hyphens: {expr}")
    else:
        start = _number(bounds[0], names, expr)
        end = _number(bounds[1], names, expr) if len(bounds) == 2 else start
    step = 1
    if slash:  # robfig's mustParseInt: an empty step is an error
        step = _number(step_text, {}, expr)
        if len(bounds) == 1:
            end = high  # N/step: N-max/step
        if step > 1:
            star = False
    if start < low or end > high or start > end or step == 0:
        raise CronError(f"{expr}: out of range {low}-{high}")
    return set(range(start, end + 1, step)), star


def parse_cron(text) -> Schedule:
    """A standard cron schedule (5 fields or a descriptor)."""
    text = DESCRIPTORS.get(str(text).strip(), str(text))
    fields = text.split()
    if len(fields) != 5:
        raise CronError(f"{text!r}: expected 5 fields (minute hour day-of-month month day-of-week)")
    values, stars = [], []
    for field, (low, high, names) in zip(fields, BOUNDS):
        got, star = set(), False
        for part in field.split(","):
            part_values, part_star = _range(part, low, high, names)
            got |= part_values
            star = star or part_star
        values.append(frozenset(got))
        stars.append(star)
    return Schedule(*values, both_days=stars[2] or stars[4])
