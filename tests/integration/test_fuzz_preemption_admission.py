"""Live differential fuzzing of ``preemption -f`` through admission: our preview against the real API
server's admission plugins, the workload controllers and kube-scheduler.

Each seed fills a pool of two or three kwok nodes labelled for the test with pods of pairwise distinct
priorities below the preemptor's (a few equal to or above it, never victims), then gives the namespace
random LimitRanges (a Container item's default, defaultRequest, min and max; maybe a Pod item's max;
maybe a second one whose max the manifest's limit breaks), maybe a RuntimeClass (overhead, a
nodeSelector matching some of the pool or none of it, a toleration of the pool's taint or not) and
ResourceQuotas (pods, cpu, memory or limits; maybe scoped to a PriorityClass, QoS or deadline;
sometimes exhausted by the fillers). The manifest is a Pod, Deployment, StatefulSet or Job (one pod) asking for more cpu
than any node has free, of a class that may preempt or not, maybe setting its own priority or
preemptionPolicy against its class, maybe of the RuntimeClass or of one that does not exist, maybe
with an init container, a sidecar, pod-level resources.

Our preview (``kubectl safety preemption -f``) is taken just before the object is created; then:
- rejected: the API server refuses a Pod at create, a controller records FailedCreate for its
  pod; our preview must say the API server would reject it (and name the same plugin);
- admitted: the stored pod's requests as the scheduler counts them (containers and sidecars with
  LimitRange defaults, or pod-level requests, plus RuntimeClass overhead), priority and preemption
  policy are the preview's (the RuntimeClass's nodeSelector and tolerations, which the preview
  does not publish, are judged through the node);
- then, as in test_fuzz_preemption: the node the scheduler binds it to is the previewed (or a
  tied) node and the pods it preempted (from the audit log) that candidate's victims; a pod that
  fits preempts nothing; "unschedulable" or "not-eligible" means no nomination and no preemption.
CI runs ``KUBECTL_SAFETY_LIVE_FUZZ`` seeds (default 10 here) and the seeds that found a defect (``KEPT``);
``scripts/fuzz-fidelity --live N`` runs more.
"""

from __future__ import annotations

import json
import os
import random
import re
import sys
import time
import uuid

import pytest
from cluster_helpers import create, get_json, pod, wait_pods_running, wait_until

from tests.integration.test_fuzz_preemption import REQUESTS, fill, given_up
from tests.integration.test_preemption import _now, preempted_by_scheduler
from tests.unit.cli_helpers import run_cli

SEEDS = int(os.environ.get("KUBECTL_SAFETY_LIVE_FUZZ") or 10)
FIRST_SEED = int(os.environ.get("KUBECTL_SAFETY_LIVE_FUZZ_FIRST") or 0)
# seeds that found a defect, always run: quotas scoped to a PriorityClass not judged (21, 29); pod-level
# resources not validated against the containers' limits (14) and requests as LimitRanger defaults them (19)
KEPT = (14, 19, 21, 29)
VALUES = range(1, 31)  # the fillers' priorities, distinct within a seed
PREEMPTOR, ABOVE = 1000, 2000
TAINT = {"key": "fuzz-dedicated", "value": "x", "effect": "NoSchedule"}
TOLERATE = {"key": TAINT["key"], "operator": "Exists"}
FILLER_MEMORY = 64  # MiB
HOSTNAME = "kubernetes.io/hostname"
KINDS = ("Pod", "Deployment", "StatefulSet", "Job")
REJECTED = "the API server would reject the pod: "
# what each admission plugin's refusal says (the API server's message, the preview's plugin name)
PLUGINS = {"LimitRanger": r"usage per (Container|Pod)|limit to request ratio",
           "Priority": r"priority admission controller|no PriorityClass with name",
           "RuntimeClass": r"RuntimeClass|runtimeClass",
           "ResourceQuota": r"quota",
           "validation": r"Invalid value"}


@pytest.fixture(scope="module")
def classes(cluster):
    """{value: PriorityClass name} for VALUES, the preemptor's value and ABOVE; "never": the
    preemptor's value with preemptionPolicy Never."""
    suffix = uuid.uuid4().hex[:6]
    names = {v: f"fa-{v}-{suffix}" for v in (*VALUES, PREEMPTOR, ABOVE)}
    objects = [{"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": n}, "value": v}
               for v, n in names.items()]
    names["never"] = f"fa-never-{suffix}"
    objects.append({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                    "metadata": {"name": names["never"]}, "value": PREEMPTOR, "preemptionPolicy": "Never"})
    create(cluster, None, *objects)
    yield names
    cluster.kubectl("delete", "priorityclass", *names.values(), "--wait=false", check=False)


