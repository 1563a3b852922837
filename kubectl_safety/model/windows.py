"""Maintenance windows: ``"Mon-Fri 02:00-05:00 Europe/Berlin"`` parsed, and whether an instant is inside
one, when that window closes and when the next one opens. Pure: every instant is given (an aware
``datetime``); answers are in UTC.

A window is days (``Mon``, ``Mon-Fri``, ``Sat,Sun``, ``Fri-Mon``, ``daily``), a wall-clock span
``HH:MM-HH:MM`` (an end at or before the start runs past midnight into the next day; ``24:00`` is the
end of the day) and an IANA zone (default UTC). The days name the day the window opens. The span is
wall-clock time in the zone, so across a DST change the window keeps its wall-clock hours and its
length in real time changes: a wall-clock time the spring change skips is read with the offset
before it, a time the autumn change repeats is its first occurrence (``fold=0``).
"""

import re
from datetime import date, datetime, time, timedelta, timezone
from typing import Optional, Tuple

from kubectl_safety.record import record

DAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
NAMES = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_SPAN = re.compile(r"^(\d{1,2}):(\d{2})-(\d{1,2}):(\d{2})$")
_HORIZON_DAYS = 8  # every window opens within a week


@record
class Window:
    text: str
    days: Tuple[int, ...]  # weekday numbers (Monday 0) the window opens on
    start_minute: int  # minutes after local midnight
    end_minute: int  # minutes after local midnight of the opening day (past 1440: the next day)
    zone: str


def _day(name, text) -> int:
    key = name.lower()
    for i, day in enumerate(DAYS):
        if key == day or key == NAMES[i]:
            return i
    raise ValueError(f"{text!r}: {name!r} is not a day (Mon, Tue, ... Sun)")


def _days(spec, text) -> Tuple[int, ...]:
    if spec.lower() in ("daily", "*"):
        return tuple(range(7))
    out = []
    for part in spec.split(","):
        first, dash, last = part.partition("-")
        a = _day(first, text)
        b = _day(last, text) if dash else a
        out += [(a + i) % 7 for i in range((b - a) % 7 + 1)]
    return tuple(sorted(set(out)))


def _zone(name, text):
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(f"{text!r}: {name!r} is not a time zone (an IANA name such as Europe/Berlin)") from None


def parse_window(text: str) -> Window:
    """``"DAYS HH:MM-HH:MM [ZONE]"``; ValueError with one line saying what is wrong."""
    parts = text.split()
    if len(parts) not in (2, 3):
        raise ValueError(f"{text!r}: a window is DAYS HH:MM-HH:MM [ZONE], e.g. \"Mon-Fri 02:00-05:00 Europe/Berlin\"")
    m = _SPAN.match(parts[1])
    if not m:
        raise ValueError(f"{text!r}: {parts[1]!r} is not a span HH:MM-HH:MM")
    h1, m1, h2, m2 = (int(g) for g in m.groups())
    if h1 > 23 or m1 > 59 or m2 > 59 or h2 > 24 or (h2 == 24 and m2):
        raise ValueError(f"{text!r}: {parts[1]!r} is not a span of times of day")
    zone = parts[2] if len(parts) == 3 else "UTC"
    _zone(zone, text)
    start, end = h1 * 60 + m1, h2 * 60 + m2
    if end <= start:
        end += 24 * 60
    return Window(text, _days(parts[0], text), start, end, zone)


def _at(day: date, minute: int, zone) -> datetime:
    """Local wall-clock ``minute`` after ``day``'s midnight (past 1440: a later day), in UTC."""
    day = day + timedelta(days=minute // 1440)
    minute %= 1440
    return datetime.combine(day, time(minute // 60, minute % 60), tzinfo=zone).astimezone(timezone.utc)


def occurrences(window: Window, now: datetime):
    """The window's (opens, closes) in UTC, from the one that may contain ``now`` onwards, for a week."""
    zone = _zone(window.zone, window.text)
    today = now.astimezone(zone).date()
    for offset in range(-2, _HORIZON_DAYS):
        day = today + timedelta(days=offset)
        if day.weekday() in window.days:
            opens, closes = _at(day, window.start_minute, zone), _at(day, window.end_minute, zone)
            if closes > now and closes > opens:
                yield opens, closes


def closes_at(windows, now: datetime) -> Optional[datetime]:
    """When the windows open at ``now`` close (one opening when another closes, or overlapping,
    counts as one span); None when ``now`` is outside every window."""
    spans = sorted(s for w in windows for s in occurrences(w, now))
    end = None
    for opens, closes in spans:
        if opens <= (end or now) and closes > (end or now):
            end = closes
    return end


def next_opening(windows, now: datetime) -> Optional[datetime]:
    """When the first window after ``now`` opens (``now`` itself when one is open); None: no windows."""
    if closes_at(windows, now) is not None:
        return now.astimezone(timezone.utc)
    return min((opens for w in windows for opens, _ in occurrences(w, now)), default=None)


def next_fitting(windows, now: datetime, seconds: float) -> Optional[datetime]:
    """The first instant from ``now`` at which a window is open for at least ``seconds`` more; None when
    no window in the coming week is that long."""
    candidates = [now.astimezone(timezone.utc)] + sorted(o for w in windows for o, _ in occurrences(w, now) if o > now)
    for at in candidates:
        end = closes_at(windows, at)
        if end is not None and (end - at).total_seconds() >= seconds:
            return at
    return None
