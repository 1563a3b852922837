"""Preemption against upstream: ``preemption.preview`` versus DefaultPreemption's own Evaluator
(eligibility, SelectVictimsOnNode on every potential node with its PDB violation counting, and
SelectCandidate) after the cycle's Filter stage with nominated pods.

Small nodes filled with pods of five priorities, one negative (running, terminating, terminal and
kept by a finalizer after their preemption, some with
host ports, required pod (anti-)affinity, or the nasty containers of ``strategies.pod``) and
pending pods nominated to a node; a preemptor of a class
(admitted by upstream's Priority admission, ``preemptionPolicy: Never`` included) that is often
too big for any node, sometimes already nominated, with tolerations, node and pod affinity or
spread constraints; PDBs of every shape over the pods, some with ``disruptedPods``.

Pods that are equally important (same priority and start time) are ordered by name, and the
oracle receives the pods in that order (docs/deviations.md, "Equally important victims").
"""

from hypothesis import Phase, find, given, settings
from hypothesis import strategies as st

from kubectl_safety.model.pods import Pod
from tests.builders import NOW, snapshot
from tests.published import preview
from tests.differential import strategies as gen
from tests.differential.conftest import PROPERTY, count, tally
from tests.differential.test_scheduler_properties import (APPS, NAMESPACES, init_ports, make, node,
                                                          pod_affinity, rarely, scheduler_view, spread)

PRIORITIES = [0, 10, 100, 1000, -5]
STARTS = ["2025-01-01T00:00:00Z", "2025-01-01T00:00:00Z", "2025-03-01T00:00:00Z", "2025-06-01T00:00:00Z"]
CPU = ["500m", "300m", "1", "100m", "500m"]
CLASSES = [("low", 10, None), ("mid", 100, None), ("high", 1000, None), ("high-never", 1000, "Never"),
           ("top", 5000, "PreemptLowerPriority")]


def priority_classes(default):
    out = []
    for name, value, policy in CLASSES:
        pc = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name},
              "value": value, "globalDefault": name == default}
        if policy:
            pc["preemptionPolicy"] = policy
        out.append(pc)
    return out


