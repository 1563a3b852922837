"""Live differential fuzzing of preemption: our preview against the real kube-scheduler.

Each seed builds a pool of two or three kwok nodes labelled for the test (random cpu, tier, maybe a
taint), fills them with pods of random cpu requests and pairwise distinct priorities below the
preemptor's (so the victims' order and the candidates' ranking never fall back on the scheduler
cache's arbitrary order; a few pods above it are never victims), maybe PDBs over random groups of
them. The preemptor fits on no node without preemption (it asks for more cpu than any node has
free); it may select a tier, tolerate the taint, require (anti-)affinity to a group or spread over
one. Our preview (``kubectl safety preemption -f``) is taken just before the preemptor is created;
then the node the scheduler binds it to must be the previewed node (or one the preview reports as
tied) and the pods it preempted (DisruptionTarget=PreemptionByScheduler, from the audit log) that
candidate's victims; when the preview says "unschedulable", the scheduler must give up without
nominating a node or preempting anything.
CI runs ``KUBECTL_SAFETY_LIVE_FUZZ`` seeds (default 6); ``scripts/fuzz-fidelity --live N`` runs more.
"""

from __future__ import annotations

import json
import random
import sys
import time
import uuid

import pytest
from cluster_helpers import create, get_json, pdb, pod, wait_pods_running, wait_until

from tests.integration.test_fuzz_live import FIRST_SEED, RULES, SEEDS, pdb_disagreements
from tests.integration.test_preemption import _now, preempted_by_scheduler
from tests.unit.cli_helpers import run_cli

VALUES = range(1, 31)  # the fillers' priorities, distinct within a seed
PREEMPTOR, ABOVE = 1000, 2000
TAINT = {"key": "fuzz-dedicated", "value": "x", "effect": "NoSchedule"}
REQUESTS = (250, 500, 1000, 1500)  # millicores
HOSTNAME = "kubernetes.io/hostname"


