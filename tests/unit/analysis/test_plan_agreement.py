"""Check and rollout against the per-node drain plan, property by property.

``check`` plans every node alone, sharing one planning state across nodes and skipping the
placements when its room proof shows they all fit; ``rollout`` plans each batch on the cluster
as that batch meets it. Both must give, for the same nodes and flags, the verdict and the risks a
fresh ``plan_drain`` gives (what ``drain NODE --dry-run`` prints).

Generated clusters: 2-6 nodes in two zones (some cordoned, tainted, NotReady, small), pods of
ReplicaSets, StatefulSets and DaemonSets and bare pods (requests, emptyDir, host ports, spreads,
required anti-affinity, a toleration of the cordon, terminating or finished, Pending), PDBs
that allow some, none or never; drain flags of every combination. Seeded, bounded examples
(``KUBECTL_SAFETY_FUZZ_EXAMPLES``, ``KUBECTL_SAFETY_FUZZ_RANDOM`` as for the differential properties).
"""

import os
from dataclasses import replace

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubectl_safety.analysis.check import CheckOptions, check
from kubectl_safety.analysis.drain import DrainOptions, plan_drain
from kubectl_safety.analysis.rollout_plan import RolloutOptions, plan_rollout
from kubectl_safety.analysis.scheduling.replacement import cordoned, uncordoned
from tests.builders import NOW, make_node, make_pdb, make_pod, make_workload, snapshot

EXAMPLES = int(os.environ.get("KUBECTL_SAFETY_FUZZ_EXAMPLES") or 150)  # scripts/fuzz-fidelity raises it
AGREE = settings(max_examples=EXAMPLES, deadline=None, derandomize=not os.environ.get("KUBECTL_SAFETY_FUZZ_RANDOM"),
                 database=None,
                 suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
APPS = ["web", "db", "cache"]
ZONE = "topology.kubernetes.io/zone"
CORDON = {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"}


@st.composite
def cluster(draw):
    """(objects, node names)."""
    names = [f"n{i}" for i in range(draw(st.integers(2, 6)))]
    objects = []
    for name in names:
        kind = draw(st.sampled_from(["plain"] * 5 + ["small", "cordoned", "tainted", "not-ready"]))
        objects.append(make_node(name, zone=draw(st.sampled_from(["a", "b"])),
                                 cpu="1" if kind == "small" else "4", unschedulable=kind == "cordoned",
                                 taints=[{"key": "dedicated", "effect": "NoSchedule"}] if kind == "tainted" else None,
                                 ready="False" if kind == "not-ready" else "True"))
    owners = {"web": ("ReplicaSet", "web"), "db": ("StatefulSet", "db"), "cache": ("ReplicaSet", "cache")}
    objects += [make_workload("ReplicaSet", "web", replicas=3, labels={"app": "web"}),
                make_workload("StatefulSet", "db", replicas=2, labels={"app": "db"}),
                make_workload("ReplicaSet", "cache", replicas=2, labels={"app": "cache"}),
                make_workload("DaemonSet", "agent", labels={"app": "agent"})]
    for name in names:
        if draw(st.booleans()):
            objects.append(make_pod(f"agent-{name}", node=name, cpu="50m", labels={"app": "agent"},
                                    owner=("DaemonSet", "agent")))
    for i in range(draw(st.integers(1, 9))):
        app = draw(st.sampled_from(APPS + ["bare"]))
        spec, meta, status = {}, {}, None
        if draw(st.integers(0, 4)) == 0:
            spec["volumes"] = [{"name": "scratch", "emptyDir": {}}]
        if draw(st.integers(0, 5)) == 0:
            spec["topologySpreadConstraints"] = [{"maxSkew": 1, "topologyKey": ZONE, "labelSelector": {
                "matchLabels": {"app": app}}, "whenUnsatisfiable": draw(st.sampled_from(["DoNotSchedule",
                                                                                         "ScheduleAnyway"]))}]
        if draw(st.integers(0, 6)) == 0:
            spec["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app": app}}, "topologyKey": "kubernetes.io/hostname"}]}}
        if draw(st.integers(0, 6)) == 0:
            spec["tolerations"] = [dict(CORDON)]
        if draw(st.integers(0, 7)) == 0:
            spec["containers"] = [{"name": "c", "image": "x", "ports": [{"containerPort": 80, "hostPort": 8080}],
                                   "resources": {"requests": {"cpu": "100m"}}}]
        state = draw(st.sampled_from(["running"] * 8 + ["terminating", "finished", "pending"]))
        if state == "terminating":
            meta = {"deletionTimestamp": "2026-11-22T08:59:00Z", "deletionGracePeriodSeconds": 30}
        objects.append(make_pod(f"{app}-{i}", node=None if state == "pending" else draw(st.sampled_from(names)),
                                cpu=draw(st.sampled_from(["100m", "500m", "1500m"])), labels={"app": app},
                                owner=owners.get(app), meta=meta or None, status=status,
                                phase={"finished": "Succeeded", "pending": "Pending"}.get(state, "Running"),
                                ready=draw(st.integers(0, 5)) > 0, **spec))
    for app in draw(st.sets(st.sampled_from(APPS))):
        kind = draw(st.sampled_from(["allows", "allows-none", "never"]))
        objects.append(make_pdb(app, selector={"app": app}, max_unavailable=0 if kind == "never" else 1,
                                allowed={"allows": 1, "allows-none": 0, "never": 0}[kind], healthy=2, desired=2,
                                expected=2))
    return objects, names


