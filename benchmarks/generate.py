"""Deterministic, seeded generator of realistic cluster dumps for the benchmarks.

    python benchmarks/generate.py                 # 100, 1000 and 5000 nodes into benchmarks/data/
    python benchmarks/generate.py --nodes 1000    # one size
    python benchmarks/generate.py --nodes 20 --out /tmp/x --seed 7

Each size is one ``cluster-<N>.json`` file shaped like ``kubectl get nodes,pods,pdb,pc,deploy,rs,
sts,ds -A -o json`` (a ``kind: List`` whose items carry kind/apiVersion, indented by 4 as kubectl
prints it), plus ``cluster-<N>.targets.json`` naming the objects the benchmarks act on and
``preemptor-<N>.yaml`` (a high-priority pending pod for ``preemption -f``).

Realism: nodes in several zones with images, addresses, conditions and managedFields; ~30 pods per
node (DaemonSet pods on every node, Deployment and StatefulSet replicas elsewhere); pods with one
to three containers, env, probes, volume mounts, the projected service-account volume, default
tolerations, status with containerStatuses, and managedFields as the API server records them;
ReplicaSets (current and an old scaled-down one), PDBs for most workloads, PriorityClasses,
topology spread constraints and anti-affinity on some workloads, and ~0.5% pending pods.
Objects are written one at a time, so generation needs little memory at any size.
"""

import argparse
import json
import os
import random
import sys
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_OUT = os.path.join(HERE, "data")
SIZES = (100, 1000, 5000)
PODS_PER_NODE = 30
T0 = "2026-11-01T08:00:00Z"
NOW = "2026-11-22T09:00:00Z"
REGION = "eu-west-1"
ZONES = [f"{REGION}{z}" for z in "abcd"]
TEAMS = ["payments", "search", "checkout", "catalog", "identity", "ml", "data", "growth", "infra", "ads"]
IMAGES = ["nginx:1.27.2", "envoyproxy/envoy:v1.31.2", "redis:7.4.1", "postgres:16.4", "python:3.12-slim",
          "gcr.io/distroless/java21-debian12", "golang:1.23", "node:22-alpine", "busybox:1.36",
          "fluent/fluent-bit:3.1.9", "prom/node-exporter:v1.8.2", "registry.k8s.io/kube-proxy:v1.31.2"]
CLASSES = [("system-node-critical", 2000001000, False, None), ("system-cluster-critical", 2000000000, False, None),
           ("platform-critical", 1000000, False, None), ("tier-1", 10000, False, None),
           ("standard", 1000, True, None), ("batch-low", -10, False, "Never")]
