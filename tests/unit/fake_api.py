"""An in-memory API server for the engine's tests: LIST with a resourceVersion, WATCH streams,
evictions (PDB-checked), cordon patches; every request counted."""

import threading


def pod(name, node, uid=None, namespace="ns", owner="rs-a", priority=0, labels=None, ready=True):
    meta = {"name": name, "namespace": namespace, "uid": uid or f"uid-{name}", "labels": labels or {"app": "a"}}
    if owner:
        meta["ownerReferences"] = [{"kind": "ReplicaSet", "name": owner, "uid": f"uid-{owner}", "controller": True}]
    return {"metadata": meta, "spec": {"nodeName": node, "priority": priority},
            "status": {"phase": "Running",
                       "conditions": [{"type": "Ready", "status": "True" if ready else "False"}]}}


def node(name, ready=True, **annotations):
    return {"metadata": {"name": name, "annotations": dict(annotations)}, "spec": {},
            "status": {"conditions": [{"type": "Ready", "status": "True" if ready else "False"}]}}


def entry(p, action="evict", pdb=None):
    """The drain plan's ``PodAction`` for the raw pod ``p``."""
    from kubectl_safety.analysis.plans.common import Action
    from kubectl_safety.analysis.plans.drain import PodAction

    m = p["metadata"]
    return PodAction(m["namespace"], m["name"], p["spec"]["nodeName"], m["uid"], p["spec"].get("priority", 0),
                     Action(action), (), pdb, 1, None, 0)


WORKLOADS = ("deployments", "replicasets", "horizontalpodautoscalers")


def _merge(target, patch):
    """A JSON merge patch (None removes a key)."""
    if not isinstance(patch, dict):
        return patch
    out = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = _merge(out.get(key), value)
    return out


