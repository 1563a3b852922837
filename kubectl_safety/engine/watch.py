"""LIST once, then WATCH from its resourceVersion: a current view of a few objects at the cost of
their changes, instead of re-listing them on a timer.

Every watch stream has a deadline (the server ends it after ``timeout_seconds``; the socket read
timeout is a little longer) and is then resumed from the last version seen; a version the server
has compacted away (410 Gone) is answered by one fresh LIST. Bookmarks keep the version current.
Waiters block on one ``threading.Condition`` shared by a group of watches, woken on every change.
"""

import threading
import time

from kubectl_safety.cluster import threads
from kubectl_safety.cluster.client import watch_expired, watch_forbidden
from kubectl_safety.errors import SafetyError

WATCH_SECONDS = 240  # server-side deadline of one watch stream
RETRY_SECONDS = (0.5, 1, 2, 5, 10)  # back-off while the API server cannot be reached


class WatchForbidden(SafetyError):
    """The WATCH is forbidden (RBAC allows the LIST only): not retried."""


def newer_or_same(version, than) -> bool:
    """The resourceVersion ``version`` is ``than`` or later (two versions of one resource): well-formed
    versions (positive integers) are ordered as apimachinery's ``CompareResourceVersion`` orders them;
    others are only told equal."""
    version, than = str(version or ""), str(than or "")
    if not all(v.isdigit() and v.isascii() and v[0] != "0" for v in (version, than)):
        return bool(version) and version == than
    return (len(version), version) >= (len(than), than)


def key_of(obj) -> str:
    meta = obj.get("metadata") or {}
    return f"{meta.get('namespace') or ''}/{meta.get('name') or ''}"


class Watch:
    """One resource (optionally a namespace, field and label selector) kept current in ``objects``."""

    def __init__(self, connection, resource, namespace=None, *, field_selector=None, label_selector=None,
                 condition=None, timeout_seconds=WATCH_SECONDS):
        self.connection = connection
        self.resource, self.namespace = resource, namespace
        self.field_selector, self.label_selector = field_selector, label_selector
        self.condition = condition or threading.Condition()
        self.timeout_seconds = timeout_seconds
        self.objects = {}  # "namespace/name" -> raw object
        self.version = None  # resourceVersion of the last LIST or event
        self.lists = self.watches = 0  # requests made (LISTs, WATCH streams)
        self.changes = 0
        self.error = None  # the last error while reconnecting (None when connected)
        self.forbidden = False  # the WATCH itself is forbidden: not followed, current only by ``resync``
        self._stopped = threading.Event()
        self._stream = None
        self._thread = None

    def __repr__(self):
        return f"Watch({self.resource}, {self.namespace or ''}, {self.field_selector or self.label_selector or ''})"

    # -- life cycle ------------------------------------------------------------------------
    def start(self) -> "Watch":
        """The first LIST (raises as a LIST does), then the WATCH in a daemon thread."""
        self._relist()
        self._thread = threads.start(self._run, f"watch-{self.resource}")
        return self

    def stop(self):
        self._stopped.set()
        stream = self._stream
        if stream is not None:
            try:
                stream.close()
            except Exception:
                pass

    def resync(self):
        """One fresh LIST (a watch that is not current); raises as a LIST does."""
        self._relist()
        if not self.forbidden:
            self._failed(None)

    def _relist(self):
        items, version = self.connection.list_versioned(self.resource, self.namespace,
                                                        field_selector=self.field_selector,
                                                        label_selector=self.label_selector)
        with self.condition:
            self.objects = {key_of(o): o for o in items}
            self.version = version
            self.lists += 1  # a stream opened before this LIST is older than it: ended
            self.changes += 1
            self.condition.notify_all()

    def _run(self):
        failures = 0
        while not self._stopped.is_set():
            try:
                expired = self._follow()
                failures = 0
                if expired:
                    self._relist()
            except WatchForbidden as e:  # RBAC allows the LIST only: readers re-list (``forbidden``)
                self.forbidden = True
                self._failed(str(e))
                return
            except SafetyError as e:  # unreachable: back off, then relist (changes may be lost)
                self._failed(str(e))
                if self._stopped.wait(RETRY_SECONDS[min(failures, len(RETRY_SECONDS) - 1)]):
                    return
                failures += 1
                try:
                    self._relist()
                    self._failed(None)
                except SafetyError as again:
                    self._failed(str(again))

    def _failed(self, error):
        """Record (or clear) why the watch is not current; waiters are woken to say so."""
        with self.condition:
            if error != self.error:
                self.error = error
                self.changes += 1
                self.condition.notify_all()

    def _follow(self) -> bool:
        """One WATCH stream until its deadline; True when the version expired (410: relist)."""
        self.watches += 1
        listed = self.lists
        events = self.connection.watch(self.resource, self.namespace, resource_version=self.version,
                                       field_selector=self.field_selector, label_selector=self.label_selector,
                                       timeout_seconds=self.timeout_seconds, on_stream=self._opened)
        for event in events:
            if self._stopped.is_set():
                events.close()
                return False
            kind, obj = event.get("type"), event.get("object") or {}
            if kind == "ERROR":
                if watch_expired(obj):
                    return True
                error = WatchForbidden if watch_forbidden(obj) else SafetyError
                raise error(f"watch {self.resource}: {obj.get('message') or obj.get('code')}")
            version = (obj.get("metadata") or {}).get("resourceVersion")
            with self.condition:
                if self.lists != listed:  # re-listed meanwhile: follow from the LIST's version
                    events.close()
                    return False
                if kind in ("ADDED", "MODIFIED"):
                    self.objects[key_of(obj)] = obj
                elif kind == "DELETED":
                    self.objects.pop(key_of(obj), None)
                if version:
                    self.version = version
                if kind != "BOOKMARK":
                    self.changes += 1
                    self.condition.notify_all()
        return False

    def _opened(self, stream):
        self._stream = stream
        if self._stopped.is_set():
            stream.close()

    # -- reading ---------------------------------------------------------------------------
    def items(self) -> list:
        with self.condition:
            return list(self.objects.values())

    def get(self, key):
        with self.condition:
            return self.objects.get(key)


