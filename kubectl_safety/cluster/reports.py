"""``check --publish``: write the readiness reports with server-side apply and delete the stale ones we own.

Every request goes through ``Connection.request`` (one place to move onto a shared client). The reports
are applied with field manager ``kubectl-safety`` (``force``: ours to own); then the reports carrying
our label that this run did not write (a namespace whose findings are gone) are deleted.
"""

from urllib.parse import quote

from kubectl_safety.cluster.client import status_causes
from kubectl_safety.cluster.live import check
from kubectl_safety.errors import ClusterError

FIELD_MANAGER = "kubectl-safety"
APPLY = "application/apply-patch+yaml"  # JSON is YAML: the apply body goes as JSON


def served(connection, groups) -> list:
    """The keys of ``groups`` (key: apiVersion) whose group/version the server serves (discovery)."""
    found = []
    for key, version in groups.items():
        status, payload = connection.request("GET", f"/apis/{version}")
        if 200 <= status < 300:
            found.append(key)
        elif status != 404:
            check(status, payload, version)
    return found


def publish(connection, objects, resources, label) -> dict:
    """Apply ``objects`` (report dicts); delete the ``label``-ed reports of ``resources`` (apiVersion ->
    (cluster resource, namespaced resource)) not among them. Returns {"applied": [...], "deleted": [...]}
    as ``KIND[/NAMESPACE]/NAME`` strings."""
    applied, keep = [], set()
    for obj in objects:
        path = _path(obj["apiVersion"], _plural(obj, resources), obj["metadata"].get("namespace"),
                     obj["metadata"]["name"])
        status, payload = connection.request("PATCH", path, body=obj, content_type=APPLY,
                                             query={"fieldManager": FIELD_MANAGER, "force": "true",
                                                    "fieldValidation": "Strict"})
        if status == 403 and "NamespaceTerminating" in status_causes(payload):  # its namespace goes, and its report with it
            continue
        check(status, payload, _plural(obj, resources), obj["metadata"]["name"],
              obj["metadata"].get("namespace"), verb="patch")
        keep.add(path)
        applied.append(_shown(obj["kind"], obj["metadata"]))
    deleted = []
    for version, (cluster_plural, namespaced_plural) in resources.items():
        for plural in (cluster_plural, namespaced_plural):
            status, payload = connection.request("GET", _path(version, plural),
                                                 query={"labelSelector": label})
            check(status, payload, plural, verb="list")
            for item in payload.get("items") or []:
                meta = item.get("metadata") or {}
                path = _path(version, plural, meta.get("namespace"), meta.get("name"))
                if path in keep:
                    continue
                status, payload = connection.request("DELETE", path)
                if status != 404:
                    check(status, payload, plural, meta.get("name"), meta.get("namespace"), verb="delete")
                deleted.append(_shown(item.get("kind") or plural, meta))
    return {"applied": applied, "deleted": deleted}


def _plural(obj, resources) -> str:
    cluster_plural, namespaced_plural = resources[obj["apiVersion"]]
    return namespaced_plural if obj["metadata"].get("namespace") else cluster_plural


def _path(version, plural, namespace=None, name=None) -> str:
    path = f"/apis/{version}"
    if namespace:
        path += f"/namespaces/{quote(namespace, safe='')}"
    path += f"/{plural}"
    return path + (f"/{quote(name, safe='')}" if name else "")


def _shown(kind, meta) -> str:
    ns = meta.get("namespace")
    return f"{kind}/{ns}/{meta.get('name')}" if ns else f"{kind}/{meta.get('name')}"


def none_served(wanted) -> ClusterError:
    return ClusterError(f"the cluster serves none of {', '.join(wanted)}: install the OpenReports CRDs "
                        "(openreports.io/v1alpha1) or the wgpolicyk8s.io/v1alpha2 PolicyReport CRDs")