@st.composite
def drain_options(draw):
    return DrainOptions(ignore_daemonsets=draw(st.booleans()), delete_emptydir_data=draw(st.booleans()),
                        force=draw(st.booleans()), disable_eviction=draw(st.integers(0, 4)) == 0,
                        accept_risks=draw(st.sampled_from([frozenset(), frozenset({"REPLACEMENT_UNPLACEABLE"})])))


def verdict(plan) -> tuple:
    """What a drain plan concludes: SAFE or not, and each risk (code, accepted, objects)."""
    return plan.safe, sorted((r.code.value, r.accepted, tuple((o.kind, o.namespace, o.name) for o in r.objects))
                             for r in plan.risks)


def field(entry, name):
    """A plan entry's field, whether the entry is a mapping or a typed object."""
    return entry[name] if isinstance(entry, dict) else getattr(entry, name)


@AGREE
@given(case=cluster(), options=drain_options())
def test_check_agrees_with_each_nodes_drain_plan(case, options):
    """Each node's ``drainable`` and risks in ``check`` are ``drain NODE --dry-run``'s."""
    objects, names = case
    snap = snapshot(*objects)
    report = check(snap, CheckOptions(drain=options), NOW)
    for entry in field(report, "nodes"):
        plan = plan_drain(snap, [field(entry, "name")], options, NOW)
        risks = sorted((r.code.value, r.accepted, tuple((o.kind, o.namespace, o.name) for o in r.objects))
                       for r in field(entry, "risks"))
        assert (field(entry, "drainable"), risks) == verdict(plan), field(entry, "name")


def state_for(objects, batches, index, precordon):
    """The cluster as batch ``index`` meets it, built here from the objects: the nodes of earlier
    batches uncordoned (maintained), those of later batches cordoned when pre-cordoning."""
    earlier = {n for b in batches[:index] for n in b}
    later = {n for b in batches[index + 1:] for n in b}
    snap = snapshot(*objects)
    nodes = [uncordoned(n) if n.name in earlier else cordoned(n) if n.name in later and precordon else n
             for n in snap.nodes]
    return snap.replace(nodes=nodes)


@AGREE
@given(case=cluster(), options=drain_options(), size=st.sampled_from(["1", "2", "50%"]), precordon=st.booleans(),
       by_zone=st.booleans())
def test_rollout_batches_agree_with_their_drain_plans(case, options, size, precordon, by_zone):
    """Each batch's ``safe`` and risks in ``rollout`` are ``drain BATCH --dry-run``'s on the cluster
    as the batch meets it; the rollout is SAFE only when every batch is."""
    objects, names = case
    snap = snapshot(*objects)
    report = plan_rollout(snap, names, RolloutOptions(drain=options, max_unavailable=size, precordon=precordon,
                                                      by_zone=by_zone), NOW)
    batches = [list(field(b, "nodes")) for b in field(report, "batches")]
    assert sorted(n for b in batches for n in b) == sorted(names)
    for i, batch in enumerate(field(report, "batches")):
        plan = plan_drain(state_for(objects, batches, i, precordon), batches[i], options, NOW)
        assert (field(batch, "safe"), verdict(field(batch, "drain"))[1]) == verdict(plan), batches[i]
    assert field(report, "safe") == all(field(b, "safe") for b in field(report, "batches"))


def test_the_generated_clusters_reach_both_verdicts():
    """The generator is not vacuous: seeded examples give SAFE and not SAFE nodes, placed
    replacements and unplaceable ones."""
    seen = set()

    @AGREE
    @given(case=cluster(), options=drain_options())
    def collect(case, options):
        objects, names = case
        snap = snapshot(*objects)
        for name in names:
            plan = plan_drain(snap, [name], replace(options, accept_risks=frozenset()), NOW)
            seen.add("safe" if plan.safe else "unsafe")
            seen.update(r.code.value for r in plan.risks)

    collect()
    assert {"safe", "unsafe", "REPLACEMENT_UNPLACEABLE", "POD_NOT_EVICTABLE"} <= seen, seen