# -- the scenario ---------------------------------------------------------------------------------

def scenario(rng: random.Random, group: str, classes: dict) -> dict:
    """Nodes, fillers, LimitRanges, RuntimeClass, quotas and the manifest of one seed."""
    nodes = {f"pa-{group}-{i}": (rng.choice((2, 3, 4)),
                                 {"fz": group, "tier": rng.choice("ab"),
                                  **({"fz-rt": "yes"} if rng.random() < 0.5 else {})},
                                 [TAINT] if rng.random() < 0.25 else []) for i in range(rng.randint(2, 3))}
    priorities = iter(rng.sample(list(VALUES), len(VALUES)))

    def filler(name, node, want, taints):
        roll = rng.random()
        value = ABOVE if roll < 0.08 else PREEMPTOR if roll < 0.16 else next(priorities)  # never victims
        return pod(name, {"app": f"g{rng.randint(0, 2)}", "fz": group}, node_selector={HOSTNAME: node},
                   priority_class=classes[value], requests={"cpu": f"{want}m", "memory": f"{FILLER_MEMORY}Mi"},
                   tolerations=[TOLERATE] if taints else None)

    fillers, free = fill(rng, nodes, filler)
    cpu = rng.randrange(max(free.values()) + 1, max(c for c, _, _ in nodes.values()) * 1000 + 1)
    runtime = runtime_class(rng, group) if rng.random() < 0.5 else None
    overhead = _milli(((runtime or {}).get("overhead") or {}).get("podFixed", {}).get("cpu", "0"))
    if overhead and rng.random() < 0.7:  # usually asked for so that the pod still needs preemption
        cpu = max(100, cpu - overhead)
    kind = rng.choice(KINDS)
    spec, limit = pod_template(rng, kind, group, classes, cpu, runtime)
    ranges = limit_ranges(rng, cpu, limit, len(spec["containers"]))
    quotas = [quota(rng, f"q{i}", fillers, classes) for i in range(rng.choice((0, 1, 1, 2)))]
    extras(random.Random(rng.random()), spec, cpu)  # drawn last: the draws above stay those of earlier seeds
    return {"nodes": nodes, "fillers": fillers, "free": free, "ranges": ranges, "runtime": runtime,
            "quotas": quotas, "manifest": workload(kind, spec)}


def extras(rng, spec, cpu):
    """Maybe pod-level resources (PodLevelResources: cpu requests and limits around ``cpu``, maybe
    a memory limit) and maybe a sidecar (an init container with restartPolicy Always)."""
    if rng.random() < 0.25:
        level = {}
        if rng.random() < 0.6:
            level["requests"] = {"cpu": f"{cpu + rng.choice((0, 250))}m"}
        if rng.random() < 0.6 or not level:
            level["limits"] = {"cpu": f"{cpu + rng.choice((0, 500, 1000))}m"}
        if rng.random() < 0.3:
            level.setdefault("limits", {})["memory"] = "2Gi"
        spec["resources"] = level
    if rng.random() < 0.2:
        sidecar = {"name": "sidecar", "image": "registry.example/proxy:1", "restartPolicy": "Always"}
        if rng.random() < 0.6:
            sidecar["resources"] = {"requests": {"cpu": rng.choice(("100m", "250m"))}}
        spec["initContainers"] = [*spec.get("initContainers", []), sidecar]


def runtime_class(rng, group) -> dict:
    """A RuntimeClass named for the seed: maybe overhead, maybe scheduling (a selector some pool
    nodes match, or none; a toleration of the pool's taint)."""
    rc = {"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": f"rt-{group}"},
          "handler": "runc"}
    if rng.random() < 0.7:
        rc["overhead"] = {"podFixed": {"cpu": rng.choice(("100m", "250m", "500m")),
                                       **({"memory": "32Mi"} if rng.random() < 0.5 else {})}}
    if rng.random() < 0.6:
        selector = rng.choice(({"fz-rt": "yes"}, {"tier": rng.choice("ab")}, {"fz-rt": "never"}))
        rc["scheduling"] = {"nodeSelector": selector, **({"tolerations": [TOLERATE]} if rng.random() < 0.5 else {})}
    return rc


