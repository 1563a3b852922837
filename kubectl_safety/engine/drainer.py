"""Drain nodes as a DrainPlan says: cordon, evict every planned pod (by UID) once, wait for it to go.

The plan's pods in (``analysis/plans/drain.PodAction``), ``DrainResult`` out (its parts typed in ``drain_report.py``);
progress through ``on_event``. While it waits, the state comes from watches (``engine/watch.py``: the pods of
each drained node, each PDB of its pods), so the requests a drain makes depend on its pods, not on the
cluster's size or on how long it waits:

- an eviction refused by a PodDisruptionBudget is retried when that budget's status allows a
  disruption again (or after ``PDB_RETRY_SECONDS`` at the latest), throttling with a back-off;
- a pod is gone when its UID leaves its node's watch (or, with ``skip_wait_for_delete_timeout``,
  when it has been terminating that long);
- never churn: each planned pod is evicted at most once (the UID is the precondition); a pod that
  appears on a drained node afterwards (a replacement that tolerates the cordon) is reported, not
  chased, and evictions per owner never exceed the pods the plan had for it;
- ``order="priority"``: lower-priority pods go first, each priority level gone before the next.
"""

import time
from dataclasses import field
from datetime import datetime, timezone

from kubectl_safety.analysis.eviction import kept_on_node
from kubectl_safety.analysis.plans.common import Action, Severity, MOVING
from kubectl_safety.analysis.plans.drain import WaitFor
from kubectl_safety.cluster.client import Result
from kubectl_safety.cluster.evidence import EventWriter, command_of
from kubectl_safety.cluster.executor import Executor, namespace_terminating
from kubectl_safety.engine.drain_report import AppearedPod, DrainStatus, LeftPod, RequestCounts, RequestOutcome
from kubectl_safety.engine.watch import WatchGroup
from kubectl_safety.errors import InputError
from kubectl_safety.model.meta import parse_time
from kubectl_safety.model.pods import Pod
from kubectl_safety.record import record

PDB_RETRY_SECONDS = 60.0  # a refused eviction is retried when its PDB changes, at the latest after this
BACKOFF = (1.0, 2.0, 5.0, 10.0, 30.0)  # throttled or unavailable
RETURN_SECONDS = 5.0  # how long a replacement the plan expects back on the node is given to appear


@record(frozen=False, slots=False)
class DrainResult:
    """What a drain did, while it runs (``engine/drain.py`` makes the ``DrainReport`` of it)."""

    status: DrainStatus
    message: str = None
    evicted: list = field(default_factory=list)  # "ns/name" evicted (or deleted) by us and gone
    gone: list = field(default_factory=list)  # gone meanwhile, without us
    left: list = field(default_factory=list)  # LeftPod
    appeared: list = field(default_factory=list)  # AppearedPod: came onto the nodes afterwards (not chased)
    outcomes: list = field(default_factory=list)  # RequestOutcome of every request that changed something
    evictions: dict = field(default_factory=dict)  # per owner: evictions accepted
    requests: RequestCounts = None  # lists, watches, evictions sent (None: no drain ran)


def raw_pod(p) -> dict:
    """What the executor needs of a planned pod (``PodAction``) to evict or delete it."""
    return {"metadata": {"namespace": p.namespace, "name": p.name, "uid": p.uid}, "spec": {"nodeName": p.node}}


def _why(p) -> str:
    reasons = [r for r in p.reasons if r.severity is not Severity.INFO] or p.reasons
    return reasons[-1].message if reasons else p.action.value


def owner_of(obj) -> str:
    meta = (obj or {}).get("metadata") or {}
    ref = next((r for r in meta.get("ownerReferences") or [] if r.get("controller")), None)
    return f"{meta.get('namespace')}/{ref['kind']}/{ref['name']}" if ref else ""


class _Pod:
    """One planned pod while draining."""

    def __init__(self, entry):
        self.entry = entry  # its PodAction
        self.ref = entry.ref
        self.key = self.ref
        self.completes = entry.waits_for is WaitFor.COMPLETION  # waited for, never evicted
        self.accepted = self.completes  # the eviction (or delete) was accepted: only waited for now
        self.done = False  # gone
        self.retry_at = 0.0
        self.failures = 0
        self.last = None  # last Outcome
        self.announced = False


