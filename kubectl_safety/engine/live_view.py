"""A cluster snapshot kept current by LIST once + WATCH, for commands that plan more than once.

A drain plans, cordons, then plans again; a rollout plans again before every batch. Re-reading
the cluster for each plan made their requests and bytes grow with the cluster's size and with
the number of batches. Here what the plans share (the PDBs and DaemonSets of the cluster, or the
whole cluster for a capacity-aware plan) is listed once per command and then followed by watches
(``engine/watch.py``: resumed from the last resourceVersion, re-listed when it expired); what one
batch needs (its nodes and their pods) is watched in that batch's group, which the drainer and
the health gate share. A snapshot is then built from what the watches hold, without a request.

Current, not merely recent: a watch that lost the API server is re-listed before a plan (or the
plan fails as a LIST would), and nodes just cordoned are waited for until their watch shows the
cordon (our write's resourceVersion has reached the watch), so the plan sees the pods there once
cordoned.
"""

import time

from kubectl_safety.cluster.live import RESOURCES
from kubectl_safety.cluster.source import complete_pod_namespaces, fetch, unique, unreadable
from kubectl_safety.engine.watch import WatchGroup
from kubectl_safety.errors import SafetyError
from kubectl_safety.model.parse import build_snapshot

SETTLE_SECONDS = 10.0  # bound on waiting for a cordon to reach the watches (then: re-list those nodes)


class LiveView:
    """The shared ``queries`` (``cluster/source.Query``) as watches in ``group``; ``snapshot`` adds
    a batch's own queries, watched in the batch's group (or read once, without a group)."""

    def __init__(self, connection, queries, group=None, warnings=None):
        self.connection = connection
        self.group = group or WatchGroup(connection)
        self.queries = list(queries)
        self.warnings = warnings
        self.unread = {}  # resource -> why it could not be read (``cluster/source.py``)
        self.shared = self._watch(self.group, self.queries)

    def stop(self):
        self.group.stop()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()

    def _watch(self, group, queries) -> list:
        watches = []
        for q in queries:
            selector = f"metadata.name={q.name}" if q.name else q.field_selector
            try:
                watches.append(group.watch(q.resource, q.namespace, field_selector=selector,
                                           label_selector=q.label_selector))
            except SafetyError as e:
                warning = unreadable(q, e)  # as a read once (cluster/source.py)
                if warning is None:
                    raise
                self.unread[q.resource] = warning.reason
                if self.warnings is not None:
                    self.warnings.append(warning)
        return watches

    def snapshot(self, now, queries=(), group=None, cordoned=()):
        """A snapshot of the shared watches plus ``queries``: watched in ``group`` when given (a
        batch's), else read once. ``cordoned``: nodes whose cordon the plan must see."""
        watches = list(self.shared)
        pairs = []
        if group is not None:
            watches += self._watch(group, queries)
        else:
            pairs = list(fetch(self.connection, queries, warnings=self.warnings, unread=self.unread))
        self._settle(watches, cordoned)
        for w in watches:
            if w.error:  # not current (or not watchable: RBAC): read it again (raises as a LIST would)
                w.resync()
            kind, api_version = RESOURCES[w.resource][2], RESOURCES[w.resource][0].split("/", 2)[-1]
            for obj in w.items():
                obj.setdefault("kind", kind)
                obj.setdefault("apiVersion", api_version)
                pairs.append((f"{w.resource} from the API server (watched)", obj))
        return build_snapshot(unique(pairs), taken_at=now, source=f"cluster {self.connection.host}",
                              complete_pod_namespaces=complete_pod_namespaces(self.queries + list(queries)),
                              unread=self.unread)

    @staticmethod
    def _settle(watches, cordoned, clock=time.monotonic):
        """Wait until every watch holding one of the ``cordoned`` nodes shows it cordoned; a watch
        that does not within ``SETTLE_SECONDS`` is re-listed."""
        deadline = clock() + SETTLE_SECONDS
        for w in (w for w in watches if w.resource == "nodes"):
            def seen(w=w):
                return all(_cordoned(w.get(f"/{n}")) for n in cordoned if w.get(f"/{n}") is not None)

            with w.condition:
                while not seen() and clock() < deadline:
                    w.condition.wait(min(1.0, max(0.0, deadline - clock())))
                current = seen()
            if not current:
                w.resync()


def _cordoned(node) -> bool:
    return bool(((node or {}).get("spec") or {}).get("unschedulable"))
