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
cordoned. A rollout's later batches wait likewise for everything the rollout ``Seen`` (its
uncordons, the pods it evicted gone, the replacements its health gate watched), so a batch is not
planned on a pool that lacks the node the batch before gave back.
"""

import time

from kubectl_safety.cluster.live import RESOURCES
from kubectl_safety.cluster.source import complete_pod_namespaces, fetch, unique, unreadable
from kubectl_safety.engine.watch import WatchGroup, key_of, newer_or_same
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

    def snapshot(self, now, queries=(), group=None, cordoned=(), seen=None):
        """A snapshot of the shared watches plus ``queries``: watched in ``group`` when given (a
        batch's), else read once. ``cordoned``: nodes whose cordon the plan must see; ``seen``: what
        the command itself wrote or watched (``Seen``), which the plan must see too."""
        watches = list(self.shared)
        pairs = []
        if group is not None:
            watches += self._watch(group, queries)
        else:
            pairs = list(fetch(self.connection, queries, warnings=self.warnings, unread=self.unread))
        self._settle(watches, cordoned, seen if seen is not None else Seen())
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
    def _settle(watches, cordoned, seen, clock=time.monotonic):
        """Wait until every watch holding one of the ``cordoned`` nodes shows it cordoned, and every
        watch shows what was ``seen``; a watch that does not within ``SETTLE_SECONDS`` is re-listed."""
        deadline = clock() + SETTLE_SECONDS
        for w in (w for w in watches if w.resource == "nodes" and cordoned or seen.concerns(w)):
            def shown(w=w):
                return seen.shown_by(w) and (w.resource != "nodes" or all(
                    _cordoned(w.get(f"/{n}")) for n in cordoned if w.get(f"/{n}") is not None))

            with w.condition:
                while not shown() and clock() < deadline:
                    w.condition.wait(min(1.0, max(0.0, deadline - clock())))
                current = shown()
            if not current:
                w.resync()


class Seen:
    """What a command wrote, or watched happen, that its later plans must see: objects at (at least) a
    resourceVersion, and pods gone (by UID). Only a watch of all of a resource's objects is checked
    (one with a namespace or selector may rightly lack them)."""

    def __init__(self):
        self.objects = {}  # (resource, "namespace/name") -> resourceVersion
        self.gone = {}  # (resource, "namespace/name") -> uid

    def written(self, resource, key, version):
        """The object ``key`` was at ``version`` (a write's response, or a watch's event)."""
        if version and not newer_or_same(self.objects.get((resource, key)), version):
            self.objects[(resource, key)] = version
            self.gone.pop((resource, key), None)

    def watched(self, watch):
        """Everything ``watch`` holds now, at its version."""
        for obj in watch.items():
            self.written(watch.resource, key_of(obj), (obj.get("metadata") or {}).get("resourceVersion"))

    def removed(self, resource, key, uid):
        """The object ``key`` with ``uid`` is gone."""
        self.gone[(resource, key)] = uid
        self.objects.pop((resource, key), None)

    def concerns(self, watch) -> bool:
        whole = watch.namespace is None and watch.field_selector is None and watch.label_selector is None
        return whole and any(r == watch.resource for r, _ in list(self.objects) + list(self.gone))

    def shown_by(self, watch) -> bool:
        """``watch`` shows it all: each object at its version or later (or gone, once the watch is past
        that version), each pod gone gone (or another of its name there)."""
        if not self.concerns(watch):
            return True
        for (resource, key), version in self.objects.items():
            if resource == watch.resource:
                obj = watch.get(key)
                now = (obj.get("metadata") or {}).get("resourceVersion") if obj is not None else watch.version
                if not newer_or_same(now, version):
                    return False
        for (resource, key), uid in self.gone.items():
            if resource == watch.resource:
                obj = watch.get(key)
                if obj is not None and (obj.get("metadata") or {}).get("uid") == uid:
                    return False
        return True


def _cordoned(node) -> bool:
    return bool(((node or {}).get("spec") or {}).get("unschedulable"))
