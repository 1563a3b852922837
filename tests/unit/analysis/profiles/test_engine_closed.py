"""EKS, GKE and AKS profiles: each row follows the documentation sentence it cites; kured and SUC rows follow
their source (their live oracle is tests/integration/test_engine_kubectl_drain.py)."""

from functools import partial

import pytest

from kubectl_safety.analysis import profiles
from kubectl_safety.analysis.profiles.outcome import Outcome, simulate
from kubectl_safety.errors import UsageError
from tests import builders
from tests.builders import NOW, make_node, make_pod, snapshot

NODES = [make_node(f"n{i}") for i in range(1, 6)]
EMPTYDIR = [{"name": "scratch", "emptyDir": {}}]

never_allows = partial(builders.never_allows, other="n5")


def single_replica():
    return [make_pod("solo", owner=("ReplicaSet", "solo"))]


def local_storage():
    return [make_pod("cache", volumes=EMPTYDIR)]


def spread():
    return [make_pod(f"p{i}", node=f"n{i}", owner=("ReplicaSet", f"rs{i}")) for i in range(1, 5)]


def outcome(engine, objects, nodes=("n1",), **settings):
    snap = snapshot(*NODES, *objects)
    return simulate(profiles.load(engine, settings, snap), snap, list(nodes), NOW)


# (scenario, engine, objects, nodes, settings, node n1's (outcome, at seconds), the sentence followed)
ROWS = [
    ("eks-pdb-never-allows", "eks", never_allows(), ("n1",), {}, (Outcome.FAILS, 900),
     "If the Pods don't leave the node within 15 minutes and there's no force flag, the upgrade phase fails "
     "with a PodEvictionFailure error."),
    ("eks-force-past-pdb", "eks", never_allows(), ("n1",), {"force": "true"}, (Outcome.FORCES, 900),
     "Force the update if any Pod on the existing node group can't be drained due to a PDB issue."),
    ("eks-single-replica", "eks", single_replica(), ("n1",), {}, (Outcome.COMPLETES, 30),
     "It randomly selects a node that needs to be upgraded, up to the maximum unavailable."),
    ("eks-local-storage", "eks", local_storage(), ("n1",), {}, (Outcome.COMPLETES, 30),
     "deviation: EKS does not document emptyDir handling; taken as --delete-emptydir-data"),
    ("gke-pdb-never-allows", "gke", never_allows(), ("n1",), {}, (Outcome.FORCES, 3600),
     "For automatic node upgrades, the grace period can be up to one hour."),
    ("gke-grace-over-an-hour", "gke", [make_pod("slow", terminationGracePeriodSeconds=7200)], ("n1",), {},
     (Outcome.FORCES, 3600), "For automatic node upgrades, the grace period can be up to one hour."),
    ("gke-single-replica", "gke", single_replica(), ("n1",), {}, (Outcome.COMPLETES, 30),
     "(maxUnavailable + maxSurge) determines the level of parallelism"),
    ("gke-local-storage", "gke", local_storage(), ("n1",), {}, (Outcome.COMPLETES, 30),
     "deviation: GKE does not document emptyDir handling; node re-creation loses it"),
    ("aks-pdb-never-allows", "aks", never_allows(), ("n1",), {}, (Outcome.FAILS, 1800),
     "honors waiting on pod disruption budgets. If this time is exceeded, the upgrade fails."),
    ("aks-drain-timeout-setting", "aks", never_allows(), ("n1",), {"drainTimeoutInMinutes": "5"}, (Outcome.FAILS, 300),
     "drainTimeoutInMinutes: per node drain timeout"),
    ("aks-cordon-quarantines", "aks", never_allows(), ("n1",), {"undrainableNodeBehavior": "Cordon"},
     (Outcome.FAILS, 1800), "The blocked nodes will have label 'kubernetes.azure.com/upgrade-status:Quarantined'."),
    ("aks-force-upgrade", "aks", never_allows(), ("n1",), {"forceUpgrade": "true"}, (Outcome.FORCES, 0),
     "Force upgrade bypasses PDBs"),
    ("aks-single-replica", "aks", single_replica(), ("n1",), {}, (Outcome.COMPLETES, 30),
     "AKS adds surge nodes, then cordons and drains as many old nodes as surge nodes"),
    ("aks-local-storage", "aks", local_storage(), ("n1",), {}, (Outcome.COMPLETES, 30),
     "deviation: AKS does not document emptyDir handling; reimage loses it"),
    ("kured-pdb-never-allows", "kured", never_allows(), ("n1",), {}, (Outcome.STALLS, 0),
     "kured main.go: --drain-timeout 0 waits for ever"),
    ("kured-drain-timeout", "kured", never_allows(), ("n1",), {"drain-timeout": "10m"}, (Outcome.FAILS, 600),
     "kured rebootAsRequired: a timed-out drain releases the lock and uncordons"),
    ("kured-force-reboot", "kured", never_allows(), ("n1",), {"drain-timeout": "10m", "force-reboot": "true"},
     (Outcome.FORCES, 600), "kured rebootAsRequired: --force-reboot reboots after a failed drain"),
    ("kured-local-storage", "kured", local_storage(), ("n1",), {}, (Outcome.COMPLETES, 30),
     "kured drain(): DeleteEmptyDirData: true"),
    ("kured-single-unmanaged", "kured", [make_pod("bare", owner=None)], ("n1",), {}, (Outcome.COMPLETES, 30),
     "kured drain(): Force: true"),
    ("kured-pod-selector-opt-out", "kured", never_allows(), ("n1",), {"drain-pod-selector": "app!=web"},
     (Outcome.COMPLETES, 0), "kured --drain-pod-selector: other pods stay through the reboot"),
    ("suc-pdb-never-allows", "suc", never_allows(), ("n1",), {"concurrency": "1"}, (Outcome.FAILS, 600),
     "job.go: activeDeadlineSeconds 600; handle_batch.go: a failed Job stops the plan"),
    ("suc-drain-timeout", "suc", never_allows(), ("n1",), {"concurrency": "1", "drain.timeout": "1m"},
     (Outcome.FAILS, 180), "job.go: --timeout, backoffLimit 2"),
    ("suc-disable-eviction", "suc", never_allows(), ("n1",), {"concurrency": "1", "drain.disableEviction": "true"},
     (Outcome.FORCES, 0), "job.go: --disable-eviction"),
    ("suc-unmanaged-refused", "suc", [make_pod("bare", owner=None)], ("n1",), {"concurrency": "1"}, (Outcome.FAILS, 0),
     "job.go: --force only when drain.force"),
    ("suc-local-storage", "suc", local_storage(), ("n1",), {"concurrency": "1"}, (Outcome.COMPLETES, 30),
     "job.go: deleteEmptydirData nil means true"),
    ("suc-controller-pods-opt-out", "suc", [make_pod("upgrader", labels={"upgrade.cattle.io/controller": "suc"},
                                                     owner=None)], ("n1",), {"concurrency": "1"},
     (Outcome.COMPLETES, 0), "job.go: --pod-selector '!upgrade.cattle.io/controller'"),
]