DEFAULT_TOLERATIONS = [
    {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
    {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}]


class Gen:
    """All randomness goes through one seeded ``random.Random``: same seed, same bytes."""

    def __init__(self, seed):
        self.rng = random.Random(seed)
        self.rv = 1000
        self.names = set()

    def uid(self):
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    def resource_version(self):
        self.rv += self.rng.randint(1, 40)
        return str(self.rv)

    def suffix(self, n=5):
        return "".join(self.rng.choice("bcdfghjklmnpqrstvwxz2456789") for _ in range(n))

    def unique(self, prefix):
        """``prefix-xxxxx``, never the same twice (random suffixes do collide at 150,000 pods)."""
        name = f"{prefix}-{self.suffix()}"
        while name in self.names:
            name = f"{prefix}-{self.suffix()}"
        self.names.add(name)
        return name

    def ip(self, prefix):
        return f"{prefix}.{self.rng.randint(0, 255)}.{self.rng.randint(1, 254)}"


# Lists the API merges by key (recorded item by item); every other list is atomic (``{}``).
MERGE_KEYS = {"containers": "name", "initContainers": "name", "env": "name", "volumes": "name",
              "volumeMounts": "mountPath", "ports": "containerPort", "conditions": "type",
              "ownerReferences": "uid"}


def fields_v1(value, field=None):
    """The ``fieldsV1`` set of an object's fields, as server-side apply records it."""
    if isinstance(value, dict):
        return {f"f:{k}": fields_v1(v, k) for k, v in value.items()}
    if isinstance(value, list) and field in MERGE_KEYS:
        key = MERGE_KEYS[field]
        return {"k:" + json.dumps({key: v.get(key)}, separators=(",", ":")): {".": {}, **fields_v1(v)}
                for v in value if isinstance(v, dict)}
    return {}


def managed(manager, operation, fields, subresource=None, time=T0):
    entry = {"manager": manager, "operation": operation, "apiVersion": "v1", "time": time,
             "fieldsType": "FieldsV1", "fieldsV1": fields_v1(fields)}
    if subresource:
        entry["subresource"] = subresource
    return entry


def meta(g, name, namespace=None, labels=None, owner=None, annotations=None, **extra):
    m = {"name": name}
    if namespace:
        m["namespace"] = namespace
    m.update({"uid": g.uid(), "resourceVersion": g.resource_version(), "creationTimestamp": T0})
    if labels:
        m["labels"] = labels
    if annotations:
        m["annotations"] = annotations
    if owner:
        m["ownerReferences"] = [{"apiVersion": owner["apiVersion"], "kind": owner["kind"],
                                 "name": owner["metadata"]["name"], "uid": owner["metadata"]["uid"],
                                 "controller": True, "blockOwnerDeletion": True}]
    m.update(extra)
    return m


# -- nodes -----------------------------------------------------------------------------------
def node(g, name, zone, kind):
    cpu, memory, itype = kind
    labels = {"beta.kubernetes.io/arch": "amd64", "beta.kubernetes.io/instance-type": itype,
              "beta.kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64", "kubernetes.io/hostname": name,
              "kubernetes.io/os": "linux", "node.kubernetes.io/instance-type": itype,
              "topology.kubernetes.io/region": REGION, "topology.kubernetes.io/zone": zone,
              "nodepool": "general"}
    annotations = {"node.alpha.kubernetes.io/ttl": "0",
                   "volumes.kubernetes.io/controller-managed-attach-detach": "true"}
    ip = g.ip("10.0")
    conditions = [{"type": t, "status": "False", "lastHeartbeatTime": NOW, "lastTransitionTime": T0,
                   "reason": r, "message": m} for t, r, m in (
        ("MemoryPressure", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
        ("DiskPressure", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
        ("PIDPressure", "KubeletHasSufficientPID", "kubelet has sufficient PID available"))]
    conditions.append({"type": "Ready", "status": "True", "lastHeartbeatTime": NOW, "lastTransitionTime": T0,
                       "reason": "KubeletReady", "message": "kubelet is posting ready status"})
    mem_kib = memory * 1024 * 1024
    status = {
        "capacity": {"cpu": str(cpu), "ephemeral-storage": "104845292Ki", "hugepages-1Gi": "0",
                     "hugepages-2Mi": "0", "memory": f"{mem_kib}Ki", "pods": "110"},
        "allocatable": {"cpu": f"{cpu * 1000 - 100}m", "ephemeral-storage": "96625420948",
                        "hugepages-1Gi": "0", "hugepages-2Mi": "0", "memory": f"{mem_kib - 1024 * 700}Ki",
                        "pods": "110"},
        "conditions": conditions,
        "addresses": [{"type": "InternalIP", "address": ip}, {"type": "Hostname", "address": name}],
        "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
        "nodeInfo": {"machineID": g.uid().replace("-", ""), "systemUUID": g.uid(), "bootID": g.uid(),
                     "kernelVersion": "6.1.112-124.190.amzn2023.x86_64", "osImage": "Amazon Linux 2023",
                     "containerRuntimeVersion": "containerd://1.7.22", "kubeletVersion": "v1.31.2",
                     "kubeProxyVersion": "v1.31.2", "operatingSystem": "linux", "architecture": "amd64"},
        "images": [{"names": [f"docker.io/library/{img}@sha256:{g.rng.getrandbits(256):064x}", f"docker.io/library/{img}"],
                    "sizeBytes": g.rng.randint(5_000_000, 400_000_000)} for img in g.rng.sample(IMAGES, 8)],
    }
    obj = {"apiVersion": "v1", "kind": "Node",
           "metadata": meta(g, name, labels=labels, annotations=annotations),
           "spec": {"providerID": f"aws:///{zone}/i-{g.rng.getrandbits(64):017x}"}, "status": status}
    obj["metadata"]["managedFields"] = [
        managed("kubelet", "Update", {"metadata": {"annotations": annotations, "labels": labels}}),
        managed("kube-controller-manager", "Update", {"spec": obj["spec"]}),
        managed("kubelet", "Update", {"status": {k: status[k] for k in ("allocatable", "capacity", "conditions", "nodeInfo")}},
                subresource="status", time=NOW)]
    return obj


# -- workloads and pods ------------------------------------------------------------------------
def container(g, name, image, app, size, probes=True):
    cpu, memory = size
    c = {"name": name, "image": image, "imagePullPolicy": "IfNotPresent"}
    if probes:
        c["ports"] = [{"name": "http", "containerPort": 8080, "protocol": "TCP"}]
    c["env"] = [{"name": "APP_NAME", "value": app}, {"name": "LOG_LEVEL", "value": "info"},
                {"name": "POD_NAME", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}}},
                {"name": "POD_NAMESPACE", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}}]
    c["resources"] = {"requests": {"cpu": f"{cpu}m", "memory": f"{memory}Mi"}}
    if g.rng.random() < 0.8:
        c["resources"]["limits"] = {"memory": f"{memory * 2 if g.rng.random() < 0.5 else memory}Mi"}
        if g.rng.random() < 0.3:
            c["resources"]["limits"]["cpu"] = f"{cpu}m"
    if probes:
        c["livenessProbe"] = {"httpGet": {"path": "/healthz", "port": "http", "scheme": "HTTP"}, "initialDelaySeconds": 10,
                              "timeoutSeconds": 1, "periodSeconds": 10, "successThreshold": 1, "failureThreshold": 3}
        c["readinessProbe"] = {"httpGet": {"path": "/ready", "port": "http", "scheme": "HTTP"}, "timeoutSeconds": 1,
                               "periodSeconds": 5, "successThreshold": 1, "failureThreshold": 3}
    c["volumeMounts"] = [{"name": "config", "mountPath": "/etc/app", "readOnly": True}]
    c["terminationMessagePath"] = "/dev/termination-log"
    c["terminationMessagePolicy"] = "File"
    return c


