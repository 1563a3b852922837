"""The ``DrainPlanner`` (``engine/drain_planner.py``) of a ``drain`` or ``rollout`` command: its session's
connection, --snapshot files, clock and warnings."""

import click

from kubectl_safety.cli.render import warn


def drain_planner(s, options, nodes, node_selector, chunk_size, selector_text=None):
    """The reads and plans of a drain of ``nodes`` (or of the nodes ``node_selector`` matches) in session ``s``."""
    from kubectl_safety.engine.drain_planner import DrainPlanner

    def hint(name):  # `drain --dry-run NODE`: the node was taken for --dry-run's value
        if name == click.get_current_context().meta.get("node_after_dry_run"):
            return " (--dry-run takes none, client or server)"
        return ""

    return DrainPlanner(options, nodes, node_selector, connect=lambda: s.connection("drain"),
                        offline=(lambda: s.snapshot((), "drain")) if s.offline else None, now=s.now,
                        chunk_size=chunk_size, selector_text=selector_text, warnings=s.g.warnings,
                        on_warning=warn, missing_hint=hint,
                        engine=bool(click.get_current_context().params.get("engine")))
