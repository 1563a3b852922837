"""What ``drain`` and ``rollout`` read of the cluster to plan a drain, and the plan made of it."""

import click

from kubectl_safety.cli.render import warn
from kubectl_safety.errors import NotFoundError


class DrainReads:
    """What a drain (or a rollout's batch) reads, and its plan: from LISTs, or from watches once acting."""

    def __init__(self, session, options, nodes, node_selector, chunk_size, selector_text=None):
        self.s = session
        self.selector_text = selector_text
        self.options = options
        self.nodes = list(nodes)
        self.node_selector = node_selector
        self.chunk_size = chunk_size
        self.view = None  # LiveView once acting: plans from watches

    def shared_queries(self) -> list:
        """What every plan reads whatever its nodes: the whole cluster for the capacity check, else
        the PDBs and DaemonSets."""
        from kubectl_safety.cluster.scopes import cluster_scope, drain_scope, surge_scope

        queries = cluster_scope() if self.options.check_capacity else drain_scope([])
        return queries + surge_scope(self.options.check_capacity) if self.options.surge else queries

    def node_queries(self, names) -> list:
        """What a plan of these nodes reads besides (node-scoped reads: cost independent of the cluster's size)."""
        from kubectl_safety.cluster.scopes import node_queries

        return [] if self.options.check_capacity else node_queries(names)

    def watch(self):
        """From now on the shared reads are LIST once + WATCH (engine/live_view.py): a re-plan costs
        no request. The view's watches end with ``self.view.stop()``."""
        from kubectl_safety.engine.live_view import LiveView

        self.view = LiveView(self.s.connection("drain"), self.shared_queries(), warnings=self.s.g.warnings)
        return self.view

    def snapshot(self, group=None, cordoned=(), seen=None):
        """The cluster as the plan needs it; with a view, from its watches (``group``: the batch's
        watches for its nodes; ``cordoned``: nodes whose cordon the snapshot must show; ``seen``: what
        the command wrote or watched, which it must show too)."""
        from kubectl_safety.cluster.source import load_snapshot

        if self.s.offline:
            return self.s.snapshot((), "drain")
        warnings = self.s.g.warnings
        connection = self.s.connection("drain")
        names = self.nodes
        if self.node_selector is not None and not self.options.check_capacity:
            listing = connection.list("nodes", label_selector=self.selector_text, chunk_size=self.chunk_size or None)
            names = sorted(n["metadata"]["name"] for n in listing["items"])
        if self.view is not None:
            snap = self.view.snapshot(self.s.now(), self.node_queries(names), group, cordoned, seen)
        else:
            snap = load_snapshot(connection=connection, queries=self.node_queries(names) + self.shared_queries(),
                                 now=self.s.now(), chunk_size=self.chunk_size or None, warnings=warnings)
        for line in warnings:
            warn(line)
        warnings.clear()
        return snap

    def plan(self, group=None, cordoned=()):
        from kubectl_safety.analysis.drain import plan_drain

        snap = self.snapshot(group, cordoned)
        if self.node_selector is not None:
            from kubectl_safety.model.selectors import matching_nodes

            self.nodes = matching_nodes(self.node_selector, snap.nodes, self.selector_text)
            self.node_selector = None  # the nodes are known now: re-plans keep them
        missing = [n for n in self.nodes if snap.node(n) is None]
        if missing:
            hint = (" (--dry-run takes none, client or server)"
                    if missing[0] == click.get_current_context().meta.get("node_after_dry_run") else "")
            raise NotFoundError(f'node "{missing[0]}" not found{hint}')
        return snap, plan_drain(snap, self.nodes, self.options, snap.taken_at)