@st.composite
def existing(draw, i, nodes):
    """A pod with a priority: bound (running or terminating), or pending and nominated to a node."""
    ns = draw(st.sampled_from(NAMESPACES))
    spec = {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": draw(st.sampled_from(CPU))}}}],
            "priority": draw(st.sampled_from(PRIORITIES))}
    if rarely(draw, 5):  # sidecars, init containers, odd quantities, overhead
        shape = draw(gen.pod(name=f"e{i}", states=False))["spec"]
        spec.update({k: v for k, v in shape.items() if k in ("containers", "initContainers", "overhead")})
    if rarely(draw, 8):
        spec["affinity"] = pod_affinity(draw, anti=2, affine=4)
    if rarely(draw, 7):
        spec["containers"][0]["ports"] = [{"containerPort": 80, "hostPort": 8080}]
    spec.update(draw(init_ports()))
    names = [n["metadata"]["name"] for n in nodes]
    state = draw(st.sampled_from(["running"] * 8 + ["terminating", "nominated", "succeeded"] + ["terminal-deleted"] * 2))
    p = make(f"e{i}", ns, {"app": draw(st.sampled_from(APPS)), "tier": draw(st.sampled_from(["1", "2"]))},
             None if state == "nominated" else draw(st.sampled_from(names)), **spec)
    if state == "nominated":
        p["status"]["nominatedNodeName"] = draw(st.sampled_from(names))
    else:
        p["status"]["startTime"] = draw(st.sampled_from(STARTS))
    if state == "terminating":
        p["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
        p["metadata"]["deletionGracePeriodSeconds"] = 30
        if draw(st.booleans()):
            p["status"]["conditions"] = [{"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"}]
    elif state == "succeeded":
        p["status"]["phase"] = "Succeeded"
    elif state == "terminal-deleted":  # a preempted pod whose containers exited, kept by a finalizer
        p["status"]["phase"] = draw(st.sampled_from(["Failed", "Succeeded"]))
        p["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
        p["metadata"]["deletionGracePeriodSeconds"] = 30
        p["metadata"]["finalizers"] = ["example.com/hold"]
        if draw(st.integers(0, 3)):
            p["status"]["conditions"] = [{"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"}]
    return p


@st.composite
def preemptor(draw, nodes):
    spec = {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": draw(st.sampled_from(["1", "2", "1", "2", "500m"]))}}}]}
    klass = draw(st.sampled_from(["high", "high", "top", "mid", "high-never", ""]))
    if klass:
        spec["priorityClassName"] = klass
    if rarely(draw, 5):
        spec["containers"][0]["ports"] = [{"containerPort": 80, "hostPort": 8080}]
    if draw(st.booleans()):
        spec["tolerations"] = [{"key": "dedicated", "operator": "Exists"}]
    if rarely(draw, 6):
        spec["nodeSelector"] = {"disk": "ssd"}
    if rarely(draw, 4):
        spec["affinity"] = pod_affinity(draw, anti=2, affine=3)
    if rarely(draw, 4):
        spec["topologySpreadConstraints"] = [draw(spread())]
    p = make("incoming", draw(st.sampled_from(NAMESPACES)), {"app": draw(st.sampled_from(APPS)), "tier": "1"}, **spec)
    if rarely(draw, 3):
        p["status"]["nominatedNodeName"] = draw(st.sampled_from([n["metadata"]["name"] for n in nodes] + ["gone"]))
    return p


@st.composite
def pdbs(draw):
    out = []
    for i in range(draw(st.sampled_from([1, 0, 2]))):
        pdb = draw(gen.pdb(f"pdb{i}"))
        if rarely(draw, 4):
            pdb["status"]["disruptedPods"] = {f"e{draw(st.integers(0, 5))}": "2026-01-01T00:00:00Z"}
        out.append(pdb)
    return out


@st.composite
def preemption_case(draw):
    nodes = [draw(node(f"n{i}")) for i in range(draw(st.integers(1, 3)))]
    # at most 12 pods on a node: Go's sort.Slice is then an insertion sort, stable like ours
    pods = [draw(existing(i, nodes)) for i in range(draw(st.integers(2, 9)))]
    default = draw(st.sampled_from([None, None, "low", "mid"]))
    namespaces = [{"apiVersion": "v1", "kind": "Namespace",
                   "metadata": {"name": n, "labels": {"kubernetes.io/metadata.name": n}}} for n in NAMESPACES]
    return nodes, pods, draw(preemptor(nodes)), draw(pdbs()), priority_classes(default), namespaces


def stored(oracle, raw):
    """The pod as the API server stores it (defaulting; matchLabelKeys merged), status kept."""
    return {**oracle.ask("defaultPod", pod=raw), "status": raw["status"]}


def admitted(oracle, raw, classes):
    """The preemptor after the Priority admission plugin: spec.priority and preemptionPolicy."""
    decision = oracle.ask("admitPriority", pod=raw, classes=classes + gen.SYSTEM_CLASSES)
    spec = {**raw["spec"], "priority": decision["priority"], "preemptionPolicy": decision["preemptionPolicy"]}
    return {**raw, "spec": spec}


def by_name(pods):
    return sorted(pods, key=lambda p: (p["metadata"]["namespace"], p["metadata"]["name"]))


def ask_oracle(oracle, case):
    nodes, pods, incoming, budgets, classes, namespaces = case
    nominated = [p for p in pods if not p["spec"].get("nodeName") and p["status"].get("nominatedNodeName")
                 and p["status"].get("phase") not in ("Succeeded", "Failed")]
    return oracle.ask("preempt", pod=admitted(oracle, incoming, classes), nodes=nodes,
                      pods=by_name(scheduler_view(pods)), nominated=nominated, pdbs=budgets, namespaces=namespaces)


def summary(pods, incoming, budgets) -> list:
    """One line per object, for failure messages."""
    def line(p):
        spec, status = p["spec"], p["status"]
        cpu = [c.get("resources", {}).get("requests", {}).get("cpu") for c in spec["containers"]]
        extra = [k for k in ("affinity", "topologySpreadConstraints", "initContainers", "nodeSelector", "tolerations")
                 if k in spec] + [k for k in ("deletionTimestamp",) if k in p["metadata"]]
        return (f"{p['metadata']['namespace']}/{p['metadata']['name']} node={spec.get('nodeName')} "
                f"nominated={status.get('nominatedNodeName')} prio={spec.get('priority', spec.get('priorityClassName'))} "
                f"start={status.get('startTime')} phase={status.get('phase')} cpu={cpu} labels={p['metadata']['labels']} {extra}")
    return [line(p) for p in pods + [incoming]] + [f"pdb {b['spec']} {b['status']}" for b in budgets]


def ours_by_node(report) -> dict:
    return {c["node"]: {"victims": [f"{v['namespace']}/{v['name']}" for v in c["victims"]],
                        "numPDBViolations": c["pdbViolations"]} for c in report["candidates"]}


def ours(case):
    nodes, pods, incoming, budgets, classes, namespaces = case
    return preview(Pod(incoming), snapshot(*nodes, *pods, *budgets, *classes, *namespaces), now=NOW)


@PROPERTY
@given(case=preemption_case())
def test_preemption_preview(oracle, case):
    """Feasible nodes; else eligibility, the number of potential nodes (status Unschedulable),
    every candidate node's victims in order and PDB violations, and the nominated node (one of the tied best when the scheduler picks arbitrarily)."""
    name = "test_preemption_preview"
    count(name)
    nodes, pods, incoming, budgets, classes, namespaces = case
    pods, incoming = [stored(oracle, p) for p in pods], stored(oracle, incoming)
    case = nodes, pods, incoming, budgets, classes, namespaces
    expected = ask_oracle(oracle, case)
    report = ours(case)
    assert sorted(report["feasibleNodes"]) == sorted(expected["feasible"]), (report["excluded"], expected["statuses"],
                                                                             summary(pods, incoming, budgets))
    if expected["feasible"]:
        tally(name, "fit without preemption")
        return
    assert report["eligible"] == expected["eligible"], (report["eligibility"], expected["reason"],
                                                        summary(pods, incoming, budgets))
    if not expected["eligible"]:
        tally(name, "not eligible")
        return
    assert report["sampling"]["potentialNodes"] == len(expected["potential"]), (report["excluded"], expected)
    theirs = expected.get("candidates") or {}
    assert ours_by_node(report) == theirs, (ours_by_node(report), theirs, summary(pods, incoming, budgets),
                                            report["excluded"], expected["statuses"])
    if not theirs:
        tally(name, "without candidates")
        return
    tally(name, "with victims")
    if any(c["numPDBViolations"] for c in theirs.values()):
        tally(name, "with PDB violations")
    best = report["sampling"]["tiedBest"] or [report["node"]]
    assert expected["node"] in best, (expected["node"], report["node"], best)


def test_generated_cases_include_preemptions_that_violate_a_pdb():
    """The generator reaches what the property is for (no oracle needed): a preemption whose
    victims violate a PodDisruptionBudget."""
    found = find(preemption_case(), lambda case: any(v["pdbViolation"] for v in ours(case)["victims"]),
                 settings=settings(database=None, derandomize=True, max_examples=2000, phases=[Phase.generate]))
    assert ours(found)["outcome"] == "preempt"
