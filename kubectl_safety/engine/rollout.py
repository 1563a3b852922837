"""Maintain a node pool batch by batch: drain, run the maintenance action, wait for the node to come
back, uncordon, then a health gate before the next batch; resumable and exclusive.

Plan in (the batches of ``analysis/rollout_plan.py`` and a ``DrainPlanner`` (``drain_planner.py``)
that plans each batch once its nodes are cordoned, from the watches of ``group``, the batch's own,
which the drainer and the health gate share), a ``RolloutReport`` (``rollout_report.py``) out;
progress through ``on_event``.

- Exclusive: a Lease (``engine/lease.py``) names the rollout and its holder; a node that carries
  another rollout's annotation whose Lease is live refuses the rollout.
- Resumable: each node's step is recorded in its annotations (``ANNOTATION_STATE``: pending,
  draining, drained, maintained, gating, done) with the rollout's name; the same command continues
  where it stopped (a maintained node is not maintained twice, a node back and uncordoned is only
  gated); a completed rollout removes them. What the health gate checks is recorded too
  (``ANNOTATION_GATE``) before any pod moves, so a run resumed after a failed gate (or an
  interrupt) gates the pods moved earlier, against the Ready counts from before they moved.
  With ``--surge`` the batch's surges (``Kind ns/name from->to``) are recorded on its nodes
  (``ANNOTATION_SURGES``) before any count changes, so a resumed run reports what its earlier run surged.
- Health gate: every PDB that covers moved pods is back at its desired healthy count, and every
  workload whose pods moved has as many Ready pods as before the batch (no replacement Pending or
  unready); otherwise the rollout stops after ``gate_timeout`` with its state kept. The gate
  watches those workloads' pods (by their labels) and those PDBs, so a batch's requests and bytes
  depend on what it moves, not on the cluster's size.
"""

import json
import os
import subprocess
import tempfile
import time
from dataclasses import field, replace

from kubectl_safety.cluster.client import Client
from kubectl_safety.engine.drain import cordon_and_drain
from kubectl_safety.engine.drain_report import DrainStatus, RequestCounts
from kubectl_safety.engine.drainer import Drainer
from kubectl_safety.engine.health import HealthGate
from kubectl_safety.engine.lease import RolloutLease, describe, is_live
from kubectl_safety.engine.live_view import Seen
from kubectl_safety.engine.rollout_report import (BatchProgress, Gate, NodeDrain, NodeExec, NodeProgress,
                                                  RolloutReport, RolloutStatus)
from kubectl_safety.engine.watch import WatchGroup
from kubectl_safety.errors import ClusterError, RefusedError
from kubectl_safety.model.constants import UNSCHEDULABLE_TAINT
from kubectl_safety.record import record

ANNOTATION_ROLLOUT = "safety.kubectl.io/rollout"
ANNOTATION_STATE = "safety.kubectl.io/rollout-state"
ANNOTATION_BEFORE = "safety.kubectl.io/rollout-before"  # what --wait-for compares (boot ID, kubelet version)
ANNOTATION_GATE = "safety.kubectl.io/rollout-gate"  # what the health gate checks: PDBs, workloads, Ready before
ANNOTATION_SURGES = "safety.kubectl.io/rollout-surges"  # the workloads the batch's drain surges, with counts
STATES = ("pending", "draining", "drained", "maintained", "gating", "done")
UNTAINT_SECONDS = 10.0  # bound on waiting for the node controller to lift the cordon's taint after an uncordon


@record(frozen=False, slots=False)
class RolloutSpec:
    """How to run the rollout (the CLI's flags)."""

    name: str  # the Lease's name: the rollout's identity
    nodes: list  # the pool
    batches: list  # lists of node names still to do, in order
    lease_namespace: str = "kube-system"
    precordon: bool = True
    keep_cordoned: bool = False
    exec_command: str = None
    exec_timeout: float = 600
    wait_for: str = None  # None (Ready), "boot-id", "kubelet-version", "label=KEY[=VALUE]"
    ready_timeout: float = 600
    gate_timeout: float = 300
    drain_timeout: float = 0  # per batch (0: none)
    order: str = "default"
    grace_period: int = None
    skip_wait_for_delete_timeout: int = 0
    states: dict = field(default_factory=dict)  # node -> state recorded by an earlier run
    surges: dict = field(default_factory=dict)  # node -> the surges an earlier run recorded on it


