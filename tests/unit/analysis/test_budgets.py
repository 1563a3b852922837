"""One budget module: the Eviction API's rule for which evictions spend a PDB's disruption is
written once, and drain (waves) and rebalance (rounds) both follow it."""

import pytest

from kubectl_safety.analysis.budgets import Budgets, skips_pdb_check, spends_budget, unhealthy_goes_free
from kubectl_safety.analysis.drain import DrainOptions
from kubectl_safety.analysis.eviction import PodVerdict, eviction_rules
from kubectl_safety.model.policy import PodDisruptionBudget
from tests.builders import make_pdb, make_pod, snapshot

UNHEALTHY_CASES = [  # (policy, currentHealthy, desiredHealthy) -> how a not-Ready pod goes free
    ("always-allow", "AlwaysAllow", 1, 3, "AlwaysAllow"),
    ("if-healthy, healthy", None, 3, 3, "IfHealthyBudget"),
    ("if-healthy, unhealthy", "IfHealthyBudget", 2, 3, ""),
    ("if-healthy, nothing desired", None, 0, 0, ""),
    ("no status", None, None, None, ""),
]


@pytest.mark.parametrize("policy,healthy,desired,expected", [c[1:] for c in UNHEALTHY_CASES],
                         ids=[c[0] for c in UNHEALTHY_CASES])
def test_unhealthy_pod_eviction_policy(policy, healthy, desired, expected):
    pdb = PodDisruptionBudget(make_pdb("web", policy=policy, healthy=healthy, desired=desired))
    assert unhealthy_goes_free(pdb) == expected


@pytest.mark.parametrize("policy,healthy,desired,free", [c[1:] for c in UNHEALTHY_CASES],
                         ids=[c[0] for c in UNHEALTHY_CASES])
def test_drain_and_rebalance_spend_the_budget_alike(policy, healthy, desired, free):
    """A not-Ready pod of a PDB with no disruption left: the drain verdict needs the budget exactly
    when rebalance's budgets make it wait."""
    pod = make_pod("web-0", labels={"app": "web"}, ready=False)
    snap = snapshot(pod, make_pdb("web", policy=policy, healthy=healthy, desired=desired, allowed=0,
                                  expected=3, min_available=desired))
    pod = snap.pod("default", "web-0")
    verdict = PodVerdict(pod)
    eviction_rules(verdict, DrainOptions(), snap)
    rebalance = Budgets(snap).check(pod)
    assert spends_budget(pod, snap.pdbs_for(pod)[0]) is (not free)
    assert (verdict.eviction == "budget") is (not free)
    assert (rebalance != "") is (not free)


@pytest.mark.parametrize("pod,skips", [
    (make_pod("p", phase="Pending"), True),
    (make_pod("p", phase="Succeeded"), True),
    (make_pod("p", meta={"deletionTimestamp": "2026-11-22T08:59:00Z"}), True),
    (make_pod("p"), False),
], ids=["pending", "terminal", "terminating", "running"])
def test_the_eviction_api_ignores_the_pdb_of(pod, skips):
    """``canIgnorePDB``: Succeeded, Failed, Pending, or already being deleted."""
    snap = snapshot(pod)
    assert skips_pdb_check(snap.pod("default", "p")) is skips
