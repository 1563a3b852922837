"""Cluster API's objects from the management cluster (``--management-kubeconfig`` / ``--management-snapshot``):
the Machines, MachineDeployments and MachineDrainRules that manage a workload cluster's nodes live there, not
in the workload cluster. They are matched to its nodes by ``status.nodeRef.name`` (``profiles/capi.read``)."""

from kubectl_safety.cluster.source import Query, load_snapshot
from kubectl_safety.model.kinds import TABLE

CAPI_GROUP = "cluster.x-k8s.io"
KINDS = tuple(k for k in TABLE if k.api_group == CAPI_GROUP)


def merge_management(snapshot, *, kubeconfig=None, snapshot_path=None, request_timeout="0", warnings=None):
    """The workload cluster's ``snapshot`` with its Cluster API objects replaced by the management
    cluster's: read live through ``kubeconfig`` (one optional LIST per kind: a kind it does not serve is
    recorded as not served) or from the dump ``snapshot_path``."""
    if snapshot_path:
        management = load_snapshot(snapshot_paths=(snapshot_path,))
    else:
        from kubectl_safety.cluster.live import Connection

        connection = Connection(kubeconfig=kubeconfig, request_timeout=request_timeout,
                                user_agent_suffix=" (management)")
        management = load_snapshot(connection=connection, queries=[Query(k.resource, optional=True) for k in KINDS],
                                   warnings=warnings)
    resources = {k.resource for k in KINDS}
    unread = {r: why for r, why in snapshot.unread.items() if r not in resources}
    unread.update({r: f"{why} (management cluster)" for r, why in management.unread.items() if r in resources})
    return snapshot.replace(unread=unread, **{k.field: getattr(management, k.field) for k in KINDS})
