"""What a drain (or a rollout's batch) reads of the cluster, and the plan made of it
(``analysis/drain.plan_drain``): from LISTs, or from watches once acting (``live_view.LiveView``).

The CLI makes a ``DrainPlanner`` of its flags; the engine plans with it again once the nodes are
cordoned (``drain.drain_nodes``, ``rollout.Rollout``). Warnings go out through ``on_warning``.
"""

from kubectl_safety.errors import NotFoundError


class DrainPlanner:
    """The reads and the plan of one drain: ``connect()`` gives the connection, ``offline()`` the
    snapshot of --snapshot files instead (None: live), ``now()`` the time to plan at (None: the
    snapshot's), ``warnings`` the list the reads add warnings to, each passed to ``on_warning`` and
    cleared; ``missing_hint(name)``: what to add to a missing node's error."""

    def __init__(self, options, nodes, node_selector, *, connect, offline=None, now=lambda: None, chunk_size=500,
                 selector_text=None, warnings=None, on_warning=None, missing_hint=lambda name: "", engine=False):
        self.options = options
        self.nodes = list(nodes)
        self.node_selector = node_selector
        self.selector_text = selector_text
        self.chunk_size = chunk_size
        self.connect, self.offline, self.now = connect, offline, now
        self.warnings = warnings if warnings is not None else []
        self.on_warning = on_warning
        self.missing_hint = missing_hint
        self.engine = engine  # --engine: the upgrade engines' objects are read too
        self.view = None  # LiveView once acting: plans from watches

    def shared_queries(self) -> list:
        """What every plan reads whatever its nodes: the whole cluster for the capacity check, else
        the PDBs and DaemonSets."""
        from kubectl_safety.cluster.scopes import cluster_scope, drain_scope, engine_scope, surge_scope

        queries = cluster_scope() if self.options.check_capacity else drain_scope([])
        queries += engine_scope() if self.engine else []
        return queries + surge_scope(self.options.check_capacity) if self.options.surge else queries

    def node_queries(self, names) -> list:
        """What a plan of these nodes reads besides (node-scoped reads: cost independent of the cluster's size)."""
        from kubectl_safety.cluster.scopes import node_queries

        return [] if self.options.check_capacity else node_queries(names)

    def watch(self):
        """From now on the shared reads are LIST once + WATCH (engine/live_view.py): a re-plan costs
        no request. The view's watches end with ``self.view.stop()``."""
        from kubectl_safety.engine.live_view import LiveView

        self.view = LiveView(self.connect(), self.shared_queries(), warnings=self.warnings)
        return self.view

    def snapshot(self, group=None, cordoned=(), seen=None):
        """The cluster as the plan needs it; with a view, from its watches (``group``: the batch's
        watches for its nodes; ``cordoned``: nodes whose cordon the snapshot must show; ``seen``: what
        the command wrote or watched, which it must show too)."""
        from kubectl_safety.cluster.source import load_snapshot

        if self.offline is not None:
            return self.offline()
        connection = self.connect()
        names = self.nodes
        if self.node_selector is not None and not self.options.check_capacity:
            listing = connection.list("nodes", label_selector=self.selector_text, chunk_size=self.chunk_size or None)
            names = sorted(n["metadata"]["name"] for n in listing["items"])
        if self.view is not None:
            snap = self.view.snapshot(self.now(), self.node_queries(names), group, cordoned, seen)
        else:
            snap = load_snapshot(connection=connection, queries=self.node_queries(names) + self.shared_queries(),
                                 now=self.now(), chunk_size=self.chunk_size or None, warnings=self.warnings)
        for line in self.warnings:
            if self.on_warning is not None:
                self.on_warning(line)
        self.warnings.clear()
        return snap

    def plan(self, group=None, cordoned=()):
        """``(snapshot, DrainPlan)`` of the nodes (``-l`` resolved on the first plan)."""
        from kubectl_safety.analysis.drain import plan_drain

        snap = self.snapshot(group, cordoned)
        if self.node_selector is not None:
            from kubectl_safety.model.selectors import matching_nodes

            self.nodes = matching_nodes(self.node_selector, snap.nodes, self.selector_text)
            self.node_selector = None  # the nodes are known now: re-plans keep them
        missing = [n for n in self.nodes if snap.node(n) is None]
        if missing:
            raise NotFoundError(f'node "{missing[0]}" not found{self.missing_hint(missing[0])}')
        return snap, plan_drain(snap, self.nodes, self.options, snap.taken_at)

    def replan(self, group):
        """The plan of the drain's nodes once cordoned: from the view's watches (and ``group``'s) when
        watching, else read again."""
        return self.plan(group if self.view is not None else None, self.nodes)[1]

    def batch_plan(self, batch, group, seen):
        """A rollout batch's plan once its nodes are cordoned: from the view's watches, the batch's nodes
        watched in ``group``; ``seen``: what the rollout wrote and watched, which the plan must show."""
        from kubectl_safety.analysis.drain import plan_drain

        self.nodes, self.node_selector = list(batch), None
        fresh = self.snapshot(group, cordoned=batch, seen=seen)
        return plan_drain(fresh, batch, self.options, fresh.taken_at)
