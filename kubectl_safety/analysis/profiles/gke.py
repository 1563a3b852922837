"""GKE node pool upgrade (closed: documented behaviour only).

Sources (cloud.google.com/kubernetes-engine/docs; API reference NodePool.UpgradeSettings, BlueGreenSettings):

- "(maxUnavailable + maxSurge) determines the level of parallelism (how many nodes are being upgraded at
  the same time)." (NodePool.UpgradeSettings); defaults maxSurge 1, maxUnavailable 0.
- "Node pools are upgraded one at a time ... in an undefined order" (concepts/cluster-upgrades).
- "For automatic node upgrades, the grace period can be up to one hour." (how-to/extended-duration-pods);
  PDBs are respected for up to one hour, then GKE proceeds.
- blue-green: the blue pool is drained "in batch mode", batchNodeCount "Number of blue nodes to drain in a
  batch."; batchSoakDuration "Soak time after each batch gets drained. Default to zero."
- Upgrades re-create the node VMs: local data does not survive (concepts/cluster-upgrades).

Not documented (docs/deviations.md): DaemonSet, emptyDir and unmanaged pods (taken as kubectl drain with
--ignore-daemonsets --delete-emptydir-data --force), the blue-green default batch size (taken: one node),
the node pool soak after the last batch (not counted in the duration).
"""

from kubectl_safety.analysis.drain import DrainOptions
from kubectl_safety.analysis.profiles.base import (AtTimeout, DrainProfile, Order, SettingSpec, choice, count,
                                                    duration)

NAME = "gke"
TITLE = "GKE node pool upgrade"
SOURCES = ("cloud.google.com/kubernetes-engine/docs/concepts/node-pool-upgrade-strategies",
           "cloud.google.com/kubernetes-engine/docs/how-to/extended-duration-pods",
           "API reference NodePool.UpgradeSettings, BlueGreenSettings.StandardRolloutPolicy")
HONOURED_FOR = 3600  # "up to one hour"

SETTINGS = (
    SettingSpec("strategy", "SURGE", choice("SURGE", "BLUE_GREEN"), "upgrade strategy"),
    SettingSpec("maxSurge", "1", count, "surge: extra nodes at once"),
    SettingSpec("maxUnavailable", "0", count, "surge: nodes unavailable at once"),
    SettingSpec("batchNodeCount", "1", count, "blue-green: blue nodes drained per batch"),
    SettingSpec("batchSoakDuration", "0s", duration, "blue-green: soak after each batch"),
)


def profile(settings) -> DrainProfile:
    v = {name: s.value for name, s in settings.items()}
    blue_green = v["strategy"] == "BLUE_GREEN"
    parallel = v["batchNodeCount"] if blue_green else v["maxSurge"] + v["maxUnavailable"]
    return DrainProfile(
        name=NAME, title=TITLE, settings=tuple(settings.values()),
        drain=DrainOptions(ignore_daemonsets=True, delete_emptydir_data=True, force=True),
        timeout_seconds=HONOURED_FOR, timeout_setting="", timeout_label="GKE's limit on PDBs and grace",
        at_timeout=AtTimeout.FORCE, halts=False, parallel=max(parallel, 1), order=Order.RANDOM,
        replaces_machine=True, after_drain_seconds=int(v["batchSoakDuration"]) if blue_green else 0,
        new_capacity=blue_green or v["maxSurge"] > 0, sources=SOURCES,
        notes=("GKE upgrades nodes in an undefined order: each batch is one possible draw",))