@pytest.mark.parametrize("name,engine,objects,nodes,settings,expected,sentence", ROWS, ids=[r[0] for r in ROWS])
def test_engine_outcome_follows_its_source(name, engine, objects, nodes, settings, expected, sentence):
    node = outcome(engine, objects, nodes, **settings).nodes[0]
    assert (node.outcome, node.at_seconds) == expected, node.reason


# (scenario, engine, settings, expected batches, whole duration, sentence)
BATCHES = [
    ("eks-max-unavailable-1", "eks", {}, 4, 4 * (30 + 60), "It randomly selects a node that needs to be upgraded, "
     "up to the maximum unavailable. ... waits for 60 seconds"),
    ("eks-max-unavailable-2", "eks", {"maxUnavailable": "2"}, 2, 2 * (30 + 60), "maxUnavailable"),
    ("eks-percentage", "eks", {"maxUnavailablePercentage": "50"}, 2, 2 * (30 + 60), "maxUnavailablePercentage"),
    ("gke-surge-plus-unavailable", "gke", {"maxSurge": "2", "maxUnavailable": "1"}, 2, 60,
     "(maxUnavailable + maxSurge) determines the level of parallelism"),
    ("gke-blue-green-batches", "gke", {"strategy": "BLUE_GREEN", "batchNodeCount": "2", "batchSoakDuration": "10m"},
     2, 2 * (30 + 600), "Soak time after each batch gets drained."),
    ("aks-surge-percent-rounds-up", "aks", {"maxSurge": "33%"}, 2, 60, "a percentage is rounded up"),
    ("aks-soak", "aks", {"nodeSoakDurationInMinutes": "5"}, 4, 4 * (30 + 300), "nodeSoakDurationInMinutes"),
    ("kured-concurrency", "kured", {"concurrency": "2"}, 2, 60, "kured --concurrency"),
    ("suc-concurrency", "suc", {"concurrency": "3"}, 2, 60, "plan.go SelectConcurrentNodes"),
]


