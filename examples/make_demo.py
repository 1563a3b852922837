"""Regenerate demo-cluster.yaml: a small, realistic `kubectl get -o yaml` dump (deterministic).

    python examples/make_demo.py > examples/demo-cluster.yaml
"""

import sys
import uuid

import yaml

T0 = "2026-11-20T08:00:00Z"
NOW = "2026-11-22T09:00:00Z"
ZONES = ["eu-west-1a", "eu-west-1b", "eu-west-1c"]
POOLS = {"blue": ["node-a1", "node-b1", "node-c2"], "green": ["node-a2", "node-b2", "node-c1"]}  # label pool=


def uid(*parts):
    return str(uuid.uuid5(uuid.NAMESPACE_URL, "/".join(parts)))


def meta(name, namespace=None, labels=None, owner=None, **extra):
    m = {"name": name, "uid": uid(namespace or "", name), "creationTimestamp": T0}
    if namespace:
        m["namespace"] = namespace
    if labels:
        m["labels"] = labels
    if owner:
        m["ownerReferences"] = [{"apiVersion": owner["apiVersion"], "kind": owner["kind"], "name": owner["metadata"]["name"],
                                 "uid": owner["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}]
    m.update(extra)
    return m


def node(name, zone, cpu="4", memory="16Gi", ready=True, taints=None, heartbeat=NOW, unschedulable=False, pool=None):
    labels = {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "topology.kubernetes.io/zone": zone,
              "node.kubernetes.io/instance-type": "m5.xlarge", **({"pool": pool} if pool else {})}
    n = {"apiVersion": "v1", "kind": "Node", "metadata": meta(name, labels=labels),
         "spec": {}, "status": {"capacity": {"cpu": cpu, "memory": memory, "pods": "110", "ephemeral-storage": "100Gi"},
                                "allocatable": {"cpu": cpu, "memory": memory, "pods": "110", "ephemeral-storage": "95Gi"},
                                "conditions": [{"type": "MemoryPressure", "status": "False", "reason": "KubeletHasSufficientMemory", "lastHeartbeatTime": heartbeat},
                                               {"type": "Ready", "status": "True" if ready else "Unknown",
                                                "reason": "KubeletReady" if ready else "NodeStatusUnknown", "lastHeartbeatTime": heartbeat}]}}
    if taints:
        n["spec"]["taints"] = taints
    if unschedulable:
        n["spec"]["unschedulable"] = True
    return n


def pclass(name, value, default=False, policy="PreemptLowerPriority"):
    return {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": meta(name), "value": value,
            "globalDefault": default, "preemptionPolicy": policy, "description": f"{name} workloads"}


def container(name, image, requests=None, limits=None, **extra):
    c = {"name": name, "image": image, "resources": {}}
    if requests:
        c["resources"]["requests"] = requests
    if limits:
        c["resources"]["limits"] = limits
    c.update(extra)
    return c


def workload(kind, name, ns, replicas, labels, pod_spec, api="apps/v1", **spec):
    w = {"apiVersion": api, "kind": kind, "metadata": meta(name, ns, labels, generation=1),
         "spec": {"selector": {"matchLabels": labels}, "template": {"metadata": {"labels": labels}, "spec": pod_spec}, **spec}}
    if replicas is not None:
        w["spec"]["replicas"] = replicas
    return w


def pod(name, ns, owner, labels, spec, node_name, priority=0, ready=True, phase="Running", start=T0, qos=None, **extra):
    p = {"apiVersion": "v1", "kind": "Pod", "metadata": meta(name, ns, labels, owner),
         "spec": {**spec, "nodeName": node_name, "priority": priority, "terminationGracePeriodSeconds": spec.get("terminationGracePeriodSeconds", 30)},
         "status": {"phase": phase, "startTime": start, "qosClass": qos,
                    "conditions": [{"type": "Ready", "status": "True" if ready else "False"}]}}
    if node_name is None:
        del p["spec"]["nodeName"]
        p["status"] = {"phase": "Pending", "qosClass": qos, "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}]}
    p["metadata"].update(extra)
    return p


def pdb(name, ns, labels, min_available=None, max_unavailable=None, allowed=0, healthy=0, desired=0, expected=0, policy=None):
    spec = {"selector": {"matchLabels": labels}}
    if min_available is not None:
        spec["minAvailable"] = min_available
    if max_unavailable is not None:
        spec["maxUnavailable"] = max_unavailable
    if policy:
        spec["unhealthyPodEvictionPolicy"] = policy
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": meta(name, ns, generation=1), "spec": spec,
            "status": {"observedGeneration": 1, "disruptionsAllowed": allowed, "currentHealthy": healthy,
                       "desiredHealthy": desired, "expectedPods": expected}}


def build():
    objs = []
    pool_of = {name: pool for pool, names in POOLS.items() for name in names}
    nodes = [node(f"node-{z[-1]}{i}", z, pool=pool_of[f"node-{z[-1]}{i}"]) for z in ZONES for i in (1, 2)]
    nodes[5]["spec"]["taints"] = [{"key": "dedicated", "value": "batch", "effect": "NoSchedule"}]
    nodes.append(node("node-d1", "eu-west-1c", ready=False, heartbeat="2026-11-22T08:40:00Z"))
    objs += nodes
    objs += [pclass("business-critical", 500000), pclass("critical-service", 100000), pclass("standard", 1000, default=True),
             pclass("batch-low", -10, policy="Never"),
             pclass("system-cluster-critical", 2000000000), pclass("system-node-critical", 2000001000)]
    spread = [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "DoNotSchedule",
               "labelSelector": {"matchLabels": {"app": "web"}}}]
    web_spec = {"containers": [container("web", "nginx:1.27", {"cpu": "250m", "memory": "256Mi"}, {"cpu": "1", "memory": "512Mi"},
                                         lifecycle={"preStop": {"sleep": {"seconds": 5}}},
                                         livenessProbe={"httpGet": {"path": "/healthz", "port": 8080}, "terminationGracePeriodSeconds": 10})],
                "priorityClassName": "standard", "topologySpreadConstraints": spread}
    api_spec = {"containers": [container("api", "shop/api:4.2", {"cpu": "500m", "memory": "1Gi"}, {"cpu": "500m", "memory": "1Gi"})],
                "priorityClassName": "critical-service", "terminationGracePeriodSeconds": 60}
    db_spec = {"containers": [container("postgres", "postgres:16", {"cpu": "1", "memory": "4Gi"}, {"cpu": "1", "memory": "4Gi"})],
               "priorityClassName": "critical-service", "terminationGracePeriodSeconds": 120,
               "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "data-db"}}]}
    batch_spec = {"containers": [container("worker", "shop/batch:1.0")], "priorityClassName": "batch-low",
                  "tolerations": [{"key": "dedicated", "operator": "Equal", "value": "batch", "effect": "NoSchedule"}],
                  "volumes": [{"name": "scratch", "emptyDir": {}}]}
    ds_spec = {"containers": [container("exporter", "prom/node-exporter:1.8", {"cpu": "50m", "memory": "64Mi"}, {"memory": "128Mi"})],
               "tolerations": [{"operator": "Exists"}], "priorityClassName": "system-node-critical"}

    web = workload("Deployment", "web", "shop", 4, {"app": "web"}, web_spec)
    web_rs = workload("ReplicaSet", "web-5d8f7c", "shop", 4, {"app": "web", "pod-template-hash": "5d8f7c"}, web_spec)
    web_rs["metadata"] = meta("web-5d8f7c", "shop", {"app": "web"}, web)
    api = workload("Deployment", "api", "shop", 3, {"app": "api"}, api_spec)
    api_rs = workload("ReplicaSet", "api-7c9b4", "shop", 3, {"app": "api"}, api_spec)
    api_rs["metadata"] = meta("api-7c9b4", "shop", {"app": "api"}, api)
    db = workload("StatefulSet", "db", "shop", 3, {"app": "db"}, db_spec, serviceName="db")
    batch = workload("Deployment", "batch", "jobs", 2, {"app": "batch"}, batch_spec)
    batch_rs = workload("ReplicaSet", "batch-6f5d", "jobs", 2, {"app": "batch"}, batch_spec)
    batch_rs["metadata"] = meta("batch-6f5d", "jobs", {"app": "batch"}, batch)
    ds = workload("DaemonSet", "node-exporter", "monitoring", None, {"app": "node-exporter"}, ds_spec)
    objs += [web, web_rs, api, api_rs, db, batch, batch_rs, ds]

    # web: 4 replicas, zone a holds 3 (skew 3 > maxSkew 1 after a zone outage)
    for i, n in enumerate(["node-a1", "node-a2", "node-a1", "node-b1"]):
        objs.append(pod(f"web-5d8f7c-{i}x{i}", "shop", web_rs, {"app": "web", "pod-template-hash": "5d8f7c"}, web_spec, n,
                        priority=1000, qos="Burstable", start=f"2026-11-21T0{i}:00:00Z"))
    for i, n in enumerate(["node-a1", "node-b1", "node-c1"]):
        objs.append(pod(f"api-7c9b4-{i}q{i}", "shop", api_rs, {"app": "api"}, api_spec, n, priority=100000, qos="Guaranteed"))
    for i, n in enumerate(["node-a2", "node-b2", "node-c1"]):
        objs.append(pod(f"db-{i}", "shop", db, {"app": "db"}, db_spec, n, priority=100000, qos="Guaranteed"))
    for i, n in enumerate(["node-c2", "node-a2"]):
        objs.append(pod(f"batch-6f5d-{i}b{i}", "jobs", batch_rs, {"app": "batch"}, batch_spec, n, priority=-10, qos="BestEffort"))
    for n in nodes:
        objs.append(pod(f"node-exporter-{n['metadata']['name'][-2:]}", "monitoring", ds, {"app": "node-exporter"}, ds_spec,
                        n["metadata"]["name"], priority=2000001000, qos="Burstable", ready=n is not nodes[-1]))
    objs.append(pod("debug-shell", "default", None, {"run": "debug-shell"},
                    {"containers": [container("shell", "busybox:1.36", command=["sleep", "infinity"])]}, "node-b2", qos="BestEffort"))
    objs.append(pod("report-xyz", "jobs", None, {"app": "report"},
                    {"containers": [container("report", "shop/report:2", {"cpu": "3500m", "memory": "12Gi"})],
                     "priorityClassName": "business-critical"}, None, priority=500000, qos="Burstable"))
    objs.append(pod("legacy-0", "shop", None, {"app": "legacy"},
                    {"containers": [container("legacy", "shop/legacy:0.9", {"memory": "128Mi"})]}, "node-d1", qos="Burstable"))
    objs += [pdb("web", "shop", {"app": "web"}, max_unavailable=1, allowed=1, healthy=4, desired=3, expected=4),
             pdb("api", "shop", {"app": "api"}, min_available=2, allowed=1, healthy=3, desired=2, expected=3, policy="AlwaysAllow"),
             pdb("db", "shop", {"app": "db"}, min_available=3, allowed=0, healthy=3, desired=3, expected=3),
             pdb("shop-all", "shop", {"tier": "frontend"}, max_unavailable="50%", allowed=0, healthy=0, desired=0, expected=0)]
    add_queue(objs)
    objs += storage()
    return objs


def add_queue(objs):
    """queue: a one-replica StatefulSet on node-c1 whose volume is pinned to zone c (no PDB)."""
    spec = {"containers": [container("queue", "redis:7.4", {"cpu": "100m", "memory": "256Mi"})],
            "priorityClassName": "standard",
            "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "data-queue-0"}}]}
    sts = workload("StatefulSet", "queue", "jobs", 1, {"app": "queue"}, spec, serviceName="queue")
    objs += [sts, pod("queue-0", "jobs", sts, {"app": "queue"}, spec, "node-c1", priority=1000, qos="Burstable")]


def storage():
    """StorageClasses, claims and volumes: db's shared volume, queue's zonal one."""
    zonal = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": meta("zonal-ssd"),
             "provisioner": "ebs.csi.aws.com", "volumeBindingMode": "WaitForFirstConsumer", "reclaimPolicy": "Delete"}
    shared = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": meta("shared-nfs"),
              "provisioner": "nfs.csi.k8s.io", "volumeBindingMode": "Immediate", "reclaimPolicy": "Retain"}
    out = [zonal, shared]
    for ns, claim, pv, cls, modes, zone in (
            ("shop", "data-db", "pv-data-db", "shared-nfs", ["ReadWriteMany"], None),
            ("jobs", "data-queue-0", "pv-data-queue-0", "zonal-ssd", ["ReadWriteOnce"], "eu-west-1c")):
        out.append({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": meta(claim, ns),
                    "spec": {"accessModes": modes, "storageClassName": cls, "volumeName": pv,
                             "resources": {"requests": {"storage": "20Gi"}}},
                    "status": {"phase": "Bound", "accessModes": modes, "capacity": {"storage": "20Gi"}}})
        spec = {"accessModes": modes, "storageClassName": cls, "capacity": {"storage": "20Gi"},
                "claimRef": {"kind": "PersistentVolumeClaim", "namespace": ns, "name": claim},
                "persistentVolumeReclaimPolicy": "Retain"}
        labels = None
        if zone:
            spec["csi"] = {"driver": "ebs.csi.aws.com", "volumeHandle": f"vol-{uid(pv)[:8]}"}
            spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                {"key": "topology.kubernetes.io/zone", "operator": "In", "values": [zone]}]}]}}
            labels = {"topology.kubernetes.io/zone": zone}
        else:
            spec["nfs"] = {"server": "nfs.shop.internal", "path": "/exports/db"}
        out.append({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": meta(pv, labels=labels),
                    "spec": spec, "status": {"phase": "Bound"}})
    return out


if __name__ == "__main__":
    sys.stdout.write("# A small cluster dump in `kubectl get ... -o yaml` form; regenerate with examples/make_demo.py\n")
    yaml.safe_dump({"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": build()},
                   sys.stdout, sort_keys=False)