def recorded(nodes, name):
    """What earlier runs of rollout ``name`` recorded on the pool's Node objects ``nodes`` ({name: raw
    Node}): ``(states, surges)``, {node: its step (None: none recorded)} of the nodes in the rollout
    and {node: the surges recorded on it (``Kind ns/name from->to``)}."""
    states, surges = {}, {}
    for n, obj in nodes.items():
        annotations = ((obj or {}).get("metadata") or {}).get("annotations") or {}
        if annotations.get(ANNOTATION_ROLLOUT) != name:
            continue
        states[n] = annotations.get(ANNOTATION_STATE)
        try:
            surged = json.loads(annotations.get(ANNOTATION_SURGES) or "[]")
        except ValueError:
            continue
        if isinstance(surged, list) and surged:
            surges[n] = tuple(str(x) for x in surged)
    return states, surges


def wait_for_value(node, wait_for):
    """What ``--wait-for`` compares before and after the maintenance, read from a Node object."""
    info = ((node or {}).get("status") or {}).get("nodeInfo") or {}
    if wait_for == "boot-id":
        return info.get("bootID") or ""
    if wait_for == "kubelet-version":
        return info.get("kubeletVersion") or ""
    return ""


def node_back(node, wait_for, before) -> bool:
    """The node is Ready again and, with ``wait_for``, changed as asked."""
    if node is None:
        return False
    ready = any(c.get("type") == "Ready" and c.get("status") == "True"
                for c in ((node.get("status") or {}).get("conditions") or []))
    if not ready:
        return False
    if wait_for in ("boot-id", "kubelet-version"):
        return wait_for_value(node, wait_for) != before
    if wait_for and wait_for.startswith("label="):
        key, eq, value = wait_for[len("label="):].partition("=")
        labels = (node.get("metadata") or {}).get("labels") or {}
        return key in labels and (not eq or labels[key] == value)
    return True


def schedulable(node) -> bool:
    """Uncordoned, and without the taint the node lifecycle controller keeps on a cordoned node."""
    spec = (node or {}).get("spec") or {}
    return node is not None and not spec.get("unschedulable") and not any(
        t.get("key") == UNSCHEDULABLE_TAINT["key"] for t in spec.get("taints") or [])