def workload_spec(g, app, team, priority_class, spread, anti_affinity, daemon=False):
    size = (g.rng.choice([25, 50, 100, 250]), g.rng.choice([64, 128, 256, 512, 768]))
    containers = [container(g, app, g.rng.choice(IMAGES), app, size)]
    if not daemon and g.rng.random() < 0.3:
        containers.append(container(g, "envoy", IMAGES[1], app, (50, 64), probes=False))
    if g.rng.random() < 0.1:
        containers.append(container(g, "log-shipper", IMAGES[9], app, (20, 32), probes=False))
    spec = {"volumes": [{"name": "config", "configMap": {"name": f"{app}-config", "defaultMode": 420}}],
            "containers": containers, "restartPolicy": "Always", "terminationGracePeriodSeconds": g.rng.choice([30, 30, 60, 120]),
            "dnsPolicy": "ClusterFirst", "serviceAccountName": app, "serviceAccount": app,
            "securityContext": {"runAsNonRoot": True, "fsGroup": 2000}, "schedulerName": "default-scheduler",
            "priorityClassName": priority_class}
    if g.rng.random() < 0.2:
        spec["initContainers"] = [container(g, "migrate", containers[0]["image"], app, (100, 128), probes=False)]
    labels = {"app": app}
    if spread:
        spec["topologySpreadConstraints"] = [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
                                              "whenUnsatisfiable": "DoNotSchedule" if g.rng.random() < 0.5 else "ScheduleAnyway",
                                              "labelSelector": {"matchLabels": labels}}]
    if anti_affinity:
        spec["affinity"] = {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 100, "podAffinityTerm": {"labelSelector": {"matchLabels": labels},
                                                "topologyKey": "kubernetes.io/hostname"}}]}}
    if daemon:
        spec["tolerations"] = [{"operator": "Exists"}]
        spec["hostNetwork"] = app == "kube-proxy"
    return spec


