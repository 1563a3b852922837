"""GKE node pool upgrade (closed: documented behaviour only).

Sources (cloud.google.com/kubernetes-engine/docs; API reference NodePool.UpgradeSettings, BlueGreenSettings):

- "(maxUnavailable + maxSurge) determines the level of parallelism (how many nodes are being upgraded at
  the same time)." (NodePool.UpgradeSettings); defaults maxSurge 1, maxUnavailable 0.
- "Node pools are upgraded one at a time ... in an undefined order" (concepts/cluster-upgrades).
- "For automatic node upgrades, the grace period can be up to one hour." (how-to/extended-duration-pods);
  PDBs are respected for up to one hour, then GKE proceeds.
- blue-green: the blue pool is drained "in batch mode", batchNodeCount "Number of blue nodes to drain in a
  batch."; batchPercentage "Percentage of the blue pool nodes to drain in a batch. The range of this field
  should be (0.0, 1.0]." (BlueGreenSettings.StandardRolloutPolicy; "The batch size could be specified as either
  percentage of the node pool size or the number of nodes." UpgradeSettings); batchSoakDuration "Soak time
  after each batch gets drained. Default to zero."; nodePoolSoakDuration "Time needed after draining entire
  blue pool. After this period, blue pool will be cleaned up." (BlueGreenSettings).
- Upgrades re-create the node VMs: local data does not survive (concepts/cluster-upgrades).

Not documented (docs/deviations.md): DaemonSet, emptyDir and unmanaged pods (taken as kubectl drain with
--ignore-daemonsets --delete-emptydir-data --force), the blue-green default batch size (taken: one node), how
batchPercentage rounds (taken: up, at least one node), nodePoolSoakDuration's default (taken: none unless given).
"""

import math

from kubectl_safety.analysis.drain import DrainOptions
from kubectl_safety.analysis.profiles.base import (AtTimeout, DrainProfile, Order, SettingError, SettingSpec, Source,
                                                    choice, count, duration)
from kubectl_safety.errors import UsageError

NAME = "gke"
TITLE = "GKE node pool upgrade"
SOURCES = ("cloud.google.com/kubernetes-engine/docs/concepts/node-pool-upgrade-strategies",
           "cloud.google.com/kubernetes-engine/docs/how-to/extended-duration-pods",
           "API reference NodePool.UpgradeSettings, BlueGreenSettings.StandardRolloutPolicy")
HONOURED_FOR = 3600  # "up to one hour"

def fraction(text):
    """batchPercentage: a number in (0.0, 1.0], or empty (None: unset)."""
    if str(text).strip() == "":
        return None
    try:
        value = float(text)
    except ValueError:
        raise SettingError("not a number") from None
    if not 0.0 < value <= 1.0:
        raise SettingError("must be in (0.0, 1.0]")
    return value


SETTINGS = (
    SettingSpec("strategy", "SURGE", choice("SURGE", "BLUE_GREEN"), "upgrade strategy"),
    SettingSpec("maxSurge", "1", count, "surge: extra nodes at once"),
    SettingSpec("maxUnavailable", "0", count, "surge: nodes unavailable at once"),
    SettingSpec("batchNodeCount", "1", count, "blue-green: blue nodes drained per batch"),
    SettingSpec("batchPercentage", "", fraction, "blue-green: the share of the blue nodes drained per batch, (0.0, "
                "1.0] (instead of batchNodeCount)"),
    SettingSpec("batchSoakDuration", "0s", duration, "blue-green: soak after each batch"),
    SettingSpec("nodePoolSoakDuration", "0s", duration, "blue-green: soak after the whole blue pool is drained, "
                "before it is deleted"),
)


def _percent_of(share: float, total: int) -> int:
    """``share`` of ``total`` nodes rounded up, on the decimal the user wrote (0.07 of 100 is 7, not 8)."""
    from fractions import Fraction

    return math.ceil(Fraction(str(share)) * total)


def profile(settings) -> DrainProfile:
    v = {name: s.value for name, s in settings.items()}
    blue_green = v["strategy"] == "BLUE_GREEN"
    share = v["batchPercentage"]
    if share is not None and settings["batchNodeCount"].source is not Source.DEFAULT:
        raise UsageError("batchNodeCount and batchPercentage: set one of them (the batch size is either)")
    parallel = v["batchNodeCount"] if blue_green else v["maxSurge"] + v["maxUnavailable"]
    batch_of = (lambda total: max(_percent_of(share, total), 1)) if blue_green and share is not None else None
    return DrainProfile(
        name=NAME, title=TITLE, settings=tuple(settings.values()),
        drain=DrainOptions(ignore_daemonsets=True, delete_emptydir_data=True, force=True),
        timeout_seconds=HONOURED_FOR, timeout_setting="", timeout_label="GKE's limit on PDBs and grace",
        at_timeout=AtTimeout.FORCE, halts=False, parallel=max(parallel, 1), parallel_of=batch_of, order=Order.RANDOM,
        replaces_machine=True, after_drain_seconds=int(v["batchSoakDuration"]) if blue_green else 0,
        after_all_seconds=int(v["nodePoolSoakDuration"]) if blue_green else 0,
        new_capacity=blue_green or v["maxSurge"] > 0, sources=SOURCES,
        notes=("GKE upgrades nodes in an undefined order: each batch is one possible draw",))
