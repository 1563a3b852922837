"""Make before break on the live cluster: run the surges of a drain plan (``analysis/surge.py``).

For every surged workload, before any of its pods goes:

1. record the original count on the object (annotation ``safety.kubectl.io/surge``, written in the same
   request that raises the count, with the object's resourceVersion as precondition), then raise it:
   ``spec.replicas`` of the Deployment (never the ReplicaSet it owns) or ``minReplicas`` of the
   HorizontalPodAutoscaler that owns the count;
2. wait (watch) until as many Ready pods as it had when planned run on nodes that stay; the drained nodes are
   cordoned, and tainted ``safety.kubectl.io/surge:NoSchedule`` while a workload that tolerates the
   cordon starts its surge pods;
3. remove the old pods: by eviction (the drainer: PDB-aware retries, by UID), or by marking them with
   the lowest pod-deletion-cost and returning the count, so that the controller removes exactly them;
4. restore the count (and the autoscaler's minimum); a count someone else changed meanwhile is
   reported, not overwritten; the annotation goes, and from the ReplicaSet the Deployment controller
   copied it to.

Interrupted (Ctrl-C, SIGTERM), timed out or cut off, the annotation stays, and so does the taint while a
surge of a workload that tolerates the cordon stays raised (its pending surge pods cannot start on the
drained nodes): the same command run again plans the surge as resumed (``Surge.resumed``) and finishes
it; ``check`` reports both (SURGE_LEFT).
"""

import json
from dataclasses import field
from datetime import datetime, timezone

from kubectl_safety.analysis.plans.common import Action
from kubectl_safety.analysis.plans.drain import Removal, SurgeMechanism
from kubectl_safety.analysis.surge import ANNOTATION, DELETION_COST, LOWEST_COST, TAINT
from kubectl_safety.cluster.client import Client, Result
from kubectl_safety.cluster.live import resource_path
from kubectl_safety.engine.drain_report import DrainStatus, Request, RequestOutcome, SurgeRecord, SurgeStatus
from kubectl_safety.record import record

RESOURCES = {"Deployment": "deployments", "ReplicaSet": "replicasets"}


@record(frozen=False, slots=False)
class SurgeRun:
    """What the surges of one drain did, while they run."""

    status: str = "done"  # done | timeout | interrupted | failed
    message: str = None
    raised: list = field(default_factory=list)  # "Kind ns/name from->to"
    restored: list = field(default_factory=list)
    changed_by_others: list = field(default_factory=list)  # counts left as someone else set them
    removed: list = field(default_factory=list)  # old pods removed by the scale-back ("ns/name")
    outcomes: list = field(default_factory=list)  # RequestOutcome: the pods marked for the scale-back
    result: object = None  # the DrainResult of the surged pods' evictions

    def record(self) -> SurgeRecord:
        return SurgeRecord(SurgeStatus(self.status), self.message, tuple(self.raised), tuple(self.restored),
                           tuple(self.changed_by_others), tuple(self.removed))


