"""Helpers for integration tests against the local control plane (controlplane/cluster.py).

Objects are plain dicts, created with the built kubectl; ``RawApi`` sends single requests
when a test needs the exact HTTP status and body.
"""

from __future__ import annotations

import base64
import http.client
import json
import ssl
import sys
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from urllib.parse import urlsplit

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from controlplane.cluster import (  # noqa: E402
    KWOK_NODE_ANNOTATION,
    Cluster,
    ClusterError,
    run_root,
)
from tests.ci import in_ci  # noqa: E402,F401  (the integration suite's one CI test)

MUTATING_VERBS = frozenset({"create", "update", "patch", "delete", "deletecollection"})


def wait_until(check, timeout: float = 60, what: str = "condition", interval: float = 0.5):
    """Poll ``check()`` until it returns something truthy and return that; fail on timeout."""
    deadline = time.monotonic() + timeout
    while True:
        result = check()
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(interval)


def remove_stale_clusters(prefix: str = "pytest-") -> None:
    """Delete test clusters left behind by pytest sessions that no longer run."""
    root = run_root()
    for workdir in root.glob(f"{prefix}*") if root.is_dir() else []:
        pid = workdir.name[len(prefix):]
        if pid.isdigit() and not Path(f"/proc/{pid}").exists():
            try:
                Cluster(workdir.name).down()
            except ClusterError as err:
                print(f"warning: {err}", file=sys.stderr)


def get_json(cluster: Cluster, *args: str) -> dict:
    """``kubectl get ARGS -o json`` parsed."""
    return json.loads(cluster.kubectl("get", *args, "-o", "json").stdout)


def create(cluster: Cluster, namespace: str | None, *objects: dict) -> list[dict]:
    """Create objects (dicts) in ``namespace`` (None: as given) and return them as stored."""
    args = ["-n", namespace] if namespace else []
    manifest = json.dumps({"apiVersion": "v1", "kind": "List", "items": list(objects)})
    out = cluster.kubectl("create", *args, "-f", "-", "-o", "json", input=manifest).stdout
    return _json_documents(out)


def _json_documents(text: str) -> list[dict]:
    """Parse kubectl's output of one JSON document per object (or a List)."""
    decoder, docs, pos = json.JSONDecoder(), [], 0
    while text[pos:].strip():
        doc, end = decoder.raw_decode(text, pos + len(text[pos:]) - len(text[pos:].lstrip()))
        docs.extend(doc["items"] if doc.get("kind") == "List" else [doc])
        pos = end
    return docs


# -- nodes --------------------------------------------------------------------------------


def node(
    name: str,
    *,
    cpu: str = "4",
    memory: str = "16Gi",
    pods: str = "110",
    zone: str | None = None,
    labels: dict | None = None,
    taints: list[dict] | None = None,
    kwok: bool = True,
) -> dict:
    """A Node manifest. ``kwok=False`` leaves it unmanaged: no heartbeats, pods never run."""
    all_labels = {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "type": "kwok"}
    if zone:
        all_labels["topology.kubernetes.io/zone"] = zone
    all_labels.update(labels or {})
    resources = {"cpu": cpu, "memory": memory, "pods": pods}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": all_labels,
            "annotations": {KWOK_NODE_ANNOTATION: "fake"} if kwok else {},
        },
        "spec": {"taints": taints or []},
        "status": {"capacity": resources, "allocatable": resources},
    }


def create_node(cluster: Cluster, name: str, *, ready: bool = True, timeout: float = 60, **kwargs) -> dict:
    """Create a node and wait for it to be Ready, or (``ready=False``) mark it NotReady.

    A NotReady node is not managed by kwok; its Ready condition is set to False here and
    the node lifecycle controller later turns it Unknown and taints it, as for a dead kubelet.
    """
    create(cluster, None, node(name, kwok=ready, **kwargs))
    if ready:
        cluster.kubectl("wait", f"node/{name}", "--for=condition=Ready", f"--timeout={int(timeout)}s",
                        timeout=timeout + 30)
        _wait_untainted(cluster, name, NOT_READY_TAINT, timeout)
    else:
        set_node_ready(cluster, name, False)
    return get_json(cluster, f"node/{name}")


NOT_READY_TAINT = "node.kubernetes.io/not-ready"


def _wait_untainted(cluster: Cluster, name: str, key: str, timeout: float) -> None:
    """Until the node lifecycle controller has lifted the taint ``key`` (it lags the Ready
    condition, by seconds on a loaded machine: a plan made before sees a node that refuses pods)."""
    deadline = time.monotonic() + timeout
    while any(t.get("key") == key for t in (get_json(cluster, f"node/{name}").get("spec") or {}).get("taints") or []):
        if time.monotonic() > deadline:
            raise AssertionError(f"node {name} still has the taint {key} after {timeout:.0f} s")
        time.sleep(0.2)