def pod_template(rng, kind, group, classes, cpu, runtime) -> tuple:
    """(pod spec, the main container's cpu limit in millicores or None). The main container asks
    for ``cpu`` millicores as requests, limits (then defaulted to requests) or not at all (a
    LimitRange may default it); maybe memory; maybe a second container without resources, an init
    container, a deadline (which Terminating quotas select)."""
    main = {"name": "main", "image": "registry.example/app:1"}
    mode = rng.choice(("requests", "requests", "both", "limits", "none"))
    limit = None
    resources = {}
    if mode in ("requests", "both"):
        resources["requests"] = {"cpu": f"{cpu}m"}
    if mode in ("both", "limits"):
        limit = cpu + (rng.choice((0, 500)) if mode == "both" else 0)
        resources["limits"] = {"cpu": f"{limit}m"}
    if rng.random() < 0.4:
        resources.setdefault("requests", {})["memory"] = rng.choice(("128Mi", "512Mi"))
    if rng.random() < 0.2:
        resources.setdefault("limits", {})["memory"] = "1Gi"
    if resources:
        main["resources"] = resources
    containers = [main] + ([{"name": "side", "image": "registry.example/side:1"}] if rng.random() < 0.3 else [])
    init = []
    if rng.random() < 0.15:  # the pod asks for the larger of the init container and the containers' sum
        init = [{"name": "init", "image": "registry.example/init:1"}]
        if rng.random() < 0.7:
            init[0]["resources"] = {"requests": {"cpu": f"{rng.choice((100, cpu + 500))}m"}}
    roll = rng.random()
    klass = classes["never"] if roll < 0.12 else classes[ABOVE] if roll < 0.2 else classes[PREEMPTOR]
    spec = {"containers": containers, "terminationGracePeriodSeconds": 0, "priorityClassName": klass,
            "nodeSelector": {"fz": group}, **({"initContainers": init} if init else {})}
    if kind in ("Pod", "Job") and rng.random() < 0.15:
        spec["activeDeadlineSeconds"] = 3600
    value = ABOVE if klass == classes[ABOVE] else PREEMPTOR
    if rng.random() < 0.1:
        spec["priority"] = rng.choice((value, value + 1))
    if rng.random() < 0.1:
        spec["preemptionPolicy"] = rng.choice(("Never", "PreemptLowerPriority"))
    if runtime and rng.random() < 0.8:
        spec["runtimeClassName"] = runtime["metadata"]["name"]
    elif rng.random() < 0.05:
        spec["runtimeClassName"] = f"rt-missing-{group}"
    if rng.random() < 0.2:
        spec["nodeSelector"]["tier"] = rng.choice("ab")
    if rng.random() < 0.4:
        spec["tolerations"] = [TOLERATE]
    if rng.random() < 0.15:
        term = {"labelSelector": {"matchLabels": {"app": f"g{rng.randint(0, 2)}"}}, "topologyKey": HOSTNAME}
        spec["affinity"] = {rng.choice(("podAffinity", "podAntiAffinity")):
                            {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}
    return spec, limit


def limit_ranges(rng, cpu, limit, containers) -> list:
    """Zero to two LimitRanges: one with a Container item (min <= defaultRequest <= default <= max of
    cpu and maybe memory, each maybe unset) and maybe a Pod item's max; and, when the manifest sets
    its cpu limit, maybe one whose Container (one container only) or Pod max that limit exceeds: so
    no two LimitRanges default the same limit (the API server applies them in its cache's order)."""
    out = []
    if rng.random() < 0.6:
        item = {"type": "Container"}
        if rng.random() < 0.3:  # anywhere: the manifest may well break the bounds
            ladder = sorted(rng.sample((100, 250, cpu // 2 or 1, cpu, cpu + 250, cpu + 1000, 4000, 8000), 4))
        else:  # bounds around the manifest's cpu
            ladder = sorted(rng.sample((100, 250, cpu // 2 or 1, cpu), 2)) + sorted(
                rng.sample((cpu, cpu + 250, cpu + 1000, 8000), 2))
        for field, value in zip(("min", "defaultRequest", "default", "max"), ladder):
            if rng.random() < 0.45:
                item.setdefault(field, {})["cpu"] = f"{value}m"
        ratio = rng.choice((1, 2, 4))
        low, high = (item.get(k, {}).get("cpu") for k in ("min", "max"))
        if rng.random() < 0.15 and not (low and high and ratio * _milli(low) > _milli(high)):  # else invalid
            item["maxLimitRequestRatio"] = {"cpu": str(ratio)}
        if rng.random() < 0.3:
            item.setdefault("default", {})["memory"] = rng.choice(("256Mi", "2Gi"))
            item.setdefault("defaultRequest", {})["memory"] = "256Mi"
        limits = [item] if len(item) > 1 else []
        if rng.random() < 0.25:
            ceiling = rng.choice((cpu, cpu + 1000, 8000, max(100, cpu - 500)))
            limits.append({"type": "Pod", "max": {"cpu": f"{ceiling}m"}})
        if limits:
            out.append({"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "defaults"},
                        "spec": {"limits": limits}})
    if limit is not None and rng.random() < 0.3:
        ceiling = rng.choice((limit - 100, limit, limit + 500)) if limit > 100 else limit
        out.append({"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "ceiling"},
                    "spec": {"limits": [{"type": rng.choice(("Container", "Pod")) if containers == 1 else "Pod",
                                         "max": {"cpu": f"{ceiling}m"}}]}})
    return out


def quota(rng, name, fillers, classes) -> dict:
    """A ResourceQuota on one resource, maybe scoped to a PriorityClass, with a hard limit of what
    the fillers it matches use plus nothing (exhausted), a little or plenty."""
    scope = rng.choice((None, None, ("In", classes[PREEMPTOR]), ("In", classes[ABOVE]),
                        ("NotIn", classes[PREEMPTOR]), ("Exists", None), "BestEffort", "NotBestEffort",
                        "Terminating", "NotTerminating"))
    if scope is None or scope in ("NotBestEffort", "NotTerminating"):  # the fillers are Burstable, without deadline
        matching = fillers
    elif scope in ("BestEffort", "Terminating"):
        matching = []
    elif scope[0] == "Exists":
        matching = [f for f in fillers if f["spec"].get("priorityClassName")]
    else:
        matching = [f for f in fillers if (f["spec"]["priorityClassName"] == scope[1]) == (scope[0] == "In")]
    resource = "pods" if isinstance(scope, str) else rng.choice(
        ("pods", "requests.cpu", "cpu", "requests.memory", "limits.cpu"))
    used = {"pods": len(matching), "requests.memory": FILLER_MEMORY * len(matching), "limits.cpu": 0,
            "requests.cpu": sum(_milli(f["spec"]["containers"][0]["resources"]["requests"]["cpu"]) for f in matching)}
    used["cpu"] = used["requests.cpu"]
    headroom = rng.choice((0, 1, 1, 2))
    if resource == "pods":
        hard = str(used["pods"] + (0, 1, 5)[headroom])
    elif resource == "requests.memory":
        hard = f"{used[resource] + (0, 256, 8192)[headroom]}Mi"
    else:
        hard = f"{used[resource] + (0, 500, 8000)[headroom]}m"
    spec = {"hard": {resource: hard}}
    if isinstance(scope, str):
        spec["scopes"] = [scope]
    elif scope:
        spec["scopeSelector"] = {"matchExpressions": [{"scopeName": "PriorityClass", "operator": scope[0],
                                                       **({"values": [scope[1]]} if scope[1] else {})}]}
    return {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": name}, "spec": spec}


def workload(kind, spec) -> dict:
    """The manifest "hi" of ``kind`` whose (one) pod has ``spec`` and carries role=preemptor."""
    labels = {"app": "hi", "role": "preemptor"}
    if kind == "Pod":
        return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "hi", "labels": labels}, "spec": spec}
    template = {"metadata": {"labels": labels}, "spec": spec}
    if kind == "Job":
        template["spec"] = {**spec, "restartPolicy": "Never"}
        return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "hi"},
                "spec": {"parallelism": 1, "completions": 1, "backoffLimit": 0, "template": template}}
    body = {"replicas": 1, "selector": {"matchLabels": labels}, "template": template}
    if kind == "StatefulSet":
        body["serviceName"] = "hi"
    return {"apiVersion": "apps/v1", "kind": kind, "metadata": {"name": "hi"}, "spec": body}


def describe(s) -> str:
    fillers = [(p["metadata"]["name"], p["spec"]["priorityClassName"].split("-")[1],
                p["spec"]["containers"][0]["resources"]["requests"]["cpu"], p["spec"]["nodeSelector"][HOSTNAME][-1])
               for p in s["fillers"]]
    manifest = s["manifest"]
    spec = manifest["spec"] if manifest["kind"] == "Pod" else manifest["spec"]["template"]["spec"]
    return (f"nodes={s['nodes']} free={s['free']} fillers={fillers} limitranges={[r['spec'] for r in s['ranges']]} "
            f"runtimeclass={s['runtime'] and {k: s['runtime'].get(k) for k in ('overhead', 'scheduling')}} "
            f"quotas={[q['spec'] for q in s['quotas']]} {manifest['kind']} spec={spec}")


# -- the test -------------------------------------------------------------------------------------

@pytest.mark.parametrize("seed", sorted(set(range(FIRST_SEED, FIRST_SEED + SEEDS)) | set(KEPT)))
def test_live_fuzz_preemption_admission(cluster, namespace, make_node, classes, tmp_path, seed):
    started = time.monotonic()
    group = namespace[-6:]
    s = scenario(random.Random(seed), group, classes)
    desc = describe(s)
    for name, (cpu, labels, taints) in s["nodes"].items():
        make_node(name, cpu=str(cpu), labels=labels, taints=taints)
    create(cluster, namespace, *s["fillers"])
    wait_pods_running(cluster, namespace, count=len(s["fillers"]), ready=False, timeout=90)
    if s["runtime"]:
        create(cluster, None, s["runtime"])
    try:
        if s["ranges"] or s["quotas"]:
            create(cluster, namespace, *s["ranges"], *s["quotas"])
        for q in s["quotas"]:  # admission judges status.hard and status.used, which the quota controller computes
            wait_until(lambda: set(get_json(cluster, "resourcequota", q["metadata"]["name"], "-n", namespace)
                                   .get("status", {}).get("used") or {}) >= set(q["spec"]["hard"]),
                       30, f"quota {q['metadata']['name']} usage")
        compare(cluster, namespace, s, desc, tmp_path, seed, started)
    finally:
        if s["runtime"]:
            cluster.kubectl("delete", "runtimeclass", s["runtime"]["metadata"]["name"], "--wait=false", check=False)


def compare(cluster, namespace, s, desc, tmp_path, seed, started):
    manifest = s["manifest"]
    ours, report = preview(cluster, namespace, manifest, tmp_path)
    since = _now()
    theirs = admitted(cluster, namespace, manifest)
    kind = manifest["kind"]
    if isinstance(theirs, str):  # refused: by the API server at create, or the controller's FailedCreate
        assert ours == "rejected", (desc, "the API server rejected it", theirs, "our preview", report["outcome"])
        assert re.search(PLUGINS[report], theirs), (desc, "rejected by another plugin", theirs, "ours", report)
        outcome(seed, kind, "rejected", desc, f"{report}: {theirs}", started)
        return
    assert ours != "rejected", (desc, "the API server admitted it", "our preview", report)
    stored = theirs
    assert scheduler_requests(stored) == {k: v for k, v in report["pod"]["requests"].items() if v}, \
        (desc, "requests", stored["spec"], report["pod"])
    assert (stored["spec"].get("priority"), stored["spec"].get("preemptionPolicy")) == \
        (report["pod"]["priority"], report["pod"]["preemptionPolicy"]), (desc, stored["spec"], report["pod"])
    name = stored["metadata"]["name"]
    if ours in ("unschedulable", "not-eligible"):  # the scheduler gives up without nominating a node
        wait_until(lambda: given_up(cluster, namespace, name), 60, "the scheduler to try the preemptor")
        hi = get_json(cluster, "pod", name, "-n", namespace)
        assert (hi["spec"].get("nodeName"), hi["status"].get("nominatedNodeName"),
                preempted_by_scheduler(cluster, namespace, since)) == (None, None, []), (desc, report["excluded"])
        outcome(seed, kind, ours, desc, f"{len(report['excluded'])} nodes excluded", started)
        return
    assert ours in ("preempt", "fits"), (desc, ours)
    landed = wait_until(lambda: get_json(cluster, "pod", name, "-n", namespace)["spec"].get("nodeName"),
                        90, "the preemptor to be bound")
    preempted = preempted_by_scheduler(cluster, namespace, since)
    accepted = set(report["sampling"]["tiedBest"]) | {report["node"]}
    victims = {c["node"]: sorted(v["name"] for v in c["victims"]) for c in report["candidates"]}
    assert landed in accepted, (desc, landed, report["node"], report["candidates"], report["excluded"])
    assert preempted == victims.get(landed, []), (desc, landed, preempted, victims)
    outcome(seed, kind, ours, desc, f"{landed} (tied {len(accepted)}), victims {preempted}", started)


def preview(cluster, namespace, manifest, tmp_path) -> tuple:
    """("rejected", plugin) when our preview says the API server refuses the pod, else (outcome, report)."""
    path = tmp_path / "manifest.json"
    path.write_text(json.dumps({**manifest, "metadata": {**manifest["metadata"], "namespace": namespace}}))
    code, out, err = run_cli(["preemption", "-f", str(path), "-n", namespace, "-o", "json",
                              "--kubeconfig", str(cluster.kubeconfig)])
    if code == 1 and REJECTED in err:
        return "rejected", err.split(REJECTED, 1)[1].split(":", 1)[0]
    assert out, (code, err)
    report = json.loads(out)
    return report["outcome"], report


def admitted(cluster, namespace, manifest):
    """The preemptor pod as stored, or the API server's refusal (its message): of the Pod, or of the
    workload whose template is invalid, at create; else the controller's FailedCreate event."""
    result = cluster.kubectl("create", "-n", namespace, "-f", "-", input=json.dumps(manifest), check=False)
    if result.returncode:
        assert re.search(r"\(Forbidden\)|is invalid", result.stderr), result.stderr
        return result.stderr.strip()

    def created():
        pods = get_json(cluster, "pods", "-n", namespace, "-l", "role=preemptor")["items"]
        if pods:
            return pods[0]
        events = get_json(cluster, "events", "-n", namespace, "--field-selector", "reason=FailedCreate")["items"]
        return next((e["message"] for e in events), None)

    return wait_until(created, 60, f"the {manifest['kind']}'s pod or a FailedCreate event")


def scheduler_requests(stored) -> dict:
    """cpu (millicores) and memory (bytes) the scheduler charges for the stored pod: its containers'
    and sidecars' requests summed, or the init sequence's peak when larger (an init container runs
    beside the sidecars started before it); the pod-level requests instead when set; plus overhead."""
    def amounts(part):
        return {name: _milli(value) if name == "cpu" else _bytes(value) for name, value in (part or {}).items()}

    def requests(c):
        return amounts((c.get("resources") or {}).get("requests"))

    def add(total, part):
        return {**total, **{name: total.get(name, 0) + value for name, value in part.items()}}

    spec = stored["spec"]
    total, sidecars, peak = {}, {}, {}
    for c in spec["containers"]:
        total = add(total, requests(c))
    for c in spec.get("initContainers") or ():
        if c.get("restartPolicy") == "Always":
            total, sidecars = add(total, requests(c)), add(sidecars, requests(c))
            running = sidecars
        else:
            running = add(sidecars, requests(c))
        peak = {**peak, **{name: max(peak.get(name, 0), value) for name, value in running.items()}}
    total = {**total, **{name: max(total.get(name, 0), value) for name, value in peak.items()}}
    total.update(amounts((spec.get("resources") or {}).get("requests")))
    total = add(total, amounts(spec.get("overhead")))
    return {k: v for k, v in total.items() if v}


def _milli(value: str) -> int:
    return int(value[:-1]) if value.endswith("m") else int(float(value) * 1000)


def _bytes(value: str) -> int:
    for suffix, scale in (("Ki", 2 ** 10), ("Mi", 2 ** 20), ("Gi", 2 ** 30),
                          ("k", 10 ** 3), ("M", 10 ** 6), ("G", 10 ** 9)):
        if value.endswith(suffix):
            return int(value[:-len(suffix)]) * scale
    return int(value)


def outcome(seed, kind, verdict, desc, detail, started):
    print(f"\nlive admission fuzz seed {seed}: {kind} {verdict} -> {detail}; {desc}; "
          f"{time.monotonic() - started:.0f}s", file=sys.stderr)
