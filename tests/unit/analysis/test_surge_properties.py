"""--surge and the budgets it shares, property by property.

Generated clusters: three ample nodes, two to four workloads (Deployments, a bare ReplicaSet, a
StatefulSet) of 1-3 replicas spread over them, some pods not Ready, and one PDB over all of them
(maxUnavailable 0-2 or a minAvailable) whose status is what the disruption controller would write.
The first node is drained with and without ``--surge``.

Properties: a surged pod goes in wave 1 and carries none of its budget's wave reasons; every other
pod gets the action and wave it gets when the surged workloads stay where they are (``--pod-selector``
leaves them out): the surge pods replace the surged ones in the budget's healthy count, so they take no
slot; and nothing the plan without ``--surge`` lets go is blocked or delayed by it.
"""

from hypothesis import given
from hypothesis import strategies as st

from kubectl_safety.analysis.drain import DrainOptions, plan_drain
from kubectl_safety.model.selectors import LabelSelector
from tests.builders import NOW, make_node, make_pdb, make_pod, make_workload, snapshot
from tests.unit.analysis.test_plan_agreement import AGREE

FRONT = {"tier": "front"}
NODES = ["n1", "n2", "n3"]
KINDS = {"api": "Deployment", "web": "Deployment", "cache": "ReplicaSet", "db": "StatefulSet"}
WAVE_REASONS = {"PDB_ALLOWS", "PDB_WAIT", "PDB_NOT_HEALTHY", "PDB_EXHAUSTED", "PDB_NEVER_ALLOWS"}


def workload(kind, name, replicas, ready):
    labels = {**FRONT, "app": name}
    w = make_workload(kind, name, replicas=replicas, labels=labels)
    w["metadata"]["generation"] = 1
    w["status"] = {"observedGeneration": 1, "replicas": replicas, "updatedReplicas": replicas,
                   "readyReplicas": ready}
    if kind != "Deployment":
        return [w], (kind, name)
    rs = make_workload("ReplicaSet", f"{name}-rs", replicas=replicas, labels=labels, owner=("Deployment", name))
    rs["status"] = {"replicas": replicas, "readyReplicas": ready}
    return [w, rs], ("ReplicaSet", f"{name}-rs")


@st.composite
def shared_budget(draw):
    """The objects of a cluster whose workloads share one PDB."""
    objects = [make_node(n) for n in NODES]
    healthy = expected = 0
    for name in draw(st.lists(st.sampled_from(sorted(KINDS)), min_size=2, max_size=4, unique=True)):
        replicas = draw(st.integers(1, 3))
        where = [draw(st.sampled_from(NODES)) for _ in range(replicas)]
        ready = [draw(st.integers(0, 5)) > 0 for _ in range(replicas)]
        made, owner = workload(KINDS[name], name, replicas, sum(ready))
        objects += made
        objects += [make_pod(f"{name}-{i}", node=node, labels={**FRONT, "app": name}, cpu="100m", owner=owner,
                             ready=r) for i, (node, r) in enumerate(zip(where, ready))]
        healthy, expected = healthy + sum(ready), expected + replicas
    rule = draw(st.sampled_from(["max0", "max1", "max2", "min-all", "min-all-but-one"]))
    if rule.startswith("max"):
        kw = {"max_unavailable": int(rule[3])}
        desired = max(0, expected - kw["max_unavailable"])
    else:
        desired = expected - (rule == "min-all-but-one")
        kw = {"min_available": desired}
    objects.append(make_pdb("front", selector=FRONT, allowed=max(0, healthy - desired), healthy=healthy,
                            desired=desired, expected=expected, **kw))
    return objects


def actions(plan, names=None) -> dict:
    return {p.name: (p.action.value, p.wave) for p in plan.pods if names is None or p.name in names}


@AGREE
@given(objects=shared_budget())
def test_surged_pods_take_no_slot_of_the_budget_they_share(objects):
    snap = snapshot(*objects)
    plain = plan_drain(snap, ["n1"], DrainOptions(), NOW)
    surged = plan_drain(snap, ["n1"], DrainOptions(surge=True), NOW)
    moved = {w.name for w in surged.surge.surges}
    for p in surged.pods:
        if p.has("SURGE"):
            assert p.wave == 1 and not WAVE_REASONS & {r.code for r in p.reasons}, p
    others = {p.name for p in surged.pods if not p.name.startswith(tuple(f"{m}-" for m in moved))}
    if moved:
        staying = LabelSelector.from_string(f"app notin ({','.join(sorted(moved))})")
        without = plan_drain(snap, ["n1"], DrainOptions(pod_selector=staying), NOW)
        assert actions(surged, others) == actions(without), (moved, actions(surged))
    before, after = actions(plain, others), actions(surged, others)
    for name, (action, wave) in before.items():
        if action != "blocked":
            assert after[name][0] != "blocked", (name, before, after)
        if wave is not None and after[name][1] is not None:
            assert after[name][1] <= wave, (name, before, after)


def test_the_generated_clusters_surge_beside_pods_that_spend_the_same_budget():
    """Not vacuous: examples surge a workload while another's pods wait in a later wave of the
    shared budget, and the surge brings some pod's wave forward."""
    seen = set()

    @AGREE
    @given(objects=shared_budget())
    def collect(objects):
        snap = snapshot(*objects)
        plain = actions(plan_drain(snap, ["n1"], DrainOptions(), NOW))
        surged = plan_drain(snap, ["n1"], DrainOptions(surge=True), NOW)
        if surged.surge.surges:
            seen.add("surged")
            rest = [p for p in surged.pods if not p.has("SURGE")]
            if any(p.wave and p.wave > 1 for p in rest):
                seen.add("later wave beside a surge")
            if any(p.wave and plain[p.name][1] and p.wave < plain[p.name][1] for p in rest):
                seen.add("wave brought forward")
            if any(p.action.value == "blocked" for p in rest):
                seen.add("blocked beside a surge")

    collect()
    assert seen == {"surged", "later wave beside a surge", "wave brought forward", "blocked beside a surge"}, seen