def set_node_ready(cluster: Cluster, name: str, ready: bool) -> None:
    """Write the node's Ready condition (only sticks on nodes kwok does not manage)."""
    now = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    condition = {
        "type": "Ready",
        "status": "True" if ready else "False",
        "reason": "KubeletReady" if ready else "KubeletNotReady",
        "message": "set by test" if ready else "container runtime is down (set by test)",
        "lastHeartbeatTime": now,
        "lastTransitionTime": now,
    }
    patch = json.dumps({"status": {"conditions": [condition]}})
    cluster.kubectl("patch", f"node/{name}", "--subresource=status", "--type=strategic", "-p", patch)


# -- workloads ------------------------------------------------------------------------------


def pod_spec(
    *,
    node_name: str | None = None,
    node_selector: dict | None = None,
    priority_class: str | None = None,
    requests: dict | None = None,
    limits: dict | None = None,
    tolerations: list[dict] | None = None,
) -> dict:
    """A one-container pod spec; requests/limits decide the QoS class."""
    container = {"name": "main", "image": "registry.example/app:1"}
    resources = {k: v for k, v in (("requests", requests), ("limits", limits)) if v}
    if resources:
        container["resources"] = resources
    spec = {"containers": [container], "terminationGracePeriodSeconds": 0}
    optional = {
        "nodeName": node_name,
        "nodeSelector": node_selector,
        "priorityClassName": priority_class,
        "tolerations": tolerations,
    }
    spec.update({k: v for k, v in optional.items() if v})
    return spec


def pod(name: str, labels: dict | None = None, **spec) -> dict:
    """A bare Pod manifest; keyword arguments go to ``pod_spec``."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": labels or {"app": name}},
        "spec": pod_spec(**spec),
    }


def deployment(name: str, replicas: int, labels: dict | None = None, **spec) -> dict:
    """A Deployment manifest whose pods carry ``labels`` (default ``app: name``)."""
    labels = labels or {"app": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": labels},
            "template": {"metadata": {"labels": labels}, "spec": pod_spec(**spec)},
        },
    }


def daemonset(namespace: str) -> dict:
    """DaemonSet ``agent`` on every node of the test's pool."""
    labels = {"app": "agent"}
    spec = pod("agent", labels, node_selector={"pool": namespace})["spec"]
    return {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "agent"},
            "spec": {"selector": {"matchLabels": labels}, "template": {"metadata": {"labels": labels}, "spec": spec}}}


def pdb(name: str, selector: dict, *, min_available=None, max_unavailable=None) -> dict:
    """A policy/v1 PodDisruptionBudget manifest matching ``selector`` labels."""
    spec = {"selector": {"matchLabels": selector}}
    if min_available is not None:
        spec["minAvailable"] = min_available
    if max_unavailable is not None:
        spec["maxUnavailable"] = max_unavailable
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": name}, "spec": spec}


def autoscaler(target: str, minimum: int, maximum: int, scale_down: dict) -> dict:
    """An autoscaling/v2 HorizontalPodAutoscaler of Deployment ``target`` at 50% CPU utilization, with
    ``behavior.scaleDown``."""
    return {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": target},
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": target},
                     "minReplicas": minimum, "maxReplicas": maximum,
                     "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {
                         "type": "Utilization", "averageUtilization": 50}}}],
                     "behavior": {"scaleDown": scale_down}}}


def priority_class(name: str, value: int, *, global_default: bool = False) -> dict:
    """A PriorityClass manifest (cluster-scoped)."""
    return {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": name},
        "value": value,
        "globalDefault": global_default,
    }


def _is_ready(p: dict) -> bool:
    conditions = p.get("status", {}).get("conditions", [])
    return any(c["type"] == "Ready" and c["status"] == "True" for c in conditions)


