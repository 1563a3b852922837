"""A surge ahead of an engine (``--engine NAME --surge``): what ``kubectl safety drain NODE --surge``, run
before the engine's window, changes in the engine's drain of each node.

The engine does not surge pods: the user runs the surge first. Its workloads are the ones the drain
planner's surge (``analysis.surge.plan_surges``) would replace before their pods go: those a PDB holds
or whose every Ready pod is on the node. The engine's drain is then planned again with them surged
first (``simulate`` of the profile with ``DrainOptions.surge``): the pods a PDB held are gone by the
time the engine comes, so a STALLS or FORCES they caused becomes what the rest of the node decides.
A surge risk (``SURGE_*``: no room for a surge pod, a quota, --surge-limit, ...) refuses the surge:
the node's outcome is then the engine's alone. An engine that deletes past PDBs (``Budgets.BYPASS``)
holds no pod on a budget for a surge to lift: only the workloads whose every Ready pod is on the node
are surged, and the node says so.
"""

from dataclasses import replace
from typing import Optional, Tuple

from kubectl_safety.analysis.profiles.base import Budgets
from kubectl_safety.analysis.profiles.outcome import Outcome, WORST, simulate
from kubectl_safety.record import record

RUN_FIRST = "kubectl safety drain NODE --surge"  # what the user runs on each node before the engine's window


@record
class SurgeAhead:
    """One node with a surge ahead of the engine: its outcome then, what the surge keeps whole and what not."""

    name: str
    outcome: Outcome
    at_seconds: Optional[int]
    reason: str
    kept_whole: Tuple[str, ...]  # the workloads surged first (Kind namespace/name)
    not_kept: Tuple[Tuple[str, str], ...]  # (pod or risk code, the surge planner's reason)
    changes: bool  # the surge changes the node's outcome


def surge_ahead(outcome, snapshot, now=None, limit=None):
    """``outcome`` (the engine's ``EngineOutcome``) with ``surge``: per node, the engine's outcome once the
    surgeable workloads were surged ahead of it (``limit``: --surge-limit)."""
    profile = outcome.profile
    surged = simulate(replace(profile, drain=replace(profile.drain, surge=True, surge_limit=limit)), snapshot,
                      [n.name for n in outcome.nodes], now)
    alone = {n.name: n for n in outcome.nodes}
    bypass = (("ENGINE_BYPASSES_PDBS", f"{profile.title} deletes pods past their PDBs: no PDB holds a pod for a "
               "surge to lift, so only workloads with every Ready pod on the node are surged; see "
               "kubectl safety drain NODE --surge --dry-run for the drain with the Eviction API"),) \
        if profile.budgets is Budgets.BYPASS else ()
    ahead = []
    for n in surged.nodes:
        engine = alone[n.name]
        used = engine if n.surge_refused or not n.surged else n
        ahead.append(SurgeAhead(n.name, used.outcome, used.at_seconds, used.reason,
                                () if n.surge_refused else n.surged, n.not_surged + bypass,
                                (used.outcome, used.at_seconds) != (engine.outcome, engine.at_seconds)))
    return replace(outcome, surge=tuple(ahead))


def verdict(ahead) -> Outcome:
    """The worst node outcome with the surge ahead."""
    return max((a.outcome for a in ahead), key=WORST.get, default=Outcome.COMPLETES)
