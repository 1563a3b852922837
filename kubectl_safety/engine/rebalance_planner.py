"""What a rebalance reads of the cluster and the plan made of it (``analysis/rebalance.plan_rebalance``):
before the first round and, with --wait, again after each round (``rebalancer.Rebalancer``'s ``measure``)."""

import dataclasses

from kubectl_safety.errors import NotFoundError


class RebalancePlanner:
    """The reads and plans of one rebalance: ``read(queries)`` gives the snapshot (the session's: live,
    of ``queries``, or its --snapshot files); ``scope``: ``namespace`` (None: all), ``workload`` ((kind,
    name) or None) and ``selector`` (text or None); ``options``: the ``RebalanceOptions``."""

    def __init__(self, read, scope, options):
        self.read, self.scope, self.options = read, scope, options

    def plan(self, evicted=0):
        """``(snapshot, RebalancePlan)`` of the workloads in scope, measured now; ``evicted``: the
        evictions earlier rounds made, which --max-evictions counts (the cap holds across rounds)."""
        from kubectl_safety.analysis.plans.rebalance import RebalanceScope
        from kubectl_safety.analysis.rebalance import find_workloads, plan_rebalance
        from kubectl_safety.cluster.scopes import cluster_scope
        from kubectl_safety.model.selectors import LabelSelector

        options, scope = self.options, self.scope
        if options.max_evictions is not None and evicted:
            options = dataclasses.replace(options, max_evictions=max(0, options.max_evictions - evicted))
        snap = self.read(cluster_scope())
        if scope["workload"]:
            kind, name = scope["workload"]
            found = snap.workload(kind, scope["namespace"], name)
            if found is None:
                raise NotFoundError(f'{kind.lower()} "{name}" not found in namespace "{scope["namespace"]}"')
            workloads = [found]
        else:
            selector = LabelSelector.from_string(scope["selector"]) if scope["selector"] else None
            workloads = find_workloads(snap, scope["namespace"], selector)
        plan = plan_rebalance(snap, workloads, options, snap.taken_at)
        return snap, dataclasses.replace(plan, scope=RebalanceScope(
            scope["namespace"], scope["selector"], "/".join(scope["workload"]) if scope["workload"] else None))