class Drainer:
    """Cordons and drains nodes for ``drain``, ``rollout`` (and the executor's callers)."""

    def __init__(self, connection, *, executor=None, on_event=None, clock=time.monotonic):
        self.connection = connection
        self.executor = executor or Executor(connection, on_event=on_event)
        self.interrupted = self.executor.interrupted
        self.clock = clock
        self.evidence = EventWriter(connection, command_of(connection),
                                    on_failure=lambda message: self.emit("evidence-not-recorded", message=message))

    def emit(self, event, **fields):
        self.executor.emit(event, **fields)

    def cordon(self, nodes, unschedulable=True) -> list:
        """Cordon (or uncordon) each node; the outcomes, stopping at the first that failed."""
        outcomes = []
        for node in nodes:
            outcome = self.executor.cordon(node, unschedulable)
            self.evidence.cordoned(node, outcome, unschedulable)
            outcomes.append(outcome)
            self.emit("cordon" if unschedulable else "uncordon", pod=node, message=outcome.message,
                      result=outcome.result)
            if not outcome.done:
                break
        return outcomes

    # -- evicting --------------------------------------------------------------------------
    def drain(self, nodes, pods, *, deadline=None, order="default", grace_period=None,
              skip_wait_for_delete_timeout=0, watches=None, known=()) -> DrainResult:
        """Evict the planned ``pods`` (``PodAction``s) from the (cordoned) ``nodes``; return when they
        are gone, or at the monotonic ``deadline``, on a failure, or when interrupted. ``known``: uids of
        other pods of the plan (drained apart): not reported as appeared."""
        own = watches is None
        group = watches or WatchGroup(self.connection)
        before = group.requests()
        try:
            return self._drain(nodes, pods, group, deadline, order, grace_period, skip_wait_for_delete_timeout,
                               before, set(known))
        finally:
            if own:
                group.stop()

    def _drain(self, nodes, planned, group, deadline, order, grace, skip_after, before, known):
        entries = [p for p in planned if p.action in MOVING]
        blocked = [p for p in planned if p.action is Action.BLOCKED]
        pods_of = {n: group.watch("pods", field_selector=f"spec.nodeName={n}") for n in nodes}
        budgets = {ref: budget_watch(group, ref) for ref in sorted({p.pdb for p in entries if p.pdb})}
        result = DrainResult(DrainStatus.DRAINED)
        self._sent = 0
        pods = [_Pod(p) for p in entries]
        planned_uids = {p.uid for p in planned} | known
        planned_per_owner = {}
        for p in pods:
            owner = owner_of(pods_of[p.entry.node].get(p.key))
            planned_per_owner[owner] = planned_per_owner.get(owner, 0) + 1

        def present(p):
            obj = pods_of[p.entry.node].get(p.key)
            if obj is None or (obj.get("metadata") or {}).get("uid") != p.entry.uid:
                return False
            if p.completes and (obj.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
                return False
            return not (skip_after and _terminating_for(obj) > skip_after)

        status, message = "drained", None
        for level in _levels(pods, order):
            status, message = self._level(level, present, pods_of, budgets, group, deadline, grace, result,
                                          planned_per_owner)
            if status != "drained":
                break
        if status == "drained":
            self._await_returns(entries, pods_of, planned_uids, group, deadline)
        self._appeared(pods_of, planned_uids, result)
        result.left = [LeftPod(p.entry.namespace, p.entry.name, p.entry.node, p.entry.action,
                               f"{p.last.result}: {p.last.message}" if p.last and not p.last.done
                               else "not gone yet" if p.accepted else _why(p.entry))
                       for p in pods if not p.done]
        still_blocked = [p for p in blocked if present(_Pod(p))]
        result.left += [LeftPod(p.namespace, p.name, p.node, Action.BLOCKED, _why(p)) for p in still_blocked]
        unknown = group.errors()
        if status != "drained" and unknown:  # the API server is gone again: what we last saw
            message = "; ".join(filter(None, [message, f"final state unknown: {unknown[0]}"]))
        if status == "drained" and still_blocked:
            status = "blocked"
            message = "blocked: " + "; ".join(f"{p.ref}: {_why(p)}" for p in still_blocked[:5])
        result.status, result.message = DrainStatus(status), message
        after = group.requests()
        result.requests = RequestCounts(after["lists"] - before["lists"], after["watches"] - before["watches"],
                                        self._sent)
        return result

    def _level(self, pods, present, pods_of, budgets, group, deadline, grace, result, planned_per_owner):
        """Evict one priority level (or all pods) and wait until every one is gone."""
        while True:
            seen = group.changes()  # before reading: a change from here on ends the wait below
            for p in pods:  # what the watches say now
                if not p.done and not present(p):
                    p.done = True
                    if p.completes:
                        result.gone.append(p.ref)
                        self.emit("completed", pod=p.ref)
                    elif p.accepted:
                        result.evicted.append(p.ref)
                        self.emit("evicted", pod=p.ref)
                    else:
                        result.gone.append(p.ref)
                        self.emit("gone", pod=p.ref)
            waiting = [p for p in pods if not p.done]
            if not waiting:
                return "drained", None
            if self.interrupted.is_set():
                return "interrupted", "interrupted: no further evictions were sent"
            if deadline is not None and self.clock() >= deadline:
                return "timeout", "global timeout reached"
            now = self.clock()
            failures = []
            for p in waiting:
                if p.accepted or p.retry_at > now:
                    continue
                owner = owner_of(pods_of[p.entry.node].get(p.key))
                if owner and result.evictions.get(owner, 0) >= planned_per_owner.get(owner, 0):
                    return "failed", f"stopped: {owner} reached its bound of evictions (never churn)"
                outcome = self._send(p, grace, deadline)
                if outcome.done:
                    p.accepted = True
                    result.evictions[owner] = result.evictions.get(owner, 0) + 1
                    result.outcomes.append(RequestOutcome.of(outcome))
                elif outcome.result is Result.GONE:
                    p.done = True
                    result.gone.append(p.ref)
                    result.outcomes.append(RequestOutcome.of(outcome))
                elif outcome.result is Result.PDB_BLOCKED:
                    p.retry_at = now + PDB_RETRY_SECONDS
                    self.emit("retrying", pod=p.ref, result=outcome.result, status=outcome.status,
                              message=outcome.message, retryIn=PDB_RETRY_SECONDS, timeLeft=_left(deadline, now))
                elif outcome.result in (Result.THROTTLED, Result.UNAVAILABLE) or namespace_terminating(outcome):
                    delay = max(BACKOFF[min(p.failures, len(BACKOFF) - 1)], outcome.retry_after or 0)
                    p.failures += 1
                    p.retry_at = now + delay
                    self.emit("retrying", pod=p.ref, result=outcome.result, status=outcome.status,
                              message=outcome.message, retryIn=delay, timeLeft=_left(deadline, now))
                else:
                    result.outcomes.append(RequestOutcome.of(outcome))
                    self.emit(outcome.result, pod=p.ref, status=outcome.status, message=outcome.message)
                    failures.append(f"{outcome.target}: {outcome.result} {outcome.message}".strip())
            if failures:
                return "failed", "; ".join(failures)
            self._wait(waiting, budgets, group, deadline, seen)

    def _send(self, p, grace, deadline):
        if not p.announced:
            p.announced = True
            if p.entry.action is not Action.DELETE:
                self.emit("evicting", pod=p.ref, timeLeft=_left(deadline, self.clock()))
        self._sent += 1
        if p.entry.action is Action.DELETE:
            p.last = self.executor.delete(raw_pod(p.entry), grace)
        else:
            p.last = self.executor.evict(raw_pod(p.entry), grace)
        self.evidence.removed(p.entry, p.last)
        return p.last

    def _wait(self, waiting, budgets, group, deadline, since):
        """Until a watched object changes after ``since`` (the group's count of changes when the pods
        were last read), a retry is due, the deadline passes or an interrupt."""
        blocked = [p for p in waiting if not p.accepted]
        if blocked:  # the plan's reasons (the budget's numbers), as the plan printed them
            why = "; ".join(dict.fromkeys(_why(p.entry) for p in blocked))[:300]
            self.emit("waiting", message=f"{len(blocked)} pod(s): {why}", timeLeft=_left(deadline, self.clock()))
        due = min((p.retry_at for p in blocked), default=None)
        wake = None if due is None else max(0.0, due - self.clock())
        group.wait_for(lambda: group.changes() != since, deadline, self.interrupted, wake, clock=self.clock)
        for error in group.errors():
            self.emit("unreachable", message=error, timeLeft=_left(deadline, self.clock()))
        for p in blocked:  # a budget that allows a disruption again: its pods are retried now
            ref = p.entry.pdb
            if ref:
                watch = budgets.get(ref)
                obj = watch.get(ref) if watch else None
                if obj and ((obj.get("status") or {}).get("disruptionsAllowed") or 0) > 0:
                    p.retry_at = 0.0

    def _await_returns(self, entries, pods_of, planned_uids, group, deadline):
        """Replacements the plan said come back to the node (``PodAction.returns``): give them
        ``RETURN_SECONDS`` to appear, so the report says the node is not empty."""
        returning = [p for p in entries if p.returns]
        if not returning:
            return

        def back():
            new = [o for n in {p.node for p in returning} for o in pods_of[n].items()
                   if (o.get("metadata") or {}).get("uid") not in planned_uids]
            return len(new) >= len(returning)

        until = self.clock() + RETURN_SECONDS
        group.wait_for(back, until if deadline is None else min(until, deadline), self.interrupted, clock=self.clock)

    def _appeared(self, pods_of, planned_uids, result):
        """Pods on the drained nodes that the plan did not know: reported, never chased."""
        for node, watch in pods_of.items():
            for obj in watch.items():
                meta = obj.get("metadata") or {}
                if meta.get("uid") in planned_uids or meta.get("deletionTimestamp"):
                    continue
                if kept_on_node(Pod(obj)):
                    continue
                owner = owner_of(obj)
                pod = AppearedPod(meta.get("namespace"), meta.get("name"), node, owner)
                result.appeared.append(pod)
                self.emit("appeared", pod=pod.ref, node=node)


def budget_watch(group, ref):
    """The watch of one PodDisruptionBudget ("namespace/name"): its changes only."""
    namespace, name = ref.split("/", 1)
    return group.watch("poddisruptionbudgets", namespace, field_selector=f"metadata.name={name}")


def _levels(pods, order):
    if order != "priority":
        return [pods]
    by = {}
    for p in pods:
        by.setdefault(p.entry.priority or 0, []).append(p)
    return [by[k] for k in sorted(by)]


def _terminating_for(obj) -> float:
    try:
        since = parse_time((obj.get("metadata") or {}).get("deletionTimestamp"))
    except InputError:
        return 0.0
    if since is None:
        return 0.0
    return (datetime.now(timezone.utc) - since).total_seconds()


def _left(deadline, now):
    return None if deadline is None else max(0.0, deadline - now)
