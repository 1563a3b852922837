"""Amazon EKS managed node group update (closed: documented behaviour only).

Sources (awsdocs/amazon-eks-user-guide, latest/ug/nodes/managed-node-update-behavior.adoc; EKS API
reference NodegroupUpdateConfig and UpdateNodegroupVersion):

- "It randomly selects a node that needs to be upgraded, up to the maximum unavailable." (Upgrade phase)
- maxUnavailable defaults to 1; maxUnavailablePercentage "up to 100 nodes" (NodegroupUpdateConfig).
- updateStrategy DEFAULT "launches the new instances first, before terminating the old instances";
  MINIMAL "terminates the old instances before launching the new instances" (NodegroupUpdateConfig).
- "If the Pods don't leave the node within 15 minutes and there's no force flag, the upgrade phase fails
  with a PodEvictionFailure error." (Upgrade phase)
- force: "Force the update if any Pod on the existing node group can't be drained due to a PDB issue"
  (UpdateNodegroupVersion).
- "cordons the node after every Pod is evicted and waits for 60 seconds" before termination (Upgrade phase).
- Scale up phase: "It increments the Auto Scaling Group's maximum size and desired size by the larger of
  either: Up to twice the number of Availability Zones that the Auto Scaling group is deployed in. The maximum
  unavailable of upgrade." (the new nodes updateStrategy DEFAULT launches first).

Not documented (docs/deviations.md): how DaemonSet, emptyDir and unmanaged pods are drained (taken as
kubectl drain with --ignore-daemonsets --delete-emptydir-data --force), whether force waits the 15
minutes first (taken: it does), how a percentage rounds (taken: up), the Auto Scaling group's Availability
Zones (taken: the zones of the nodes updated, their topology.kubernetes.io/zone label).
"""

from kubectl_safety.analysis.drain import DrainOptions
from kubectl_safety.analysis.profiles.base import (AtTimeout, DrainProfile, Order, SettingSpec, boolean, choice, count,
                                                    of_total)

NAME = "eks"
TITLE = "EKS managed node group update"
SOURCES = ("awsdocs/amazon-eks-user-guide latest/ug/nodes/managed-node-update-behavior.adoc",
           "EKS API reference: NodegroupUpdateConfig, UpdateNodegroupVersion")
DRAIN_LIMIT = 15 * 60  # "within 15 minutes"
DEREGISTRATION = 60  # "waits for 60 seconds"
MOST = 100  # "up to 100 nodes"

SETTINGS = (
    SettingSpec("maxUnavailable", "1", count, "nodes updated at once"),
    SettingSpec("maxUnavailablePercentage", "0", count, "percent of the nodes updated at once (0: unset)"),
    SettingSpec("updateStrategy", "DEFAULT", choice("DEFAULT", "MINIMAL"), "DEFAULT: new nodes first"),
    SettingSpec("force", "false", boolean, "terminate the node whatever its PDBs say"),
    SettingSpec("availabilityZones", "1", count, "the Availability Zones of the node group's Auto Scaling group: "
                "DEFAULT launches up to twice as many new nodes first (or maxUnavailable, if larger)"),
)
ZONE = "topology.kubernetes.io/zone"


def read(snapshot, nodes=(), given=None) -> dict:
    """{availabilityZones: (count, origin)}: the zones of the nodes updated (their topology.kubernetes.io/zone)."""
    zones = {n.labels.get(ZONE) for n in (snapshot.node(name) for name in nodes) if n is not None} - {None, ""}
    return {"availabilityZones": (str(len(zones)), f"Nodes' {ZONE} labels: {', '.join(sorted(zones))}")} if zones \
        else {}


def profile(settings) -> DrainProfile:
    v = {name: s.value for name, s in settings.items()}
    percent = v["maxUnavailablePercentage"]
    force = v["force"]
    notes = ["nodes are chosen at random: each batch is one possible draw"]
    if v["updateStrategy"] == "DEFAULT":
        zones, most = v["availabilityZones"], v["maxUnavailable"]
        count_of = f"{max(2 * zones, most)} (2 x {zones} Availability Zones or maxUnavailable {most}, the larger)" \
            if not percent else f"2 x {zones} Availability Zones or maxUnavailablePercentage {percent}% (the larger)"
        notes.append(f"DEFAULT launches up to {count_of} new nodes first: the replacements start on them")
    return DrainProfile(
        name=NAME, title=TITLE, settings=tuple(settings.values()),
        drain=DrainOptions(ignore_daemonsets=True, delete_emptydir_data=True, force=True),
        timeout_seconds=DRAIN_LIMIT, timeout_setting="force", timeout_label="EKS's drain limit",
        at_timeout=AtTimeout.FORCE if force else AtTimeout.FAIL,
        leaves="the node cordoned and labelled node.kubernetes.io/exclude-from-external-load-balancers; "
               "the update fails with PodEvictionFailure",
        halts=True, parallel=v["maxUnavailable"],
        parallel_of=(lambda total: min(max(of_total(f"{percent}%", total), 1), MOST)) if percent else None,
        order=Order.RANDOM, replaces_machine=True, after_drain_seconds=DEREGISTRATION,
        new_capacity=v["updateStrategy"] == "DEFAULT", sources=SOURCES, notes=tuple(notes))