class FakeApi:
    """Objects by resource; ``on_evict(api, pod)`` decides what an accepted eviction does (default: delete)."""

    def __init__(self, pods=(), nodes=(), pdbs=(), on_evict=None, expire_first_watch=False, forbid_watch=()):
        self.cond = threading.Condition()
        self.version = 1
        self.store = {"pods": {}, "nodes": {}, "poddisruptionbudgets": {}, "leases": {}}
        self.log = []  # (version, resource, type, object)
        self.requests = []
        self.delivered = 0  # objects sent (LIST items, WATCH events): the bytes, counted in objects
        self.on_evict = on_evict
        self.expire_first_watch = expire_first_watch
        self.forbid_watch = set(forbid_watch)  # resources whose WATCH RBAC forbids (403)
        self.events = []  # the events.k8s.io/v1 Events created
        self.event_status = 201  # what creating one answers (403: RBAC without create on events)
        self.closed = False
        self.conflicts = {}  # resource: how many PATCHes of it answer 409 before one is applied
        self.refuse = {}  # resource: the status its PATCHes answer (as RBAC or admission would refuse)
        for p in pods:
            self.put("pods", p)
        for n in nodes:
            self.put("nodes", n)
        for b in pdbs:
            self.put("poddisruptionbudgets", b)

    # -- state -----------------------------------------------------------------------------
    def key(self, obj):
        m = obj["metadata"]
        return f"{m.get('namespace') or ''}/{m['name']}"

    def put(self, resource, obj, kind="ADDED"):
        with self.cond:
            self.version += 1
            obj["metadata"]["resourceVersion"] = str(self.version)
            if kind == "DELETED":
                self.store[resource].pop(self.key(obj), None)
            else:
                kind = "MODIFIED" if self.key(obj) in self.store.setdefault(resource, {}) and kind == "ADDED" else kind
                self.store[resource][self.key(obj)] = obj
            self.log.append((self.version, resource, kind, obj))
            self.cond.notify_all()

    def delete(self, resource, obj):
        self.put(resource, obj, "DELETED")

    def evictions(self):
        return [path for method, path in self.requests if path.endswith("/eviction")]

    # -- Connection's interface ------------------------------------------------------------
    host = "https://fake"

    def get(self, resource, name, namespace=None, optional=False):
        self.requests.append(("GET", resource))
        obj = self.store.get(resource, {}).get(f"{namespace or ''}/{name}")
        self.delivered += obj is not None
        return obj

    def list(self, resource, namespace=None, *, field_selector=None, label_selector=None, chunk_size=500, checked=None):
        items, _ = self.list_versioned(resource, namespace, field_selector=field_selector)
        return {"kind": "List", "apiVersion": "v1", "items": items}

    @staticmethod
    def _matches(obj, field_selector):
        if not field_selector:
            return True
        key, _, value = field_selector.partition("=")
        if key == "spec.nodeName":
            return obj["spec"].get("nodeName") == value
        if key == "metadata.name":
            return obj["metadata"]["name"] == value
        return True

    def list_versioned(self, resource, namespace=None, *, field_selector=None, label_selector=None, chunk_size=500):
        with self.cond:
            self.requests.append(("LIST", resource))
            items = [o for o in self.store.setdefault(resource, {}).values()
                     if (namespace is None or o["metadata"].get("namespace") == namespace)
                     and self._matches(o, field_selector)]
            self.delivered += len(items)
            return [dict(o) for o in items], str(self.version)

    def watch(self, resource, namespace=None, *, resource_version, field_selector=None, label_selector=None,
              timeout_seconds=300, on_stream=None):
        with self.cond:
            self.requests.append(("WATCH", resource))
            if resource in self.forbid_watch:
                yield {"type": "ERROR", "object": {"kind": "Status", "code": 403, "message": "forbidden"}}
                return
            if self.expire_first_watch:
                self.expire_first_watch = False
                yield {"type": "ERROR", "object": {"kind": "Status", "code": 410, "reason": "Expired"}}
                return
        seen = int(resource_version)
        waited = 0
        while not self.closed and waited < 20:
            with self.cond:
                fresh = [e for e in self.log if e[0] > seen]
                if not fresh:
                    self.cond.wait(0.1)
                    waited += 1
                    continue
            for version, res, kind, obj in fresh:
                seen = version
                if res == resource and (namespace is None or obj["metadata"].get("namespace") == namespace) \
                        and self._matches(obj, field_selector):
                    self.delivered += 1
                    yield {"type": kind, "object": obj}

    def request(self, method, path, *, query=None, body=None):
        self.requests.append((method, path))
        parts = path.strip("/").split("/")
        if path.endswith("/eviction"):
            namespace, name = parts[3], parts[5]
            with self.cond:
                p = self.store["pods"].get(f"{namespace}/{name}")
            if p is None:
                return 404, {"message": "not found"}
            uid = ((body.get("deleteOptions") or {}).get("preconditions") or {}).get("uid")
            if uid and uid != p["metadata"]["uid"]:
                return 409, {"message": "uid precondition"}
            for b in list(self.store["poddisruptionbudgets"].values()):
                if b["metadata"]["namespace"] == namespace and all(
                        p["metadata"]["labels"].get(k) == v for k, v in b["spec"]["selector"]["matchLabels"].items()):
                    if b["status"]["disruptionsAllowed"] < 1:
                        return 429, {"kind": "Status", "status": "Failure", "message": "would violate the budget",
                                     "details": {"causes": [{"reason": "DisruptionBudget", "message": "needs more"}]}}
                    b = dict(b, status=dict(b["status"], disruptionsAllowed=b["status"]["disruptionsAllowed"] - 1))
                    self.put("poddisruptionbudgets", b)
            (self.on_evict or FakeApi.remove)(self, p)
            return 201, {"kind": "Status", "status": "Success"}
        if "leases" in parts:
            return self._lease(method, parts, body)
        if path.startswith("/apis/events.k8s.io/v1/") and method == "POST":
            if self.event_status >= 300:
                return self.event_status, {"message": "events.events.k8s.io is forbidden"}
            self.events.append(body)
            return 201, body
        if len(parts) > 3 and parts[-4] == "namespaces" and parts[-2] in WORKLOADS:
            return self._workload(method, parts[-2], f"{parts[-3]}/{parts[-1]}", body)
        if parts[-2] == "nodes":
            with self.cond:
                node = self.store["nodes"].get(f"/{parts[-1]}")
            if node is None:
                return 404, {"message": "not found"}
            if method == "GET":
                return 200, node
            if method == "PATCH":
                spec = dict(node.get("spec") or {}, **(body.get("spec") or {}))
                meta = dict(node["metadata"])
                if "metadata" in body:
                    annotations = dict(meta.get("annotations") or {}, **body["metadata"].get("annotations", {}))
                    meta["annotations"] = {k: v for k, v in annotations.items() if v is not None}
                patched = dict(node, spec=spec, metadata=meta)
                self.put("nodes", patched)
                return 200, patched
        return 404, {"message": f"no fake for {method} {path}"}

    def _workload(self, method, resource, key, body):
        """GET, or a merge PATCH with the resourceVersion precondition, of a Deployment, ReplicaSet or HPA."""
        with self.cond:
            current = self.store.setdefault(resource, {}).get(key)
        if current is None:
            return 404, {"message": "not found"}
        if method == "GET":
            return 200, current
        if method != "PATCH":
            return 405, {}
        if resource in self.refuse:
            return self.refuse[resource], {"message": "refused"}
        if self.conflicts.get(resource):
            self.conflicts[resource] -= 1
            return 409, {"message": "the object has been modified"}
        wanted = (body.get("metadata") or {}).get("resourceVersion")
        if wanted and wanted != current["metadata"]["resourceVersion"]:
            return 409, {"message": "the object has been modified"}
        patched = _merge(current, body)
        self.put(resource, patched)
        return 200, patched

    def _lease(self, method, parts, body):
        namespace = parts[parts.index("namespaces") + 1]
        if method == "POST":
            key = f"{namespace}/{body['metadata']['name']}"
            if key in self.store["leases"]:
                return 409, {"message": "exists"}
            self.put("leases", body)
            return 201, body
        key = f"{namespace}/{parts[-1]}"
        current = self.store["leases"].get(key)
        if current is None:
            return 404, {"message": "not found"}
        if method == "GET":
            return 200, current
        if method == "PUT":
            self.put("leases", body)
            return 200, body
        if method == "DELETE":
            self.delete("leases", current)
            return 200, {}
        return 405, {}

    @staticmethod
    def remove(api, p):
        api.delete("pods", p)