class ReadyRecorder:
    """A WATCH of a namespace's pods (of a label selector): after every change, the count of Ready,
    not terminating pods in each group (``group(pod)``; one group, None, by default)."""

    def __init__(self, cluster: Cluster, namespace: str, selector: str | None = None, group=lambda pod: None):
        import threading

        from kubectl_safety.cluster.live import Connection
        from kubectl_safety.engine.watch import WatchGroup

        self.group = group
        self.watches = WatchGroup(Connection(kubeconfig=str(cluster.kubeconfig)))
        self.watch = self.watches.watch("pods", namespace, label_selector=selector)
        self.counts = [self.count()]
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)

    def count(self) -> dict:
        counts: dict = {}
        for p in self.watch.items():
            if not p["metadata"].get("deletionTimestamp") and _is_ready(p):
                key = self.group(p)
                counts[key] = counts.get(key, 0) + 1
        return counts

    def run(self):
        seen = self.watches.changes()
        while not self.stop.is_set():
            self.watches.wait_for(lambda: self.watches.changes() != seen or self.stop.is_set(), time.monotonic() + 1)
            if self.watches.changes() != seen:
                seen = self.watches.changes()
                self.counts.append(self.count())

    def lowest(self, key=None) -> int:
        """The fewest Ready pods group ``key`` had at any point."""
        return min(c.get(key, 0) for c in self.counts)

    @property
    def minimum(self) -> int:
        return self.lowest()

    @property
    def changes(self) -> int:
        return len(self.counts) - 1

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()
        self.watches.stop()


def wait_pods_running(
    cluster: Cluster, namespace: str, selector: str | None = None, count: int | None = None,
    *, ready: bool = True, timeout: float = 60,
) -> list[dict]:
    """Wait until ``count`` (default: all, at least one) matching pods are Running (and Ready)."""
    args = ["pods", "-n", namespace] + (["-l", selector] if selector else [])

    def running():
        pods = get_json(cluster, *args)["items"]
        ok = [p for p in pods if p["status"].get("phase") == "Running" and (_is_ready(p) or not ready)]
        enough = len(ok) == count if count is not None else pods and len(ok) == len(pods)
        return ok if enough else None

    return wait_until(running, timeout, f"pods {selector or '(all)'} Running in {namespace}")


def pool_nodes(make_node, namespace: str, count: int, prefix: str = "pool") -> list[str]:
    """``count`` Ready nodes labelled ``pool=<namespace>``, so a test's pods stay on its own nodes."""
    return [make_node(f"{prefix}-{namespace[-6:]}-{i}", labels={"pool": namespace})["metadata"]["name"]
            for i in range(count)]


def pool_web(replicas: int, namespace: str, **spec) -> dict:
    """Deployment ``web`` confined to the test's node pool."""
    return deployment("web", replicas, node_selector={"pool": namespace}, requests={"cpu": "100m"}, **spec)


def place_on(cluster: Cluster, namespace: str, spare: list[str], objects: list[dict], count: int) -> None:
    """Create ``objects`` while the ``spare`` nodes are cordoned; wait for ``count`` pods to run."""
    for name in spare:
        cluster.kubectl("cordon", name)
    create(cluster, namespace, *objects)
    wait_pods_running(cluster, namespace, count=count, ready=False)
    for name in spare:
        cluster.kubectl("uncordon", name)


def pods_by_uid(cluster: Cluster, namespace: str) -> dict:
    """The namespace's pods keyed by UID."""
    return {p["metadata"]["uid"]: p for p in get_json(cluster, "pods", "-n", namespace)["items"]}


def wait_pdb_settled(
    cluster: Cluster, namespace: str, name: str, *, disruptions_allowed: int | None = None,
    current_healthy: int | None = None, expected_pods: int | None = None, timeout: float = 60,
) -> dict:
    """Wait until the disruption controller has seen the PDB's latest spec and counts match."""

    def settled():
        obj = get_json(cluster, "pdb", name, "-n", namespace)
        status = obj.get("status", {})
        wanted = {"disruptionsAllowed": disruptions_allowed, "currentHealthy": current_healthy,
                  "expectedPods": expected_pods}
        if status.get("observedGeneration") != obj["metadata"]["generation"]:
            return None
        if any(v is not None and status.get(k) != v for k, v in wanted.items()):
            return None
        return obj

    return wait_until(settled, timeout, f"PDB {namespace}/{name} status to settle")


# -- RBAC -----------------------------------------------------------------------------------


def grant_namespace_access(
    cluster: Cluster, user: str, namespace: str, *, verbs=("*",),
    resources=("*",), api_groups=("", "apps", "policy"),
) -> None:
    """Give ``user`` a Role + RoleBinding in ``namespace`` only (nothing cluster-wide)."""
    name = f"test-access-{user}"
    role = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "Role",
        "metadata": {"name": name},
        "rules": [{"apiGroups": list(api_groups), "resources": list(resources), "verbs": list(verbs)}],
    }
    binding = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": {"name": name},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}],
    }
    create(cluster, namespace, role, binding)