@pytest.fixture(scope="module")
def classes(cluster):
    """{value: PriorityClass name} for VALUES and the preemptor's value."""
    suffix = uuid.uuid4().hex[:6]
    names = {v: f"fz-{v}-{suffix}" for v in (*VALUES, PREEMPTOR, ABOVE)}
    create(cluster, None, *[{"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                             "metadata": {"name": n}, "value": v} for v, n in names.items()])
    yield names
    cluster.kubectl("delete", "priorityclass", *names.values(), "--wait=false", check=False)


def scenario(rng: random.Random, group: str, classes: dict):
    """(nodes {name: (cpu, labels, taints)}, filler pods, PDBs, preemptor, description) for one seed."""
    nodes = {f"pz-{group}-{i}": (rng.choice((2, 3, 4)), {"fz": group, "tier": rng.choice("ab")},
                                 [TAINT] if rng.random() < 0.2 else []) for i in range(rng.randint(2, 3))}
    priorities = iter(rng.sample(list(VALUES), len(VALUES)))

    def filler(name, node, want, taints):
        app = f"g{rng.randint(0, 2)}"
        value = ABOVE if rng.random() < 0.1 else next(priorities)  # never a victim
        return pod(name, {"app": app, "fz": group}, node_selector={HOSTNAME: node},
                   priority_class=classes[value], requests={"cpu": f"{want}m"},
                   tolerations=[{"key": TAINT["key"], "operator": "Exists"}] if taints else None)

    fillers, free = fill(rng, nodes, filler)
    pdbs = [pdb(f"b{i}", {"app": f"g{rng.randint(0, 2)}"}, **rng.choice(RULES)) for i in range(rng.choice((0, 0, 1, 2)))]
    cpu = rng.randrange(max(free.values()) + 1, max(c for c, _, _ in nodes.values()) * 1000 + 1)
    return nodes, fillers, pdbs, preemptor(rng, group, classes, cpu), f"nodes={nodes} free={free} fillers=" + str(
        [(p["metadata"]["name"], p["metadata"]["labels"]["app"], p["spec"]["priorityClassName"].split("-")[1],
          p["spec"]["containers"][0]["resources"]["requests"]["cpu"], p["spec"]["nodeSelector"][HOSTNAME][-1])
         for p in fillers]) + f" pdbs={[p['spec'] for p in pdbs]}"


def fill(rng, nodes: dict, filler) -> tuple:
    """(fillers, {node: millicores left}): each node of ``nodes`` {name: (cpu, labels, taints)} filled
    with ``filler(name, node, millicores, taints)`` pods of random REQUESTS until the next would not fit."""
    fillers, free = [], {}
    for node, (cpu, _, taints) in nodes.items():
        left = cpu * 1000
        while (want := rng.choice(REQUESTS)) <= left:
            left -= want
            fillers.append(filler(f"f{len(fillers)}", node, want, taints))
        free[node] = left
    return fillers, free


def preemptor(rng, group, classes, cpu) -> dict:
    """The pod "hi": ``cpu`` millicores (more than any node has free), maybe a tier, a toleration,
    a required (anti-)affinity to a group of fillers or a spread constraint over one."""
    spec = {"containers": [{"name": "main", "image": "registry.example/app:1", "resources": {"requests": {"cpu": f"{cpu}m"}}}],
            "terminationGracePeriodSeconds": 0, "priorityClassName": classes[PREEMPTOR], "nodeSelector": {"fz": group}}
    labels = {"app": "hi"}
    if rng.random() < 0.2:
        spec["nodeSelector"]["tier"] = rng.choice("ab")
    if rng.random() < 0.5:
        spec["tolerations"] = [{"key": TAINT["key"], "operator": "Exists"}]
    kind = rng.choice(("podAntiAffinity", "podAffinity", None, None))
    if kind:
        spec["affinity"] = {kind: {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": f"g{rng.randint(0, 2)}"}}, "topologyKey": HOSTNAME}]}}
    if rng.random() < 0.25:
        labels["app"] = f"g{rng.randint(0, 2)}"
        spec["topologySpreadConstraints"] = [{"maxSkew": rng.choice((1, 2)), "topologyKey": HOSTNAME,
                                              "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {"matchLabels": labels}}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "hi", "labels": labels}, "spec": spec}


def preview(cluster, namespace, manifest, tmp_path):
    path = tmp_path / "preemptor.json"
    path.write_text(json.dumps({**manifest, "metadata": {**manifest["metadata"], "namespace": namespace}}))
    code, out, err = run_cli(["preemption", "-f", str(path), "-n", namespace, "-o", "json",
                              "--kubeconfig", str(cluster.kubeconfig)])
    assert out, err
    return code, json.loads(out)


@pytest.mark.parametrize("seed", range(FIRST_SEED, FIRST_SEED + SEEDS))
def test_live_fuzz_preemption(cluster, namespace, make_node, classes, tmp_path, seed):
    started = time.monotonic()
    group = namespace[-6:]
    nodes, fillers, pdbs, preemptor, desc = scenario(random.Random(seed), group, classes)
    for name, (cpu, labels, taints) in nodes.items():
        make_node(name, cpu=str(cpu), labels=labels, taints=taints)
    create(cluster, namespace, *fillers, *pdbs)
    wait_pods_running(cluster, namespace, count=len(fillers), ready=False, timeout=90)
    if pdbs:
        wait_until(lambda: not pdb_disagreements(cluster, namespace), 30, "PDB status to match our budget")

    code, report = preview(cluster, namespace, preemptor, tmp_path)
    desc += f" preemptor={preemptor['spec']} {preemptor['metadata']['labels']}"
    assert report["outcome"] in ("preempt", "unschedulable"), (desc, report["outcome"])
    since = _now()
    create(cluster, namespace, preemptor)
    if report["outcome"] == "unschedulable":  # the scheduler gives up without nominating a node
        wait_until(lambda: given_up(cluster, namespace), 60, "the scheduler to try the preemptor")
        hi = get_json(cluster, "pod", "hi", "-n", namespace)
        assert (hi["spec"].get("nodeName"), hi["status"].get("nominatedNodeName"),
                preempted_by_scheduler(cluster, namespace, since)) == (None, None, []), (desc, report["excluded"])
        print(f"\nlive preemption fuzz seed {seed}: {desc} -> unschedulable ({len(report['excluded'])} nodes excluded), "
              f"{time.monotonic() - started:.0f}s", file=sys.stderr)
        return
    landed = wait_until(lambda: get_json(cluster, "pod", "hi", "-n", namespace)["spec"].get("nodeName"),
                        90, "the preemptor to be bound")
    preempted = preempted_by_scheduler(cluster, namespace, since)
    accepted = set(report["sampling"]["tiedBest"]) | {report["node"]}
    victims = {c["node"]: sorted(v["name"] for v in c["victims"]) for c in report["candidates"]}
    assert landed in accepted, (desc, landed, report["node"], report["candidates"], report["excluded"])
    assert preempted == victims[landed], (desc, landed, preempted, victims)
    print(f"\nlive preemption fuzz seed {seed}: {desc} -> {landed} (tied {len(accepted)}), victims {preempted} "
          f"({len(report['candidates'])} candidates compared), {time.monotonic() - started:.0f}s", file=sys.stderr)


def given_up(cluster, namespace, name="hi") -> bool:
    """The preemptor is Pending with PodScheduled=False Unschedulable (after its PostFilter ran)."""
    hi = get_json(cluster, "pod", name, "-n", namespace)
    cond = next((c for c in hi["status"].get("conditions") or [] if c["type"] == "PodScheduled"), {})
    return cond.get("reason") == "Unschedulable"