class Rollout:
    """One rollout run."""

    def __init__(self, connection, spec, *, planner, on_event=None, run=subprocess.run, clock=time.monotonic,
                 before_batch=None, after_batch=None):
        """``before_batch(number, nodes)``: ``(status, message)``, "done" to go on (the maintenance windows,
        alerts, blocking pods: ``engine/gates.py``); ``after_batch(report)``: the progress so far (metrics)."""
        self.connection = connection
        self.client = Client(connection)
        self.before_batch = before_batch
        self.after_batch = after_batch
        self.spec = spec
        self.planner = planner
        self.drainer = Drainer(connection, on_event=on_event, clock=clock)
        self.executor = self.drainer.executor
        self.interrupted = self.executor.interrupted
        self.emit = self.drainer.emit
        self._run = run
        self.clock = clock
        self.lease = RolloutLease(connection, spec.name, spec.lease_namespace,
                                  description=",".join(spec.nodes)[:200])
        self.nodes = {n: NodeProgress(n, None, spec.states.get(n) or "pending", surges=spec.surges.get(n))
                      for n in spec.nodes}
        self.batches = []
        self.requests = RequestCounts(0, 0, 0)
        self.seen = Seen()  # what the rollout wrote and watched: each batch's re-plan waits to see it

    # -- the whole run ---------------------------------------------------------------------
    def check_exclusive(self, node_objects):
        """Refuse if a node of the pool belongs to another rollout whose Lease is live."""
        for obj in node_objects:
            other = ((obj.get("metadata") or {}).get("annotations") or {}).get(ANNOTATION_ROLLOUT)
            if other and other != self.spec.name:
                read = self.client.get("leases", self.spec.lease_namespace, other).raise_unanswered()
                if read.done and is_live(read.body, self.lease.holder):
                    raise RefusedError(f"node {obj['metadata']['name']} is in rollout {other}, held by "
                                       f"{describe(read.body)}; nothing was changed")

    def run(self) -> RolloutReport:
        started = self.clock()
        resumed = self.lease.acquire()
        self.lease.keep_renewed()
        status, message = "done", None
        try:
            status, message = self._before(0)  # the first batch's gates before the pool is cordoned
            if status == "done" and self.spec.precordon:
                status, message = self._precordon()
            if status == "done":
                for i, batch in enumerate(self.spec.batches):
                    status, message = self._before(i) if i else ("done", None)
                    if status != "done":
                        break
                    status, message = self._batch(i + 1, batch)
                    if self.after_batch is not None:
                        self.after_batch(self._report(started, "running" if status == "done" else status, message,
                                                      resumed))
                    if status != "done":
                        break
        except ClusterError as e:
            status, message = "error", str(e)
        if status == "done":
            self._finish()
            self.lease.delete()
        else:
            self.lease.release()
        return self._report(started, status, message, resumed)

    def _before(self, i):
        """The gates of batch ``i`` (0-based), unless none are set or an earlier run finished its nodes."""
        if (self.before_batch is None or i >= len(self.spec.batches)
                or all(self.nodes[n].state == "done" for n in self.spec.batches[i])):
            return "done", None
        return self.before_batch(i + 1, self.spec.batches[i])

    def _precordon(self):
        for name, node in self.nodes.items():
            if node.state in ("done", "maintained", "gating"):  # these may hold pods again: left alone
                continue
            outcome = self.executor.cordon(name)
            self.drainer.evidence.cordoned(name, outcome)
            self.seen.written("nodes", f"/{name}", outcome.version)
            self.emit("cordon", pod=name, message=outcome.message, result=outcome.result)
            if not outcome.done:
                return "error", f"unable to cordon node {name!r}: {outcome.message}"
            if node.state == "pending":
                self._record(name, "pending")
        return "done", None

    def _batch(self, number, names):
        self.emit("batch", batch=number, nodes=names, total=len(self.spec.batches))
        self.batches.append(BatchProgress(number, tuple(names), RolloutStatus.RUNNING))
        for n in names:
            self._set(n, batch=number)
        todo = [n for n in names if self.nodes[n].state != "done"]
        if not todo:
            self._batch_ended("done")
            return "done", None
        with WatchGroup(self.connection) as group:  # the batch's nodes, pods and PDBs: plan, drainer, gate
            status, message, gate = self._drain_batch(number, todo, group)
            if status != "done":
                self._batch_ended(status)
                return status, message
            for n in todo:
                if self.nodes[n].state != "gating":  # gating: back and uncordoned, only the gate is left
                    status, message = self._maintain(n, group)
                    if status != "done":
                        self._batch_ended(status)
                        return status, message
                    self._record(n, "gating")
            status, message = self._gate(gate, number)
            for w in group.watches:  # the nodes, the pods moved and their replacements, the PDBs
                self.seen.watched(w)
            self._batch_ended(status, Gate(status == "done", message))
            if status != "done":
                return status, message
        for n in todo:
            self._record(n, "done", gate=False)
            self.emit("node-done", pod=n)
        return "done", None

    def _drain_batch(self, number, todo, group):
        """Plan the batch's nodes once cordoned, record what the health gate must check (so a resumed
        run gates the pods moved earlier too), drain; ``(status, message, gate)``."""
        to_drain = [n for n in todo if self.nodes[n].state not in ("maintained", "gating")]
        gate = None

        def before_drain(plan):  # the gate's pods, recorded before any of them moves
            nonlocal gate
            gate = HealthGate(group, plan.pods if plan is not None else (), self._recorded_gate(todo, group))
            planned = [f"{s.ref} {s.from_replicas}->{s.to_replicas}" for s in (plan.surges if plan is not None else ())]
            for n in todo:
                state = self.nodes[n].state
                surges = tuple(dict.fromkeys((self.nodes[n].surges or ()) + tuple(planned)))
                self._record(n, "draining" if state == "pending" else state, gate=gate.record(),
                             surges=surges or None)

        run = cordon_and_drain(self.drainer, to_drain,
                               lambda: self.planner.batch_plan(to_drain, group, self.seen) if to_drain else None,
                               group=group, cordon=not self.spec.precordon, stop_at_failed_cordon=False,
                               refuse_unsafe=True, before_drain=before_drain, timeout=self.spec.drain_timeout,
                               order=self.spec.order, grace_period=self.spec.grace_period,
                               skip_wait_for_delete_timeout=self.spec.skip_wait_for_delete_timeout)
        if run.refused:
            return "blocked", (f"batch {number} ({', '.join(todo)}) is not safe now: {run.refused} "
                               "(see the dry run; --accept-risk=CODE to go ahead anyway)"), None
        result, pods = run.result, run.plan.pods if run.plan is not None else ()
        for p in pods:
            if p.ref in result.evicted:
                self.seen.removed("pods", p.ref, p.uid)
        for n in todo:
            self._set(n, drain=NodeDrain(result.status, tuple(sorted(p for p in result.evicted if _on(pods, p, n))),
                                         tuple(a for a in result.appeared if a.node == n),
                                         tuple(p for p in result.left if p.node == n)))
        if result.requests is not None:
            self.requests = self.requests + result.requests
        if result.status is not DrainStatus.DRAINED:
            status = result.status.value
            return status, f"batch {number}: drain {status}: {result.message}", gate
        for n in to_drain:
            self.emit("drained", pod=n)
            if self.nodes[n].state in ("pending", "draining"):
                self._record(n, "drained")
        return "done", None, gate

    def _recorded_gate(self, todo, group) -> dict:
        """What earlier runs recorded for the health gate of these nodes (their annotation), merged."""
        merged = {"pdbs": [], "owners": {}}
        for n in todo:
            node = group.watch("nodes", field_selector=f"metadata.name={n}").get(f"/{n}")
            text = (((node or {}).get("metadata") or {}).get("annotations") or {}).get(ANNOTATION_GATE)
            try:
                recorded = json.loads(text) if text else {}
            except ValueError:
                recorded = {}
            merged["pdbs"] += [r for r in recorded.get("pdbs") or [] if r not in merged["pdbs"]]
            for owner, subject in (recorded.get("owners") or {}).items():
                merged["owners"].setdefault(owner, subject)
        return merged

    def _gate(self, gate, number):
        self.emit("gate", batch=number, message="health gate: " + ("; ".join(gate.problems()) or "checking"))
        deadline = self.clock() + self.spec.gate_timeout
        if gate.wait(deadline, self.interrupted, self.clock):
            self.emit("gate-passed", batch=number)
            return "done", None
        if self.interrupted.is_set():
            return "interrupted", f"interrupted during the health gate of batch {number}"
        return "gate-failed", (f"health gate of batch {number} failed after {int(self.spec.gate_timeout)}s: "
                               + "; ".join(gate.problems()))

    # -- one node --------------------------------------------------------------------------
    def _maintain(self, name, group):
        node = self.nodes[name]
        watch = group.watch("nodes", field_selector=f"metadata.name={name}")
        current = watch.get(f"/{name}")
        before = (((current or {}).get("metadata") or {}).get("annotations") or {}).get(ANNOTATION_BEFORE)
        if before is None:
            before = wait_for_value(current, self.spec.wait_for)
        if self.spec.exec_command and node.state != "maintained":
            self._record(name, "drained", before=before)
            status, message = self._exec(name)
            if status != "done":
                return status, message
            self._record(name, "maintained")
        self.emit("waiting-ready", pod=name, message=f"waiting for node/{name} to be Ready"
                  + (f" with {self.spec.wait_for} changed" if self.spec.wait_for in ("boot-id", "kubelet-version")
                     else f" with {self.spec.wait_for}" if self.spec.wait_for else ""))
        deadline = self.clock() + self.spec.ready_timeout if self.spec.ready_timeout else None
        back = group.wait_for(lambda: node_back(watch.get(f"/{name}"), self.spec.wait_for, before),
                              deadline, self.interrupted, clock=self.clock)
        if not back:
            if self.interrupted.is_set():
                return "interrupted", f"interrupted while waiting for node/{name} to come back"
            return "timeout", f"node/{name} did not come back Ready within {int(self.spec.ready_timeout)}s"
        self._set(name, ready=True)
        self.emit("ready", pod=name)
        if not self.spec.keep_cordoned:
            outcome = self.executor.cordon(name, False)
            self.drainer.evidence.cordoned(name, outcome, False)
            self.seen.written("nodes", f"/{name}", outcome.version)
            self.emit("uncordon", pod=name, message=outcome.message, result=outcome.result)
            if not outcome.done:
                return "error", f"unable to uncordon node {name!r}: {outcome.message}"
            self._set(name, uncordoned=True)
            # Then the node lifecycle controller lifts its node.kubernetes.io/unschedulable taint; till then
            # nothing schedules there, and a later batch planned meanwhile would find no room on the node.
            group.wait_for(lambda: schedulable(watch.get(f"/{name}")), self.clock() + UNTAINT_SECONDS,
                           self.interrupted, clock=self.clock)
        return "done", None

    def _exec(self, name):
        self.emit("exec", pod=name, command=self.spec.exec_command)
        started = self.clock()
        with tempfile.TemporaryFile() as log:  # its output on disk, never all of it in memory: its tail is read
            try:
                done = self._run(self.spec.exec_command, shell=True, env={**os.environ, "NODE": name},
                                 stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                 timeout=self.spec.exec_timeout or None)
                code = done.returncode
            except subprocess.TimeoutExpired:
                code = None
            output = _tail(log)
        text = output.decode("utf-8", "replace").strip()
        tail = text.splitlines()[-1][:200] if text else ""
        self._set(name, exec=NodeExec(code, round(self.clock() - started, 1), tail))
        self.emit("exec-done", pod=name, exitCode=code, message=tail)
        if self.interrupted.is_set():
            return "interrupted", f"interrupted during the maintenance of node/{name}"
        if code is None:
            return "failed", f"--exec on node/{name} did not finish within {int(self.spec.exec_timeout)}s"
        if code != 0:
            return "failed", f"--exec on node/{name} exited {code}" + (f": {tail}" if tail else "")
        return "done", None

    # -- state in the cluster --------------------------------------------------------------
    def _record(self, name, state, before=None, gate=None, surges=None):
        """``gate``: the health gate's subjects to record (False: forget them); ``surges``: the batch's."""
        annotations = {ANNOTATION_ROLLOUT: self.spec.name, ANNOTATION_STATE: state}
        if surges:
            annotations[ANNOTATION_SURGES] = json.dumps(list(surges))
            self._set(name, surges=tuple(surges))
        if before is not None:
            annotations[ANNOTATION_BEFORE] = before
        if gate is not None:
            annotations[ANNOTATION_GATE] = json.dumps(gate, sort_keys=True) if gate else None
        self._annotate(name, annotations)
        self._set(name, state=state)

    def _set(self, name, **changes):
        self.nodes[name] = replace(self.nodes[name], **changes)

    def _batch_ended(self, status, gate=None):
        self.batches[-1] = replace(self.batches[-1], status=RolloutStatus(status), gate=gate)

    def _annotate(self, name, annotations):
        outcome = self.client.patch("nodes", None, name, {"metadata": {"annotations": annotations}})
        if not outcome.raise_unanswered().done:
            raise ClusterError(f"cannot record the rollout's progress on node {name}: "
                               f"{outcome.message or outcome.status}")
        self.seen.written("nodes", f"/{name}", (outcome.body.get("metadata") or {}).get("resourceVersion"))

    def _finish(self):
        for name in self.nodes:
            self._annotate(name, {ANNOTATION_ROLLOUT: None, ANNOTATION_STATE: None, ANNOTATION_BEFORE: None,
                                  ANNOTATION_GATE: None, ANNOTATION_SURGES: None})

    def _report(self, started, status, message, resumed) -> RolloutReport:
        return RolloutReport(self.spec.name, f"{self.spec.lease_namespace}/{self.spec.name}", self.lease.holder,
                             RolloutStatus(status), message, resumed, round(self.clock() - started, 1),
                             tuple(self.batches), tuple(self.nodes.values()), self.requests)


def _on(pods, ref, node) -> bool:
    return any(p.ref == ref and p.node == node for p in pods)


def _tail(f, size=64 * 1024) -> bytes:
    """The last ``size`` bytes of the file ``f``."""
    f.seek(0, os.SEEK_END)
    f.seek(max(0, f.tell() - size))
    return f.read(size)