@dataclass(frozen=True)
class Response:
    """An API response: HTTP status and decoded JSON body."""

    status: int
    body: dict


class RawApi:
    """Minimal HTTPS client for the API server, authenticated with the kubeconfig's admin cert.

    Status codes and bodies come back exactly as the server sent them; ``as_user``
    impersonates (the admin is in system:masters, which may impersonate anyone).
    """

    def __init__(self, cluster: Cluster):
        view = cluster.kubectl("config", "view", "--raw", "--minify", "-o", "json").stdout
        config = json.loads(view)
        server, user = config["clusters"][0]["cluster"], config["users"][0]["user"]
        pem_dir = cluster.workdir / "raw-api-pki"
        url = urlsplit(server["server"])
        self.host, self.port = url.hostname, url.port or 443
        self.context = ssl.create_default_context(cafile=_pem(server, "certificate-authority", pem_dir))
        self.context.load_cert_chain(_pem(user, "client-certificate", pem_dir), _pem(user, "client-key", pem_dir))

    def request(
        self, method: str, path: str, body: dict | None = None, *,
        as_user: str | None = None, user_agent: str = "kubectl-safety-tests/0",
    ) -> Response:
        """Send one request; never raises for HTTP error statuses."""
        headers = {"Accept": "application/json", "User-Agent": user_agent}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        if as_user:
            headers["Impersonate-User"] = as_user
        conn = http.client.HTTPSConnection(self.host, self.port, context=self.context, timeout=30)
        try:
            conn.request(method, path, body=data, headers=headers)
            resp = conn.getresponse()
            raw = resp.read()
        finally:
            conn.close()
        return Response(resp.status, json.loads(raw) if raw else {})

    def evict(self, namespace: str, name: str, **kwargs) -> Response:
        """POST a policy/v1 Eviction for a pod."""
        body = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": name, "namespace": namespace}}
        return self.request("POST", f"/api/v1/namespaces/{namespace}/pods/{name}/eviction", body, **kwargs)


def _pem(section: dict, key: str, pem_dir: Path) -> str | None:
    """Path of a kubeconfig PEM entry, writing inline ``<key>-data`` to a file if needed."""
    if section.get(key):
        return section[key]
    data = section.get(f"{key}-data")
    if not data:
        return None
    pem_dir.mkdir(exist_ok=True)
    path = pem_dir / f"{key}.pem"
    path.write_bytes(base64.b64decode(data))
    return str(path)


# -- audit log ------------------------------------------------------------------------------


@dataclass(frozen=True)
class AuditEntry:
    """One completed API request from the audit log."""

    verb: str
    resource: str  # "pods", "pods/eviction", or the URI for non-resource requests
    namespace: str | None
    name: str | None
    code: int | None
    user: str
    user_agent: str
    received: datetime
    impersonated_user: str | None = None  # set when the request carried Impersonate-User


def _parse_time(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


class AuditLog:
    """Reader for the API server's JSON-lines audit log."""

    def __init__(self, path: Path):
        self.path = Path(path)

    @staticmethod
    def now() -> datetime:
        """A timestamp to pass as ``since`` (same clock as the API server)."""
        return datetime.now(timezone.utc)

    def entries(self, since: datetime | None = None) -> list[AuditEntry]:
        """All completed requests received at or after ``since``."""
        result = []
        for line in self.path.read_text().splitlines():
            event = json.loads(line)
            if event.get("stage") != "ResponseComplete":
                continue
            entry = _entry(event)
            if since is None or entry.received >= since:
                result.append(entry)
        return result

    def mutating_requests(
        self, since: datetime | None = None, user_agent_contains: str | None = None
    ) -> list[AuditEntry]:
        """Completed create/update/patch/delete requests, optionally from one client."""
        return [
            e
            for e in self.entries(since)
            if e.verb in MUTATING_VERBS and (user_agent_contains is None or user_agent_contains in e.user_agent)
        ]


def _entry(event: dict) -> AuditEntry:
    ref = event.get("objectRef") or {}
    resource = ref.get("resource") or event.get("requestURI", "")
    if ref.get("subresource"):
        resource += "/" + ref["subresource"]
    return AuditEntry(
        verb=event["verb"],
        resource=resource,
        namespace=ref.get("namespace"),
        name=ref.get("name"),
        code=(event.get("responseStatus") or {}).get("code"),
        user=event.get("user", {}).get("username", ""),
        user_agent=event.get("userAgent", ""),
        received=_parse_time(event["requestReceivedTimestamp"]),
        impersonated_user=(event.get("impersonatedUser") or {}).get("username"),
    )