class WatchGroup:
    """Watches sharing one condition: ``wait_for`` wakes on a change to any of them."""

    def __init__(self, connection, timeout_seconds=WATCH_SECONDS):
        self.connection = connection
        self.condition = threading.Condition()
        self.timeout_seconds = timeout_seconds
        self.watches = []

    def watch(self, resource, namespace=None, **selectors) -> Watch:
        """The group's watch of these objects, started on first use (one LIST, then WATCH)."""
        for w in self.watches:
            if (w.resource, w.namespace, w.field_selector, w.label_selector) == (
                    resource, namespace, selectors.get("field_selector"), selectors.get("label_selector")):
                return w
        w = Watch(self.connection, resource, namespace, condition=self.condition,
                  timeout_seconds=self.timeout_seconds, **selectors).start()
        self.watches.append(w)  # only once its LIST succeeded: a failed one is tried again on next use
        return w

    def wait_for(self, predicate, deadline=None, interrupted=None, wake=None, clock=time.monotonic):
        """Block until ``predicate()`` is true (True), or the monotonic ``deadline`` passes, or
        ``interrupted`` is set (False). ``wake``: seconds after which to return anyway (a retry due)."""
        until = deadline
        if wake is not None:
            until = clock() + wake if until is None else min(until, clock() + wake)
        with self.condition:
            while True:
                if predicate():
                    return True
                if interrupted is not None and interrupted.is_set():
                    return False
                left = None if until is None else until - clock()
                if left is not None and left <= 0:
                    return False
                self.condition.wait(1.0 if left is None else min(left, 1.0))

    def errors(self) -> list:
        """Why watches are not current now (the API server cannot be reached), one line each."""
        return list(dict.fromkeys(w.error for w in self.watches if w.error))

    def changes(self) -> int:
        """A counter that moves on every change seen by any watch of the group."""
        return sum(w.changes for w in self.watches)

    def requests(self) -> dict:
        return {"lists": sum(w.lists for w in self.watches), "watches": sum(w.watches for w in self.watches)}

    def stop(self):
        for w in self.watches:
            w.stop()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()