class Surger:
    """Runs a plan's surges with the drainer's connection, executor (interrupts) and watch group."""

    def __init__(self, drainer, group, nodes, holder="drain"):
        self.drainer = drainer
        self.client = Client(drainer.connection)
        self.group = group
        self.nodes = list(nodes)
        self.holder = holder
        self.clock = drainer.clock
        self.interrupted = drainer.interrupted
        self.recorded, self.restored = set(), set()  # the surges whose record is on the workload; gone

    def emit(self, message):
        self.drainer.emit("surge", message=message)

    def run(self, plan, deadline=None, grace_period=None) -> SurgeRun:
        surges = plan.surge.surges
        run = SurgeRun()
        pods = {(p.namespace, p.name): p for p in plan.pods}
        tainted, raised = [], []  # raised: the surges this run raised (not resumed ones)
        removing = False
        try:
            self._taint([s for s in surges if s.tolerates_cordon and s.pods], tainted)
            for s in surges:
                self._raise(s, run, raised)
            if not self._send_back(surges, pods, deadline, grace_period, run) or \
                    not self._wait_ready(surges, deadline, run):
                return run
            removing = True
            evicted = [pods[k] for s in surges if s.removal is Removal.EVICT for k in s.keys if k in pods]
            for s in surges:
                if s.removal is Removal.DELETION_COST and s.pods:
                    self._mark(s, pods, run)
            present = self._present([s for s in surges if s.removal is Removal.DELETION_COST])
            for s in surges:
                if s.removal is Removal.DELETION_COST:
                    self._restore(s, run)
            if evicted:
                run.result = self.drainer.drain(self.nodes, evicted, watches=self.group, deadline=deadline,
                                                grace_period=grace_period, known={p.uid for p in plan.pods})
                if run.result.status is not DrainStatus.DRAINED:
                    run.status, run.message = run.result.status.value, run.result.message
                    return run
            if not self._wait_gone([s for s in surges if s.removal is Removal.DELETION_COST], deadline, run, present):
                return run
            for s in surges:
                if s.removal is Removal.EVICT:
                    self._restore(s, run)
            self._wait_settled(surges, deadline, run)
        except _Stop as e:
            run.status, run.message = e.status, e.message
            if not removing:  # no old pod went yet: nothing this run raised stays raised
                self._lower(raised, run)
            return run
        finally:  # the taint stays as long as a surge of a workload that tolerates the cordon stays raised
            left = [s.ref for s in surges if s.tolerates_cordon and s in self.recorded - self.restored]
            if left and tainted:
                run.message = (f"{run.message}; " if run.message else "") + (
                    f"{', '.join(tainted)} keep{'s' if len(tainted) == 1 else ''} the taint {TAINT}:NoSchedule "
                    f"while {', '.join(left)} stay{'s' if len(left) == 1 else ''} surged, so that no surge pod "
                    "starts there")
            else:
                self._untaint(tainted)
        return run

    # -- requests --------------------------------------------------------------------------
    def _patch(self, resource, namespace, name, build):
        """PATCH with the object's resourceVersion as precondition (``Client.patch_checked``);
        ``build(obj)`` gives the patch (None: nothing to change)."""
        outcome, sent = self.client.patch_checked(resource, namespace, name, build)
        if outcome.action == "get" and not outcome.done:
            raise _Stop("failed", _failure(outcome, "GET", resource, namespace, name, "cannot read"))
        if outcome.result is Result.CONFLICT:
            raise _Stop("failed", f"surge: {resource} {namespace}/{name} kept changing (conflicts)")
        if not outcome.done:
            raise _Stop("failed", _failure(outcome, "PATCH", resource, namespace, name, "cannot change"))
        return outcome.body, sent

    # -- 1. record and raise ---------------------------------------------------------------
    def _lower(self, raised, run):
        for s in raised:
            try:
                self._restore(s, run)
            except _Stop as e:
                self.emit(str(e.message))

    def _raise(self, s, run, raised):
        resource = RESOURCES[s.kind]
        record = {"holder": "kubectl-safety", "command": self.holder, "nodes": self.nodes,
                  "replicas": s.from_replicas, "to": s.to_replicas,
                  "at": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")}
        if s.hpa:
            record.update(hpa=s.hpa, hpaMinReplicas=s.hpa_min_from)
        if s.ready_before is not None:
            record["ready"] = s.ready_before

        def build(obj):
            if self._ours(s, obj):
                return None  # recorded by an earlier run of this drain: resumed
            patch = {"metadata": {"annotations": {ANNOTATION: json.dumps(record, sort_keys=True)}}}
            if s.mechanism is SurgeMechanism.SCALE:
                replicas = (obj.get("spec") or {}).get("replicas", 1)
                if replicas != s.from_replicas:
                    raise _Stop("failed", f"surge: {s.ref} has {replicas} replicas, not {s.from_replicas}: the count "
                                          "changed since the plan; plan again")
                patch["spec"] = {"replicas": s.to_replicas}
            return patch

        _, sent = self._patch(resource, s.namespace, s.name, build)
        self.recorded.add(s)
        if sent:
            raised.append(s)
        if s.mechanism is SurgeMechanism.HPA_MIN:
            self._patch("horizontalpodautoscalers", s.namespace, s.hpa,
                        lambda h: None if (h.get("spec") or {}).get("minReplicas", 1) >= s.hpa_min_to
                        else {"spec": {"minReplicas": s.hpa_min_to}})
        how = (f"HorizontalPodAutoscaler {s.hpa} minReplicas {s.hpa_min_from} -> {s.hpa_min_to}"
               if s.hpa else f"replicas {s.from_replicas} -> {s.to_replicas}")
        line = f"{s.ref}: {how}" + ("" if sent else " (recorded by an earlier run: resumed)")
        run.raised.append(line)
        self.emit("surged " + line)

    def _ours(self, s, obj) -> bool:
        """The object carries a surge record of a drain of these nodes (False: none); a record of a drain
        of other nodes stops the run."""
        note = ((obj.get("metadata") or {}).get("annotations") or {}).get(ANNOTATION)
        if note is None:
            return False
        try:
            nodes = list(json.loads(note).get("nodes") or ())
        except (ValueError, AttributeError):
            nodes = []
        if set(nodes) & set(self.nodes):
            return True
        raise _Stop("failed", f"surge: {s.ref} is surged by a drain of {', '.join(map(str, nodes)) or 'unknown nodes'}"
                              " that has not finished: not changed")

    # -- 2. wait for the surge pods ----------------------------------------------------------
    def _send_back(self, surges, pods, deadline, grace_period, run) -> bool:
        """Remove the surge pods of a resumed surge that started on the drained nodes while they were not
        tainted (more of its pods there than it has old ones; the newest are the surge's), so that they
        start elsewhere: one that is Ready only while the workload keeps the Ready count it had."""
        drained, misplaced = set(self.nodes), []
        for s in surges:
            if not s.resumed:
                continue
            mine = [p for p in self.group.watch("pods", s.namespace, label_selector=s.selector).items()
                    if not (p.get("metadata") or {}).get("deletionTimestamp")]
            there = sorted((p for p in mine if (p.get("spec") or {}).get("nodeName") in drained
                            and p["metadata"].get("uid") in s.uids),
                           key=lambda p: p["metadata"].get("creationTimestamp") or "", reverse=True)
            spare = sum(1 for p in mine if _ready(p)) - _wanted(s)
            for p in there[:max(len(there) - (s.to_replicas - s.from_replicas), 0)]:
                if _ready(p) and spare < 1:
                    continue
                spare -= _ready(p)
                entry = pods.get((s.namespace, p["metadata"]["name"]))
                if entry is not None:
                    misplaced.append(entry)
        if not misplaced:
            return True
        self.emit(f"{', '.join(p.ref for p in misplaced)}: surge pod(s) that started on the drained nodes while "
                  "they were not tainted: removed to start elsewhere")
        result = self.drainer.drain(self.nodes, misplaced, watches=self.group, deadline=deadline,
                                    grace_period=grace_period, known={p.uid for p in pods.values()})
        if result.status is not DrainStatus.DRAINED:
            run.status, run.message = result.status.value, result.message
            return False
        return True

    def _wait_ready(self, surges, deadline, run) -> bool:
        watches = {s: self.group.watch("pods", s.namespace, label_selector=s.selector) for s in surges}
        drained = set(self.nodes)

        def ready_elsewhere(s):
            return sum(1 for p in watches[s].items() if _ready(p) and (p.get("spec") or {}).get("nodeName")
                       not in drained and (p.get("metadata") or {}).get("uid") not in s.uids)

        def all_ready():
            return all(ready_elsewhere(s) >= _wanted(s) for s in surges if s.pods)

        waiting = [s.ref for s in surges if s.pods]
        if waiting:
            self.emit(f"waiting for the surge pods of {', '.join(waiting)} to be Ready on nodes that stay")
        if self.group.wait_for(all_ready, deadline, self.interrupted, clock=self.clock):
            return True
        if self.interrupted.is_set():
            run.status, run.message = "interrupted", "interrupted while the surge pods started: run the same " \
                                                     "command again to finish (or restore) the surge"
        else:
            late = [f"{s.ref} ({ready_elsewhere(s)}/{_wanted(s)} Ready elsewhere)" for s in surges
                    if s.pods and ready_elsewhere(s) < _wanted(s)]
            run.status, run.message = "timeout", f"surge pods not Ready in time: {', '.join(late)}; run the " \
                                                 "same command again to finish the surge"
        return False

    # -- 3. remove the old pods --------------------------------------------------------------
    def _mark(self, s, pods, run):
        for key in s.keys:
            p = pods.get(key)
            if p is None or p.action is not Action.DELETE:
                continue
            outcome = self.client.patch("pods", p.namespace, p.name, {
                "metadata": {"uid": p.uid, "annotations": {DELETION_COST: LOWEST_COST}}})
            if outcome.result is Result.NOT_FOUND:
                continue
            if outcome.status is None:
                raise _Stop("failed", f"surge: PATCH {resource_path('pods', p.namespace, p.name)}: {outcome.message}")
            if not outcome.done:
                raise _Stop("failed", f"surge: cannot mark pod {p.ref}: {outcome.status} {outcome.message}")
            run.outcomes.append(RequestOutcome(p.ref, Request.DELETION_COST, Result.DONE, outcome.status,
                                               f"{DELETION_COST}={LOWEST_COST}"))

    def _present(self, surges) -> dict:
        """{surge: {uid: name} of its pods not being deleted}, read before its scale-back."""
        out = {}
        for s in surges:
            items = self.group.watch("pods", s.namespace, label_selector=s.selector).items()
            out[s] = {(p.get("metadata") or {}).get("uid"): (p.get("metadata") or {}).get("name") for p in items
                      if not (p.get("metadata") or {}).get("deletionTimestamp")}
        return out

    def _wait_gone(self, surges, deadline, run, present) -> bool:
        if not surges:
            return True
        watches = {s: self.group.watch("pods", s.namespace, label_selector=s.selector) for s in surges}

        def old(s):
            return [p for p in watches[s].items() if (p.get("metadata") or {}).get("uid") in s.uids]

        def gone():
            return all(not old(s) or _went_instead(s, present[s], watches[s].items()) for s in surges)

        if self.group.wait_for(gone, deadline, self.interrupted, clock=self.clock):
            instead = [x for x in (_went_instead(s, present[s], watches[s].items()) for s in surges) if x]
            if instead:
                run.status, run.message = "failed", (
                    "the scale-back removed other pods than the marked ones: "
                    + "; ".join(f"{', '.join(went)} went, {', '.join(stayed)} stayed on the drained nodes"
                                for went, stayed in instead)
                    + " (the ReplicaSet controller removes not-Ready, Pending or unscheduled pods first)")
                return False
            run.removed += [f"{s.namespace}/{n}" for s in surges for n in s.pods]
            for s in surges:
                for n in s.pods:
                    self.drainer.emit("evicted", pod=f"{s.namespace}/{n}")
            return True
        run.status = "interrupted" if self.interrupted.is_set() else "timeout"
        run.message = "the old pods were not removed by the scale-back in time: run the same command again"
        return False

    # -- 4. restore ------------------------------------------------------------------------
    def _restore(self, s, run):
        resource = RESOURCES[s.kind]
        changed, hpa_changed = [], []  # each cleared when its patch is built again (after a conflict)

        def build(obj):
            changed.clear()
            if not self._ours(s, obj):
                return None  # restored already
            patch = {"metadata": {"annotations": {ANNOTATION: None}}}
            replicas = (obj.get("spec") or {}).get("replicas", 1)
            if s.mechanism is SurgeMechanism.SCALE:
                if replicas == s.to_replicas:
                    patch["spec"] = {"replicas": s.from_replicas}
                else:
                    changed.append(f"{s.ref}: replicas {replicas}, not {s.to_replicas} as the surge set them: "
                                   "left as they are")
            return patch

        if s.mechanism is SurgeMechanism.HPA_MIN:
            def build_hpa(h):
                hpa_changed.clear()
                current = (h.get("spec") or {}).get("minReplicas", 1)
                if current == s.hpa_min_from:
                    return None
                if current != s.hpa_min_to:
                    hpa_changed.append(f"HorizontalPodAutoscaler {s.namespace}/{s.hpa}: minReplicas {current}, not "
                                   f"{s.hpa_min_to} as the surge set it: left as it is")
                    return None
                return {"spec": {"minReplicas": s.hpa_min_from}}

            self._patch("horizontalpodautoscalers", s.namespace, s.hpa, build_hpa)
        self._patch(resource, s.namespace, s.name, build)
        self.restored.add(s)
        changed = hpa_changed + changed
        run.changed_by_others += changed
        for line in changed:
            self.emit("not restored: " + line)
        how = (f"HorizontalPodAutoscaler {s.hpa} minReplicas -> {s.hpa_min_from}" if s.hpa
               else f"replicas -> {s.from_replicas}")
        if not changed:
            run.restored.append(f"{s.ref}: {how}")
            self.emit(f"restored {s.ref}: {how}")

    def _wait_settled(self, surges, deadline, run):
        """Until each restored workload has removed its extra pods (its status caught up with its spec):
        the next plan (a rollout's next batch) sees a workload at rest, not one mid-rollout."""
        watches = {s: self.group.watch(RESOURCES[s.kind], s.namespace, field_selector=f"metadata.name={s.name}")
                   for s in surges if s.mechanism is SurgeMechanism.SCALE}

        def settled():
            for s, w in watches.items():
                obj = w.get(f"{s.namespace}/{s.name}") or {}
                spec, status = obj.get("spec") or {}, obj.get("status") or {}
                if status.get("observedGeneration", 0) < (obj.get("metadata") or {}).get("generation", 0) \
                        or status.get("replicas", 0) != spec.get("replicas", 1):
                    return False
            return True

        if not self.group.wait_for(settled, deadline, self.interrupted, clock=self.clock):
            if self.interrupted.is_set():
                run.status, run.message = "interrupted", "interrupted while the restored workloads scaled back"
            return
        self._clear_copies([s for s in surges if s.kind == "Deployment" and s in self.restored], deadline, run)

    def _clear_copies(self, surges, deadline, run):
        """Remove the record from the ReplicaSets of the restored Deployments: the Deployment controller
        copies a Deployment's annotations onto its ReplicaSet and never removes them (and a rollback
        would copy them back). Run once the controller has seen the restored Deployment (settled)."""
        watches = {s: self.group.watch("replicasets", s.namespace, label_selector=s.selector) for s in surges}

        def copies():
            return [(s, rs["metadata"]["name"]) for s, w in watches.items() for rs in w.items()
                    if ANNOTATION in ((rs.get("metadata") or {}).get("annotations") or {})
                    and _controlled_by(rs, "Deployment", s.name)]

        for s, name in copies():
            self._patch("replicasets", s.namespace, name, lambda rs: {"metadata": {"annotations": {ANNOTATION: None}}}
                        if ANNOTATION in ((rs.get("metadata") or {}).get("annotations") or {}) else None)
        if not self.group.wait_for(lambda: not copies(), deadline, self.interrupted, clock=self.clock):
            left = "; ".join(f"kubectl annotate replicaset -n {s.namespace} {n} {ANNOTATION}-" for s, n in copies())
            run.status, run.message = ("interrupted" if self.interrupted.is_set() else "timeout",
                                       f"the record {ANNOTATION} stays on the ReplicaSets; to remove it: {left}")

    # -- the taint that keeps surge pods off the drained nodes --------------------------------
    def _taint(self, surges, tainted):
        """Taint the drained nodes, each added to ``tainted`` once done (lifted even if a later one fails)."""
        if not surges:
            return
        for node in self.nodes:
            self._patch("nodes", None, node, lambda n: _taints(n, add=True))
            self.drainer.evidence.node(node, "Tainted", "Taint", f"tainted {TAINT}:NoSchedule while surge pods start")
            tainted.append(node)
        self.emit(f"tainted {', '.join(self.nodes)} {TAINT}:NoSchedule while surge pods start (they tolerate "
                  "the cordon)")

    def _untaint(self, nodes):
        for node in nodes:
            try:
                self._patch("nodes", None, node, lambda n: _taints(n, add=False))
            except _Stop as e:
                self.emit(str(e.message))


def _went_instead(s, before, items) -> tuple:
    """After the scale-back of ``s``: (the pods it removed other than the marked ones, the marked ones that
    stay) when the count is back and a marked pod stays, else (). ``before``: {uid: name} of its pods
    before the scale-back."""
    alive = {(p.get("metadata") or {}).get("uid"): (p.get("metadata") or {}).get("name") for p in items
             if not (p.get("metadata") or {}).get("deletionTimestamp")}
    stayed = [f"{s.namespace}/{name}" for uid, name in alive.items() if uid in s.uids]
    if len(alive) > s.from_replicas or not stayed:
        return ()
    went = [f"{s.namespace}/{name}" for uid, name in sorted(before.items(), key=lambda x: x[1])
            if uid not in alive and uid not in s.uids]
    return (went or ["no other pod"], stayed)


def _taints(node, add):
    taints = list((node.get("spec") or {}).get("taints") or [])
    has = any(t.get("key") == TAINT for t in taints)
    if has == add:
        return None
    taints = taints + [{"key": TAINT, "effect": "NoSchedule"}] if add else [t for t in taints if t.get("key") != TAINT]
    return {"spec": {"taints": taints}}


def _wanted(s) -> int:
    """The Ready pods the workload had: a replica that was not Ready is not waited for."""
    return s.from_replicas if s.ready_before is None else min(s.from_replicas, s.ready_before)


def _controlled_by(obj, kind, name) -> bool:
    return any(r.get("controller") and r.get("kind") == kind and r.get("name") == name
               for r in (obj.get("metadata") or {}).get("ownerReferences") or ())


def _ready(pod) -> bool:
    meta, status = pod.get("metadata") or {}, pod.get("status") or {}
    return not meta.get("deletionTimestamp") and any(
        c.get("type") == "Ready" and c.get("status") == "True" for c in status.get("conditions") or ())


def _failure(outcome, method, resource, namespace, name, what) -> str:
    """A refused request's line (the transport's error when the server did not answer)."""
    if outcome.status is None:
        return f"surge: {method} {resource_path(resource, namespace, name)}: {outcome.message}"
    return f"surge: {what} {resource} {namespace}/{name}: {outcome.status} {outcome.message}".strip()


class _Stop(Exception):
    def __init__(self, status, message):
        super().__init__(message)
        self.status, self.message = status, message