def workload(g, kind, name, ns, labels, pod_spec, replicas, owner=None, api="apps/v1", **extra_spec):
    spec = {"selector": {"matchLabels": dict(labels)}}
    if replicas is not None:
        spec["replicas"] = replicas
    spec.update(extra_spec)
    spec["template"] = {"metadata": {"labels": dict(labels)}, "spec": pod_spec}
    obj = {"apiVersion": api, "kind": kind,
           "metadata": meta(g, name, ns, dict(labels), owner, generation=1 + g.rng.randint(0, 5)),
           "spec": spec}
    if replicas is not None:
        obj["status"] = {"observedGeneration": obj["metadata"]["generation"], "replicas": replicas,
                         "readyReplicas": replicas, "availableReplicas": replicas}
        if kind != "ReplicaSet":
            obj["status"]["updatedReplicas"] = replicas
    obj["metadata"]["managedFields"] = [managed("kubectl-client-side-apply" if kind != "ReplicaSet" else "kube-controller-manager",
                                                "Update", {"metadata": {"labels": labels}, "spec": spec})]
    return obj


def pod(g, name, ns, owner, labels, spec, node_name, priority, node_ip=None, pending=False, hash_label=None):
    labels = dict(labels)
    if hash_label:
        labels.update(hash_label)
    pod_spec = {**spec, "containers": [dict(c) for c in spec["containers"]]}
    pod_spec["volumes"] = spec["volumes"] + [{"name": "kube-api-access-" + g.suffix(), "projected": {
        "sources": [{"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                    {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
                    {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}}],
        "defaultMode": 420}}]
    token = pod_spec["volumes"][-1]["name"]
    for c in pod_spec["containers"]:
        c["volumeMounts"] = c["volumeMounts"] + [{"name": token, "readOnly": True,
                                                  "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"}]
    pod_spec["tolerations"] = spec.get("tolerations") or DEFAULT_TOLERATIONS
    pod_spec["priority"] = priority
    pod_spec["enableServiceLinks"] = True
    pod_spec["preemptionPolicy"] = "Never" if priority < 0 else "PreemptLowerPriority"
    created = f"2026-11-{g.rng.randint(10, 21):02d}T{g.rng.randint(0, 23):02d}:{g.rng.randint(0, 59):02d}:00Z"
    qos = "Burstable"
    if pending:
        status = {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False", "lastProbeTime": None,
                  "lastTransitionTime": created, "reason": "Unschedulable",
                  "message": "0/5000 nodes are available: 5000 Insufficient cpu. preemption: 0/5000 nodes are available: 5000 No preemption victims found for incoming pod."}],
                  "qosClass": qos}
    else:
        pod_spec["nodeName"] = node_name
        pod_ip = g.ip("10.1")
        status = {"phase": "Running", "conditions": [
            {"type": t, "status": "True", "lastProbeTime": None, "lastTransitionTime": created}
            for t in ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled")],
            "hostIP": node_ip, "hostIPs": [{"ip": node_ip}], "podIP": pod_ip, "podIPs": [{"ip": pod_ip}],
            "startTime": created,
            "containerStatuses": [{"name": c["name"], "state": {"running": {"startedAt": created}}, "lastState": {},
                                   "ready": True, "restartCount": g.rng.choice([0, 0, 0, 1, 3]), "image": c["image"],
                                   "imageID": f"docker.io/library/{c['image']}@sha256:{g.rng.getrandbits(256):064x}",
                                   "containerID": f"containerd://{g.rng.getrandbits(256):064x}", "started": True}
                                  for c in pod_spec["containers"]],
            "qosClass": qos}
    annotations = {"kubectl.kubernetes.io/restartedAt": "2026-11-01T07:59:00Z"}
    metadata = meta(g, name, ns, labels, owner, annotations, generateName=name.rsplit("-", 1)[0] + "-")
    metadata["creationTimestamp"] = created
    metadata["managedFields"] = [
        managed("kube-controller-manager", "Update", {"metadata": {"annotations": annotations, "generateName": 1,
                "labels": labels, "ownerReferences": metadata["ownerReferences"]}, "spec": spec}, time=created)]
    if not pending:
        metadata["managedFields"].append(managed("kubelet", "Update", {"status": status}, subresource="status", time=created))
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": pod_spec, "status": status}


def pdb(g, name, ns, labels, replicas):
    spec = {"selector": {"matchLabels": dict(labels)}}
    if g.rng.random() < 0.5:
        spec["maxUnavailable"] = 1
    else:
        spec["minAvailable"] = max(1, replicas - 1) if g.rng.random() < 0.7 else "50%"
    if g.rng.random() < 0.3:
        spec["unhealthyPodEvictionPolicy"] = "AlwaysAllow"
    desired = replicas - 1 if "maxUnavailable" in spec else (spec["minAvailable"] if isinstance(spec["minAvailable"], int) else (replicas + 1) // 2)
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": meta(g, name, ns, generation=1), "spec": spec,
            "status": {"observedGeneration": 1, "disruptionsAllowed": max(0, replicas - desired),
                       "currentHealthy": replicas, "desiredHealthy": desired, "expectedPods": replicas,
                       "conditions": [{"type": "DisruptionAllowed", "status": "True" if replicas > desired else "False",
                                       "reason": "SufficientPods" if replicas > desired else "InsufficientPods",
                                       "lastTransitionTime": T0, "observedGeneration": 1, "message": ""}]}}


def pclass(g, name, value, default, policy):
    obj = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": meta(g, name),
           "value": value, "globalDefault": default, "description": f"{name} workloads"}
    obj["preemptionPolicy"] = policy or "PreemptLowerPriority"
    return obj


