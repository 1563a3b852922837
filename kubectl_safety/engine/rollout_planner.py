"""What a rollout reads of the cluster and the plan made of it: the pool (its nodes, or the nodes its
``-l`` matches), the state earlier runs recorded on them, and the ``RolloutPlan`` with its gates
(``analysis/rollout_plan.plan_rollout``, ``analysis/rollout_gates.plan_gates``).

The reads are the ``DrainPlanner``'s (``engine/drain_planner.py``), which each batch plans again with
once cordoned."""

import hashlib
from dataclasses import replace

from kubectl_safety.errors import NotFoundError
from kubectl_safety.record import record


def rollout_name(pool) -> str:
    """The rollout's identity (its Lease's name): the same pool gives the same name, so a re-run resumes."""
    digest = hashlib.sha256("\n".join(sorted(pool)).encode()).hexdigest()[:10]
    return f"kubectl-safety-rollout-{digest}"


@record(slots=False)
class PlannedRollout:
    """A rollout's plan and what it was made of: ``states`` {node: its recorded step (None: none)} and
    ``surges`` {node: the surges recorded on it} of the nodes earlier runs of ``name`` touched."""

    snapshot: object
    pool: list
    name: str
    states: dict
    surges: dict
    plan: object  # RolloutPlan


class RolloutPlanner:
    """The reads and the plan of one rollout over ``nodes`` (or the nodes ``node_selector`` matches),
    read through ``drains`` (a ``DrainPlanner``)."""

    def __init__(self, drains, nodes, node_selector=None, selector_text=None):
        self.drains = drains
        self.nodes, self.node_selector, self.selector_text = list(nodes), node_selector, selector_text

    def pool(self):
        """``(snapshot, pool)``: the cluster as read now and the pool's node names (``-l`` resolved)."""
        from kubectl_safety.model.selectors import matching_nodes

        snap = self.drains.snapshot()
        if self.node_selector is not None:
            pool = matching_nodes(self.node_selector, snap.nodes, self.selector_text)
        else:
            pool = list(self.nodes)
        missing = [n for n in pool if snap.node(n) is None]
        if missing:
            raise NotFoundError(f'node "{missing[0]}" not found')
        return snap, pool

    def plan(self, snap, pool, options, gates=None) -> PlannedRollout:
        """The plan of ``pool`` in ``snap`` with ``options`` (a ``RolloutOptions``; the nodes this rollout
        already finished are read from the cluster) and, when ``gates`` (``plan_gates``' keyword
        arguments but ``estimates``) is given, its gates at the planner's time."""
        from kubectl_safety.analysis.rollout_plan import plan_rollout
        from kubectl_safety.engine.rollout import recorded

        name = rollout_name(pool)
        states, surges = recorded({n: snap.node(n).raw for n in pool}, name)
        done = frozenset(n for n, st in states.items() if st == "done")
        plan = replace(plan_rollout(snap, pool, replace(options, done=done), snap.taken_at), rollout=name)
        if gates is not None:
            plan = replace(plan, gates=self._gates(snap, pool, plan, gates))
        return PlannedRollout(snap, pool, name, states, surges, plan)

    def _gates(self, snap, pool, plan, gates):
        from datetime import datetime, timezone

        from kubectl_safety.analysis.rollout_gates import plan_gates

        now = self.drains.now() or datetime.now(timezone.utc)
        return plan_gates(snap, pool, now, **gates, estimates=[b.estimated_seconds for b in plan.batches])