@pytest.mark.parametrize("name,engine,settings,batches,seconds,sentence", BATCHES, ids=[r[0] for r in BATCHES])
def test_engine_batches_several_nodes(name, engine, settings, batches, seconds, sentence):
    result = outcome(engine, spread(), ("n1", "n2", "n3", "n4"), **settings)
    assert (len(result.batches), result.seconds) == (batches, seconds)
    assert result.verdict is Outcome.COMPLETES


def test_a_halting_failure_stops_the_upgrade_and_a_quarantine_does_not():
    objects = [*never_allows(), make_pod("x", node="n2", owner=("ReplicaSet", "x"))]
    failed = outcome("aks", objects, ("n1", "n2"))
    assert failed.halts_after == 1 and failed.seconds == 1800
    assert failed.nodes[0].leaves.startswith("the node schedulable again")
    quarantined = outcome("aks", objects, ("n1", "n2"), undrainableNodeBehavior="Cordon")
    assert quarantined.halts_after is None and quarantined.seconds == 1800 + 30
    assert "upgrade-status=Quarantined" in quarantined.nodes[0].leaves


def test_replaced_machines_lose_every_pods_local_data():
    ds = make_pod("agent", owner=("DaemonSet", "agent"), volumes=[{"name": "logs", "hostPath": {"path": "/var/log"}}])
    lost = outcome("eks", [*local_storage(), ds]).nodes[0].local_data_lost
    assert lost == ("default/agent (logs)", "default/cache (scratch)")
    assert outcome("kured", [*local_storage(), ds]).nodes[0].local_data_lost == ("default/cache (scratch)",)


def test_suc_orders_nodes_by_the_plans_hash():
    import hashlib

    snap = snapshot(*NODES)
    prof = profiles.load("suc", {"concurrency": "1", "metadata.uid": "p-uid", "status.latestHash": "h"}, snap)
    order = [b.nodes[0] for b in simulate(prof, snap, ["n1", "n2", "n3"], NOW).batches]
    uid = {n: snap.node(n).uid for n in ("n1", "n2", "n3")}
    assert order == sorted(uid, key=lambda n: hashlib.sha256(f"{uid[n]}p-uidh".encode()).hexdigest())


def test_suc_concurrency_zero_upgrades_nothing():
    with pytest.raises(UsageError, match="selects no node"):
        profiles.load("suc", {}, snapshot(*NODES))



KURED_DS = {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "kured", "namespace": "kube-system",
                                                                       "uid": "uid-kured"},
            "spec": {"selector": {"matchLabels": {"name": "kured"}}, "template": {
                "metadata": {"labels": {"name": "kured"}},
                "spec": {"containers": [{"name": "kured", "command": ["/usr/bin/kured"],
                                         "args": ["--drain-timeout=30m", "--force-reboot", "--concurrency", "2",
                                                  "--period=1h"],
                                         "env": [{"name": "KURED_DRAIN_GRACE_PERIOD", "value": "60"},
                                                 {"name": "OTHER", "value": "x"}]}]}}}}


def test_kured_settings_are_read_from_its_daemonset():
    """kured's flags and KURED_* environment in its DaemonSet's container are its settings, source object."""
    snap = snapshot(*NODES, KURED_DS, *never_allows())
    prof = profiles.load("kured", {}, snap)
    origin = "DaemonSet kube-system/kured"
    settings = {s.name: (s.text, s.source.value, s.origin) for s in prof.settings}
    assert settings["drain-timeout"] == ("30m", "object", origin)
    assert settings["force-reboot"] == ("true", "object", origin)
    assert settings["concurrency"] == ("2", "object", origin)
    assert settings["drain-grace-period"] == ("60", "object", origin)
    assert settings["skip-wait-for-delete-timeout"] == ("0", "default", "")
    node = simulate(prof, snap, ["n1"], NOW).nodes[0]
    assert (node.outcome, node.at_seconds) == (Outcome.FORCES, 1800)
    with pytest.raises(UsageError, match="DaemonSet kube-system/kured sets it"):
        profiles.load("kured", {"drain-timeout": "5m"}, snap)


