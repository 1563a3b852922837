"""Rebalance rounds: evict a round's pods with the drainer (each once, by UID, retried when its PDB
allows), and with ``wait`` watch until they are gone and their workloads are whole and Ready again
(the health gate), then measure again and plan the next round.

Plan in (a RebalancePlan and a ``measure(evicted_so_far)`` giving a fresh ``(snapshot, plan)``),
a ``RebalanceExecution`` out; progress through ``on_event`` (``round``, ``settling``, ``measured`` and
the drainer's). ``server_dry_run`` sends a plan's first round with dryRun=All instead.
"""

import time
from dataclasses import replace

from kubectl_safety.analysis.plans.common import Action, ObjectRef, Risk, RiskCode
from kubectl_safety.analysis.plans.drain import PodAction, ServerDryRun
from kubectl_safety.analysis.plans.rebalance import RebalancePlan
from kubectl_safety.cluster.client import Result
from kubectl_safety.cluster.executor import Executor
from kubectl_safety.engine.drain import SERVER_DRY_RUN_WAIT, server_answer
from kubectl_safety.engine.drain_report import DrainStatus
from kubectl_safety.engine.drainer import Drainer, raw_pod
from kubectl_safety.engine.health import HealthGate
from kubectl_safety.engine.rebalance_report import EvictionResult, RebalanceExecution, RebalanceRound
from kubectl_safety.engine.watch import WatchGroup


def first_round(plan) -> tuple:
    """The evictions of the plan's first round (the next one the PDBs allow)."""
    return plan.first_round()


def drain_entries(snap, batch) -> list:
    """The round's evictions as the drainer's ``PodAction``s (UID, node, PDB from the snapshot)."""
    entries = []
    for e in batch:
        pod = snap.pod(e.namespace, e.name)
        pdbs = snap.pdbs_for(pod) if pod is not None else []
        entries.append(PodAction(e.namespace, e.name, e.node, pod.uid if pod is not None else "", 0,
                                 Action.EVICT, (), f"{pdbs[0].namespace}/{pdbs[0].name}" if len(pdbs) == 1 else None,
                                 1, None, None))
    return entries


class Rebalancer:
    """Runs a rebalance's rounds on the live cluster."""

    def __init__(self, connection, *, on_event=None, clock=time.monotonic):
        self.connection = connection
        self.drainer = Drainer(connection, on_event=on_event, clock=clock)
        self.executor = self.drainer.executor
        self.interrupted = self.executor.interrupted
        self.clock = clock

    def run(self, snap, plan, *, measure, wait, max_rounds, deadline) -> RebalanceExecution:
        """Evict round by round; with ``wait`` settle, measure again and go on while still violated."""
        rounds, current = [], plan
        for number in range(1, max_rounds + 1):
            batch = first_round(current)
            if not batch or self.interrupted.is_set():
                break
            self.drainer.emit("round", round=number, pods=len(batch))
            results, settled = self._round(snap, batch, wait, deadline)
            rounds.append(RebalanceRound(number, results))
            if not wait or not any(e.went for e in results) or not settled or self.interrupted.is_set():
                break
            snap, current = measure(sum(len(r.evictions) for r in rounds))
            self.drainer.emit("measured", round=number, plan=current)
            if current.summary.violated == 0:
                break
        return RebalanceExecution(tuple(rounds), wait, self.interrupted.is_set(), plan.constraints, current)

    def _round(self, snap, batch, wait, deadline):
        entries = drain_entries(snap, batch)
        with WatchGroup(self.connection) as group:
            gate = HealthGate(group, entries) if wait else None
            result = self.drainer.drain(sorted({e.node for e in entries}), entries, deadline=deadline, watches=group)
            outcomes = {o.target: o for o in result.outcomes}
            results = []
            for e in batch:
                ref = f"{e.namespace}/{e.name}"
                o = outcomes.get(ref)
                status = o.status if o is not None else None
                if ref in result.evicted or ref in result.gone:
                    results.append(EvictionResult(e, "done" if ref in result.evicted else "gone", status,
                                                  (o.message if o is not None else "") or ""))
                else:
                    left = next((x for x in result.left if (x.namespace, x.name) == (e.namespace, e.name)), None)
                    reason = left.reason if left is not None else ""
                    results.append(EvictionResult(e, "skipped" if result.status is DrainStatus.INTERRUPTED else
                                                  (reason or result.status.value).split(":")[0], status, reason))
            results = tuple(results)
            went = [r for r in results if r.went]
            if not wait or not went or result.status is not DrainStatus.DRAINED:
                return results, False
            self.drainer.emit("settling", pods=len(went))
            return results, gate.wait(deadline, self.interrupted, self.clock)


def server_dry_run(connection, snap, plan, *, accepted=frozenset(), timeout=None, on_event=None,
                   interrupts=None) -> RebalancePlan:
    """``plan`` with the server's answer to each eviction of its first round (what the PDBs allow now),
    sent with dryRun=All and retried within a bound; later rounds wait for replacements and are not
    sent. A refusal is a SERVER_REFUSED risk with the server's answer: the plan is not safe unless it is
    in ``accepted`` (risk codes). ``interrupts(executor)``: a context manager around the requests."""
    from contextlib import nullcontext

    executor = Executor(connection, dry_run_server=True, on_event=on_event)
    deadline = time.monotonic() + (min(timeout, SERVER_DRY_RUN_WAIT) if timeout else SERVER_DRY_RUN_WAIT)
    batch = first_round(plan)
    answered, risks = {}, []
    with interrupts(executor) if interrupts else nullcontext():
        for e, entry in zip(batch, drain_entries(snap, batch)):
            outcome = executor.evict_with_retry(raw_pod(entry), deadline, retry_delay=2.0)
            answered[id(e)] = replace(e, server_dry_run=outcome)
            if outcome.result not in (Result.DONE, Result.GONE):
                risks.append(Risk(RiskCode.SERVER_REFUSED, server_answer("eviction", outcome),
                                  (ObjectRef("Pod", e.namespace or "", e.name),), "SERVER_REFUSED" in accepted))
    return replace(plan, evictions=tuple(answered.get(id(e), e) for e in plan.evictions),
                   risks=plan.risks + tuple(risks), safe=plan.safe and all(r.accepted for r in risks),
                   server_dry_run=ServerDryRun(len(batch), len(risks)))
