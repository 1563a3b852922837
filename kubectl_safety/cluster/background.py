"""Reads made two at a time on threads of their own: while one LIST's pages are decoded, the
API server answers the next LIST. Daemon threads: an interrupted command never waits for them."""

import threading

from kubectl_safety.cluster import threads


def in_order(fn, items, lanes: int = 2):
    """``fn(item)`` for every item, ``lanes`` at a time, yielded in the items' order. The first
    error is raised where its item's value would have been, and no further item is started."""
    items = list(items)
    out, done = [None] * len(items), [threading.Event() for _ in items]
    lock, queue, failed = threading.Lock(), iter(range(len(items))), []

    def work():
        while not failed:
            with lock:
                i = next(queue, None)
            if i is None:
                return
            try:
                out[i] = (True, fn(items[i]))
            except BaseException as e:  # noqa: BLE001 - raised in order by the reader below
                out[i] = (False, e)
                failed.append(i)
            done[i].set()

    for _ in range(min(lanes, len(items))):
        threads.start(work, "kubectl-safety-read")
    for i, finished in enumerate(done):  # every earlier item succeeded, so item i was started
        finished.wait()
        ok, value = out[i]
        if not ok:
            raise value
        yield value
