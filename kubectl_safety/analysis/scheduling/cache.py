"""Where the scheduling analysis keeps what it computes once: per snapshot, the snapshot's own
``planning`` scratch dict (it goes with the snapshot; threads planning on different snapshots share
nothing); per pod, values derived from the Pod alone, kept on it like its ``cached`` properties (a pure
value: two threads at worst compute it twice)."""

_PLANNING = "scheduling"  # the scheduling analysis' entry in ``snapshot.planning``


def planning_cache(snapshot) -> dict:
    """This package's entry in ``snapshot.planning``: node states, PreFilter states, label indexes."""
    planning = snapshot.planning
    entry = planning.get(_PLANNING)
    if entry is None:
        entry = planning.setdefault(_PLANNING, {"states": {}, "pre": {}, "anti": None, "parent": None})
    return entry
