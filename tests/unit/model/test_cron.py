"""Cron schedules as robfig/cron v3.0.1's standard parser reads them (Karpenter's budget schedules)."""

from datetime import datetime, timezone

import pytest

from kubectl_safety.model.cron import CronError, parse_cron


def at(text):
    return datetime.fromisoformat(text).replace(tzinfo=timezone.utc)


# (schedule, instant, hit): 2026-11-22 is a Sunday, 2026-11-23 a Monday.
MATCHES = [
    ("0 9 * * *", "2026-11-22T09:00", True),
    ("0 9 * * *", "2026-11-22T09:01", False),
    ("*/15 * * * *", "2026-11-22T09:45", True),
    ("*/15 * * * *", "2026-11-22T09:44", False),
    ("5/20 * * * *", "2026-11-22T09:45", True),  # N/step: N to the field's max
    ("10-30/10 * * * *", "2026-11-22T09:30", True),
    ("10-30/10 * * * *", "2026-11-22T09:40", False),
    ("0 9 * * mon-fri", "2026-11-23T09:00", True),
    ("0 9 * * mon-fri", "2026-11-22T09:00", False),
    ("0 9 * nov sun", "2026-11-22T09:00", True),
    ("0 9 1 * mon", "2026-11-23T09:00", True),  # day of month and day of week both restricted: either matches
    ("0 9 1 * mon", "2026-12-01T09:00", True),
    ("0 9 1 * mon", "2026-11-24T09:00", False),
    ("0 9 1 * *", "2026-11-23T09:00", False),  # day of week a star: both must match
    ("0 9 ? * mon", "2026-11-23T09:00", True),
    ("0 9 */1 * mon", "2026-11-24T09:00", False),  # a step of 1 keeps the star
    ("0 9 1,15 * *", "2026-11-15T09:00", True),
    ("@daily", "2026-11-22T00:00", True),
    ("@hourly", "2026-11-22T07:00", True),
    ("@weekly", "2026-11-22T00:00", True),
    ("@weekly", "2026-11-23T00:00", False),
    ("@monthly", "2026-12-01T00:00", True),
    ("@yearly", "2027-01-01T00:00", True),
]


@pytest.mark.parametrize("schedule, instant, hit", MATCHES, ids=[f"{s} at {t}" for s, t, _ in MATCHES])
def test_a_schedule_hits_the_minutes_robfig_cron_does(schedule, instant, hit):
    assert parse_cron(schedule).matches(at(instant)) is hit


REFUSED = ["", "0 9 * *", "0 9 * * * *", "60 * * * *", "0 24 * * *", "0 9 0 * *", "0 9 * 13 *", "0 9 * * 7",
           "5/ * * * *", "*/ * * * *", "*/0 * * * *", "30-10 * * * *", "1-2-3 * * * *", "² * * * *",
           "x * * * *", "0 9 * foo *"]


@pytest.mark.parametrize("schedule", REFUSED)
def test_a_schedule_robfig_cron_refuses_is_refused(schedule):
    with pytest.raises(CronError):
        parse_cron(schedule)


@pytest.mark.parametrize("after, upto, last", [
    ("2026-11-22T08:00", "2026-11-22T10:00", "2026-11-22T09:00"),
    ("2026-11-22T09:00", "2026-11-22T10:00", None),  # (after, upto]: a hit at ``after`` is not in it
    ("2026-11-22T08:00", "2026-11-22T09:00", "2026-11-22T09:00"),
    ("2026-11-22T07:00", "2026-11-22T08:59", None),
])
def test_the_last_hit_is_in_the_half_open_window(after, upto, last):
    got = parse_cron("0 9 * * *").last_hit(at(after), at(upto))
    assert got == (at(last) if last else None)
