"""LIST once + WATCH: changes arrive without re-listing; an expired version (410) relists once."""

import copy
import threading
import time

from kubectl_safety.engine.watch import WatchGroup
from tests.unit.fake_api import FakeApi, pod


def test_changes_arrive_by_the_watch_without_relisting():
    api = FakeApi([pod("a", "n1")])
    with WatchGroup(api) as group:
        w = group.watch("pods", field_selector="spec.nodeName=n1")
        api.put("pods", pod("b", "n1"))
        api.put("pods", pod("elsewhere", "n2"))
        assert group.wait_for(lambda: w.get("ns/b") is not None, time.monotonic() + 5)
        api.delete("pods", api.store["pods"]["ns/a"])
        assert group.wait_for(lambda: w.get("ns/a") is None, time.monotonic() + 5)
        assert w.get("ns/elsewhere") is None and w.lists == 1


def test_an_expired_version_relists_once_and_carries_on():
    api = FakeApi([pod("a", "n1")], expire_first_watch=True)
    with WatchGroup(api) as group:
        w = group.watch("pods")
        assert group.wait_for(lambda: w.lists == 2, time.monotonic() + 5)
        api.put("pods", pod("b", "n1"))
        assert group.wait_for(lambda: w.get("ns/b") is not None, time.monotonic() + 5)


class StaleStream(FakeApi):
    """Its first WATCH stream stays silent until the watch is re-listed, then sends an event older
    than that LIST (a stream opened before it) and stays open."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.relisted, self.stale = threading.Event(), None
        self.streams = self.lists = 0

    def list_versioned(self, *args, **kwargs):
        listed = super().list_versioned(*args, **kwargs)
        self.lists += 1
        if self.lists == 2:
            self.relisted.set()
        return listed

    def watch(self, *args, **kwargs):
        self.streams += 1
        if self.streams > 1:
            yield from super().watch(*args, **kwargs)
            return
        self.relisted.wait(5)
        yield {"type": "MODIFIED", "object": self.stale}
        time.sleep(3)  # open: what it sent stays unless the watch ends it


def test_a_stream_older_than_a_relist_does_not_overwrite_it():
    api = StaleStream([pod("a", "n1", labels={"v": "1"})])
    api.stale = copy.deepcopy(api.store["pods"]["ns/a"])
    with WatchGroup(api) as group:
        w = group.watch("pods")
        api.put("pods", pod("a", "n1", labels={"v": "2"}))
        w.resync()
        group.wait_for(lambda: api.streams >= 2, time.monotonic() + 2)  # the old stream ended
        assert w.get("ns/a")["metadata"]["labels"] == {"v": "2"}
        api.put("pods", pod("b", "n1"))  # followed from the LIST's version
        assert group.wait_for(lambda: w.get("ns/b") is not None, time.monotonic() + 5)


def test_wait_for_gives_up_at_its_deadline():
    api = FakeApi()
    with WatchGroup(api) as group:
        group.watch("pods")
        started = time.monotonic()
        assert group.wait_for(lambda: False, started + 0.3) is False
        assert time.monotonic() - started < 2


def test_selector_query_spells_a_label_selector_as_the_api_takes_it():
    from kubectl_safety.model.selectors import selector_query

    assert selector_query({"matchLabels": {"b": "2", "a": "1"},
                            "matchExpressions": [{"key": "t", "operator": "In", "values": ["x", "y"]},
                                                 {"key": "u", "operator": "DoesNotExist"}]}) == "a=1,b=2,t in (x,y),!u"