# -- the cluster ---------------------------------------------------------------------------------
def generate(nodes, seed=1):
    """Yield every object of a cluster with ``nodes`` nodes; the last yielded value is the targets dict."""
    g = Gen(seed * 1_000_003 + nodes)
    node_kinds = [(8, 32, "m6i.2xlarge"), (8, 32, "m6i.2xlarge"), (8, 64, "r6i.2xlarge")]
    node_objs = []
    for i in range(nodes):
        zone = ZONES[i % len(ZONES)]
        name = f"ip-10-0-{i // 250}-{i % 250 + 1}.{REGION}.compute.internal"
        n = node(g, name, zone, node_kinds[g.rng.randrange(3)])
        if i % 97 == 5:
            n["spec"]["taints"] = [{"key": "dedicated", "value": "batch", "effect": "NoSchedule"}]
        if i % 211 == 7:
            n["spec"]["unschedulable"] = True
            n["spec"].setdefault("taints", []).append({"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule", "timeAdded": NOW})
        node_objs.append(n)
        yield n
    for name, value, default, policy in CLASSES:
        yield pclass(g, name, value, default, policy)

    node_names = [n["metadata"]["name"] for n in node_objs]
    node_ips = {n["metadata"]["name"]: n["status"]["addresses"][0]["address"] for n in node_objs}
    targets = {"nodes": nodes, "node": node_names[len(node_names) // 2]}

    # DaemonSets: one pod per node.
    daemons = [("kube-system", "kube-proxy", "system-node-critical", 2000001000),
               ("monitoring", "node-exporter", "system-node-critical", 2000001000),
               ("logging", "fluent-bit", "system-cluster-critical", 2000000000)]
    for ns, app, pc, prio in daemons:
        spec = workload_spec(g, app, "infra", pc, False, False, daemon=True)
        ds = workload(g, "DaemonSet", app, ns, {"app": app}, spec, None)
        ds["status"] = {"currentNumberScheduled": nodes, "desiredNumberScheduled": nodes, "numberReady": nodes}
        yield ds
        for n in node_names:
            yield pod(g, g.unique(app), ns, ds, {"app": app}, spec, n, prio, node_ips[n],
                      hash_label={"controller-revision-hash": "6d4b8c7f9", "pod-template-generation": "1"})

    # Deployments and StatefulSets fill the remaining ~27 slots per node, round-robin over nodes.
    budget = nodes * (PODS_PER_NODE - len(daemons))
    slot, index = g.rng.randrange(nodes), 0
    while budget > 0:
        team = TEAMS[index % len(TEAMS)]
        ns = f"{team}-{index % max(1, nodes // 20)}"
        app = f"{team}-svc-{index}"
        replicas = min(budget, g.rng.choice([2, 3, 3, 4, 6, 8, 12, 20, 30, 50]))
        budget -= replicas
        pc = g.rng.choice(["tier-1", "standard", "standard", "standard", "batch-low", "platform-critical"])
        prio = dict((c[0], c[1]) for c in CLASSES)[pc]
        spread = replicas >= 3 and g.rng.random() < 0.4
        spec = workload_spec(g, app, team, pc, spread, g.rng.random() < 0.2)
        labels = {"app": app, "app.kubernetes.io/name": app, "team": team}
        if g.rng.random() < 0.15:
            owner = workload(g, "StatefulSet", app, ns, labels, spec, replicas, serviceName=app, podManagementPolicy="OrderedReady")
            yield owner
            names = [f"{app}-{i}" for i in range(replicas)]
            hash_label = {"controller-revision-hash": f"{app}-7b9c5d8f4", "apps.kubernetes.io/pod-index": "0"}
        else:
            deploy = workload(g, "Deployment", app, ns, labels, spec, replicas, strategy={
                "type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}})
            yield deploy
            pod_hash = g.suffix(9)
            owner = workload(g, "ReplicaSet", f"{app}-{pod_hash}", ns, {**labels, "pod-template-hash": pod_hash},
                             spec, replicas, deploy)
            yield owner
            old_hash = g.suffix(9)
            yield workload(g, "ReplicaSet", f"{app}-{old_hash}", ns, {**labels, "pod-template-hash": old_hash}, spec, 0, deploy)
            names = [g.unique(f"{app}-{pod_hash}") for _ in range(replicas)]
            hash_label = {"pod-template-hash": pod_hash}
            if spread and "rebalance" not in targets:
                targets["rebalance"] = {"namespace": ns, "workload": f"deployment/{app}"}
        if g.rng.random() < 0.7:
            yield pdb(g, f"{app}-pdb", ns, labels, replicas)
        for name in names:
            pending = g.rng.random() < 0.005
            node_name = node_names[slot % nodes]
            slot += 1
            p = pod(g, name, ns, owner, labels, spec, node_name, prio, node_ips[node_name], pending, hash_label)
            if "pod" not in targets and not pending and node_name == targets["node"]:
                targets["pod"] = {"namespace": ns, "name": name}
            yield p
        index += 1
    targets.setdefault("pod", {"namespace": "monitoring", "name": None})
    yield targets


def preemptor(nodes):
    """A pending pod that fits no node as is (7 of 8 CPUs): preemption must weigh every node."""
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "urgent-batch", "namespace": "payments-0", "labels": {"app": "urgent-batch"}},
            "spec": {"priorityClassName": "platform-critical", "priority": 1000000,
                     "containers": [{"name": "main", "image": IMAGES[4],
                                     "resources": {"requests": {"cpu": "7", "memory": "8Gi"}}}]}}


def write(nodes, out_dir, seed=1):
    """Write the dump, its targets and the preemptor pod; return the dump's path."""
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, f"cluster-{nodes}.json")
    tmp = path + ".tmp"
    targets = None
    with open(tmp, "w", encoding="utf-8") as f:
        f.write('{\n    "apiVersion": "v1",\n    "items": [\n')
        first = True
        for obj in generate(nodes, seed):
            if "kind" not in obj:
                targets = obj
                continue
            if not first:
                f.write(",\n")
            first = False
            text = json.dumps(obj, indent=4)
            f.write("        " + text.replace("\n", "\n        "))
        f.write('\n    ],\n    "kind": "List",\n    "metadata": {\n        "resourceVersion": ""\n    }\n}\n')
    os.replace(tmp, path)
    if targets["pod"]["name"] is None:
        raise SystemExit("generator found no target pod; use more nodes")
    with open(os.path.join(out_dir, f"cluster-{nodes}.targets.json"), "w") as f:
        json.dump(targets, f, indent=2, sort_keys=True)
    with open(os.path.join(out_dir, f"preemptor-{nodes}.yaml"), "w") as f:
        json.dump(preemptor(nodes), f, indent=2)  # JSON is YAML
    return path


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, action="append", help="cluster size (repeatable; default 100, 1000, 5000)")
    parser.add_argument("--out", default=DEFAULT_OUT, help="output directory (default benchmarks/data)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--force", action="store_true", help="regenerate even if the file exists")
    args = parser.parse_args(argv)
    for n in args.nodes or SIZES:
        path = os.path.join(args.out, f"cluster-{n}.json")
        if os.path.exists(path) and not args.force:
            print(f"{path}: exists (use --force to regenerate)", file=sys.stderr)
            continue
        write(n, args.out, args.seed)
        print(f"{path}: {os.path.getsize(path) / 1e6:.1f} MB", file=sys.stderr)


if __name__ == "__main__":
    main()
