"""Reads two at a time: answers in the callers' order, errors where they belong."""

import threading
import time

import pytest

from kubectl_safety.cluster.background import in_order


DELAYS = {  # name: seconds each item takes; the answers come in the items' order whatever they are
    "first slow": [0.2, 0, 0, 0],
    "last slow": [0, 0, 0, 0.2],
    "alike": [0.01] * 6,
    "one item": [0],
    "none": [],
}


@pytest.mark.parametrize("name", DELAYS)
def test_answers_come_in_the_items_order(name):
    delays = DELAYS[name]

    def slow(i):
        time.sleep(delays[i])
        return i * 10

    assert list(in_order(slow, range(len(delays)))) == [i * 10 for i in range(len(delays))]


def test_two_items_run_at_once_and_no_more():
    running, peak, lock = [0], [0], threading.Lock()

    def item(_):
        with lock:
            running[0] += 1
            peak[0] = max(peak[0], running[0])
        time.sleep(0.05)
        with lock:
            running[0] -= 1

    list(in_order(item, range(6), lanes=2))
    assert peak[0] == 2


def test_an_error_is_raised_at_its_item_and_stops_new_items():
    started = []

    def item(i):
        started.append(i)
        if i == 1:
            raise RuntimeError("item 1")
        time.sleep(0.05)
        return i

    answers = in_order(item, range(8), lanes=2)
    assert next(answers) == 0
    with pytest.raises(RuntimeError, match="item 1"):
        next(answers)
    time.sleep(0.2)
    assert len(started) <= 4  # the lanes stop taking items once one failed