# (scenario, engine, settings, nodes, expected batches, whole duration, the sentence followed)
BLUE_GREEN_AND_SOAKS = [
    ("gke-blue-green-batch-percentage", "gke", {"strategy": "BLUE_GREEN", "batchPercentage": "0.5"}, 2, 2 * 30,
     "batchPercentage: Percentage of the blue pool nodes to drain in a batch. The range of this field should be "
     "(0.0, 1.0]."),
    ("gke-blue-green-batch-percentage-rounds-up", "gke", {"strategy": "BLUE_GREEN", "batchPercentage": "0.3"}, 2,
     2 * 30, "(rounding not documented: up: 0.3 x 4 nodes is 2 a batch)"),
    ("gke-blue-green-node-pool-soak", "gke", {"strategy": "BLUE_GREEN", "batchNodeCount": "4",
                                              "nodePoolSoakDuration": "1h"}, 1, 30 + 3600,
     "nodePoolSoakDuration: Time needed after draining entire blue pool. After this period, blue pool will be "
     "cleaned up."),
    ("gke-surge-has-no-pool-soak", "gke", {"maxSurge": "4", "nodePoolSoakDuration": "1h"}, 1, 30,
     "If the strategy is SURGE, use maxSurge and maxUnavailable"),
    ("aks-node-soak-per-batch", "aks", {"maxSurge": "2", "nodeSoakDurationInMinutes": "10"}, 2, 2 * (30 + 600),
     "nodeSoakDurationInMinutes: The amount of time (in minutes) to wait after draining a node and before "
     "reimaging it and moving on to next node."),
]


@pytest.mark.parametrize("name,engine,settings,batches,seconds,sentence", BLUE_GREEN_AND_SOAKS,
                         ids=[r[0] for r in BLUE_GREEN_AND_SOAKS])
def test_blue_green_batches_and_soaks(name, engine, settings, batches, seconds, sentence):
    result = outcome(engine, spread(), ("n1", "n2", "n3", "n4"), **settings)
    assert (len(result.batches), result.seconds) == (batches, seconds)


def test_gke_batch_size_is_a_count_or_a_percentage_not_both():
    with pytest.raises(UsageError, match="batchNodeCount and batchPercentage"):
        outcome("gke", [], strategy="BLUE_GREEN", batchNodeCount="2", batchPercentage="0.5")
    with pytest.raises(UsageError, match=r"must be in \(0.0, 1.0\]"):
        outcome("gke", [], strategy="BLUE_GREEN", batchPercentage="1.5")


def test_eks_default_strategy_launches_new_nodes_first_by_the_node_groups_zones():
    """Scale up phase: "by the larger of either: Up to twice the number of Availability Zones that the Auto Scaling
    group is deployed in. The maximum unavailable of upgrade." """
    zoned = [make_node(f"z{i}", labels={"topology.kubernetes.io/zone": f"eu-west-1{'abc'[i % 3]}"}) for i in range(4)]
    snap = snapshot(*zoned)
    prof = profiles.load("eks", {}, snap, [n["metadata"]["name"] for n in zoned])
    assert prof.setting("availabilityZones").text == "3"
    assert prof.setting("availabilityZones").origin == ("Nodes' topology.kubernetes.io/zone labels: eu-west-1a, "
                                                        "eu-west-1b, eu-west-1c")
    assert prof.notes[1].startswith("DEFAULT launches up to 6 (2 x 3 Availability Zones or maxUnavailable 1, the "
                                    "larger) new nodes first") and prof.new_capacity
    wide = profiles.load("eks", {"maxUnavailable": "8"}, snap, ["z0"])
    assert wide.notes[1].startswith("DEFAULT launches up to 8 (2 x 1 Availability Zones or maxUnavailable 8")
    minimal = profiles.load("eks", {"updateStrategy": "MINIMAL"}, snap, ["z0"])
    assert not minimal.new_capacity and len(minimal.notes) == 1


@pytest.mark.parametrize("share, total, batch", [(0.07, 100, 7), (0.29, 100, 29), (0.5, 3, 2), (1.0, 7, 7), (0.01, 5, 1)])
def test_gke_batch_percentage_rounds_up_the_decimal_written(share, total, batch):
    """batchPercentage of the pool, rounded up on the written decimal: 0.07 of 100 nodes is 7 (a float product
    would make it 8)."""
    from kubectl_safety.analysis.profiles.gke import _percent_of

    assert max(_percent_of(share, total), 1) == batch
