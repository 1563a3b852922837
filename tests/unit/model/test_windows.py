"""Maintenance windows: the parser, inside / closes / next opening, across DST changes."""

from datetime import datetime, timezone

import pytest

from kubectl_safety.model.windows import closes_at, next_fitting, next_opening, parse_window

BERLIN = "Mon-Fri 02:00-05:00 Europe/Berlin"


def utc(text):
    return datetime.fromisoformat(text).replace(tzinfo=timezone.utc)


@pytest.mark.parametrize("text, days, start, end, zone", [
    (BERLIN, (0, 1, 2, 3, 4), 120, 300, "Europe/Berlin"),
    ("Sat,Sun 22:00-02:00", (5, 6), 1320, 1560, "UTC"),  # past midnight: ends the next day
    ("Fri-Mon 00:00-24:00 America/New_York", (0, 4, 5, 6), 0, 1440, "America/New_York"),
    ("daily 03:30-04:00", tuple(range(7)), 210, 240, "UTC"),
    ("sunday 1:00-2:00", (6,), 60, 120, "UTC"),
])
def test_windows_are_parsed(text, days, start, end, zone):
    w = parse_window(text)
    assert (w.days, w.start_minute, w.end_minute, w.zone) == (days, start, end, zone)


@pytest.mark.parametrize("text, says", [
    ("Mon-Fri", "a window is DAYS"),
    ("Mon-Fir 02:00-05:00", "'Fir' is not a day"),
    ("Mon 2-5", "is not a span"),
    ("Mon 25:00-05:00", "not a span of times of day"),
    ("Mon 02:00-24:30", "not a span of times of day"),
    ("Mon 02:00-05:00 Mars/Olympus", "is not a time zone"),
    ("Mon 02:00-05:00 ../../etc/passwd", "is not a time zone"),
])
def test_bad_windows_say_what_is_wrong(text, says):
    with pytest.raises(ValueError, match=says.replace("(", r"\(")):
        parse_window(text)


# Berlin: CET (+01) until 2026-03-29 01:00 UTC, CEST (+02) until 2026-10-25 01:00 UTC.
@pytest.mark.parametrize("now, closes, opens", [
    ("2026-03-27T01:30", "2026-03-27T04:00", "2026-03-27T01:30"),  # Friday, winter: 01:00-04:00 UTC
    ("2026-03-27T04:00", None, "2026-03-30T00:00"),  # closed at its end; Monday after the change: 00:00 UTC
    ("2026-03-30T02:59", "2026-03-30T03:00", "2026-03-30T02:59"),  # summer: 00:00-03:00 UTC
    ("2026-03-30T03:30", None, "2026-03-31T00:00"),
    ("2026-10-23T23:00", None, "2026-10-26T01:00"),  # Friday night before the autumn change: Monday in winter time
    ("2026-10-26T03:59", "2026-10-26T04:00", "2026-10-26T03:59"),
])
def test_inside_closes_and_next_opening_across_dst_changes(now, closes, opens):
    windows = [parse_window(BERLIN)]
    assert closes_at(windows, utc(now)) == (utc(closes) if closes else None)
    assert next_opening(windows, utc(now)) == utc(opens)


def test_a_window_on_the_day_of_the_change_keeps_its_wall_clock_hours():
    spring = [parse_window("Sun 01:00-04:00 Europe/Berlin")]  # 2026-03-29: 02:00 -> 03:00, two real hours
    assert closes_at(spring, utc("2026-03-29T00:00")) == utc("2026-03-29T02:00")
    assert next_fitting(spring, utc("2026-03-28T12:00"), 2.5 * 3600) is None  # three wall hours, two real
    autumn = [parse_window("Sun 01:00-04:00 Europe/Berlin")]  # 2026-10-25: 03:00 -> 02:00, four real hours
    assert closes_at(autumn, utc("2026-10-24T23:00")) == utc("2026-10-25T03:00")
    assert next_fitting(autumn, utc("2026-10-24T12:00"), 3.5 * 3600) == utc("2026-10-24T23:00")


def test_adjacent_windows_are_one_span_and_a_batch_waits_for_one_long_enough():
    windows = [parse_window("Mon 22:00-23:00"), parse_window("Mon 23:00-01:00"), parse_window("Wed 00:00-06:00")]
    monday = utc("2026-11-30T22:30")  # a Monday
    assert closes_at(windows, monday) == utc("2026-12-01T01:00")
    assert next_fitting(windows, monday, 2.5 * 3600) == monday  # 2.5 h left in the joined span
    assert next_fitting(windows, monday, 3 * 3600) == utc("2026-12-02T00:00")
    assert next_fitting(windows, monday, 7 * 3600) is None
