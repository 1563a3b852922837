"""analysis/topology.py: skew counted exactly as the PodTopologySpread filter counts it."""

from functools import partial

import pytest

from kubectl_safety.analysis.topology import (HOSTNAME, ZONE, constraint_selector, count_in_domains, domain_counts,
                                              eligible_domains, global_min, normalized, skew)
from kubectl_safety.analysis.explain import spread_constraints
from kubectl_safety.model.pods import Pod
from tests import builders
from tests.builders import make_node, snapshot

ZONE_SPREAD = {"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule",
               "labelSelector": {"matchLabels": {"app": "web"}}}
TAINT = {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}


def nodes(**overrides):
    """a1, a2 in zone a; b1 in zone b; c1 in zone c; ``overrides`` replace a node's kwargs."""
    spec = {"a1": {"zone": "a"}, "a2": {"zone": "a"}, "b1": {"zone": "b"}, "c1": {"zone": "c"}}
    spec.update(overrides)
    return [make_node(name, **kwargs) for name, kwargs in spec.items()]


web = partial(builders.web, cpu=None, labels={"app": "web", "rev": "1"})


def counts_for(objects, constraint=ZONE_SPREAD, incoming=None, constraints=None):
    snap = snapshot(*objects)
    pod = Pod(incoming or web("incoming", None))
    return domain_counts(pod, constraint, snap, constraints or [constraint])


PODS = [web("w1", "a1"), web("w2", "a2"), web("w3", "b1")]


@pytest.mark.parametrize("objects,constraint,incoming,expected", [
    (nodes() + PODS, ZONE_SPREAD, None, {"a": 2, "b": 1, "c": 0}),
    # pods in another namespace, terminating or terminal pods, and non-matching pods are not counted
    (nodes() + PODS + [web("o", "c1", namespace="other"), web("t", "c1", meta={"deletionTimestamp": "2026-11-22T08:00:00Z"}),
                       web("f", "c1", phase="Failed"), web("x", "c1", labels={"app": "api"})],
     ZONE_SPREAD, None, {"a": 2, "b": 1, "c": 0}),
    # a node without the key is skipped entirely: its domain and its pods
    (nodes(c1={"labels": {"zone-typo": "c"}}) + PODS + [web("w4", "c1")], ZONE_SPREAD, None, {"a": 2, "b": 1}),
    # nodeAffinityPolicy Honor (default): nodes the incoming pod cannot select are not domains
    (nodes(c1={"zone": "c", "labels": {"pool": "spot"}}) + PODS, ZONE_SPREAD,
     web("incoming", None, affinity={"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
         "nodeSelectorTerms": [{"matchExpressions": [{"key": "pool", "operator": "NotIn", "values": ["spot"]}]}]}}}),
     {"a": 2, "b": 1}),
    (nodes(c1={"zone": "c", "labels": {"pool": "spot"}}) + PODS, {**ZONE_SPREAD, "nodeAffinityPolicy": "Ignore"},
     web("incoming", None, nodeSelector={"pool": "main"}), {"a": 2, "b": 1, "c": 0}),
    # nodeTaintsPolicy Ignore (default) keeps a tainted domain, Honor drops it unless tolerated
    (nodes(c1={"zone": "c", "taints": [TAINT]}) + PODS, ZONE_SPREAD, None, {"a": 2, "b": 1, "c": 0}),
    (nodes(c1={"zone": "c", "taints": [TAINT]}) + PODS, {**ZONE_SPREAD, "nodeTaintsPolicy": "Honor"}, None, {"a": 2, "b": 1}),
    (nodes(c1={"zone": "c", "taints": [TAINT]}) + PODS, {**ZONE_SPREAD, "nodeTaintsPolicy": "Honor"},
     web("incoming", None, tolerations=[{"key": "dedicated", "operator": "Exists"}]), {"a": 2, "b": 1, "c": 0}),
    # matchLabelKeys: only pods with the incoming pod's value of the key
    (nodes() + PODS + [web("old", "c1", labels={"app": "web", "rev": "0"})], {**ZONE_SPREAD, "matchLabelKeys": ["rev"]},
     None, {"a": 2, "b": 1, "c": 0}),
    # a nil labelSelector matches no pod, but the domains still exist
    (nodes() + PODS, {k: v for k, v in ZONE_SPREAD.items() if k != "labelSelector"}, None, {"a": 0, "b": 0, "c": 0}),
    # hostname domains: one per node
    (nodes() + PODS, {**ZONE_SPREAD, "topologyKey": HOSTNAME}, None, {"a1": 1, "a2": 1, "b1": 1, "c1": 0}),
], ids=["basic", "not-counted", "missing-key", "affinity-honor", "affinity-ignore", "taints-ignore", "taints-honor",
        "taints-honor-tolerated", "match-label-keys", "nil-selector", "hostname"])
def test_domain_counts(objects, constraint, incoming, expected):
    assert counts_for(objects, constraint, incoming) == expected


def test_nodes_lacking_any_constraint_key_are_skipped_for_every_constraint():
    rack = {**ZONE_SPREAD, "topologyKey": "rack"}
    objects = nodes(a1={"zone": "a", "labels": {"rack": "r1"}}) + PODS
    assert counts_for(objects, ZONE_SPREAD, constraints=[ZONE_SPREAD, rack]) == {"a": 1}


@pytest.mark.parametrize("counts,min_domains,expected", [
    ({"a": 3, "b": 1, "c": 0}, 1, 3),
    ({"a": 2, "b": 2, "c": 1}, 1, 1),
    ({"a": 2, "b": 1}, 3, 2),  # fewer domains than minDomains: the global minimum is 0
    ({"a": 2, "b": 1, "c": 1}, 3, 1),
    ({}, 1, 0),
], ids=["basic", "balanced", "below-min-domains", "at-min-domains", "no-domains"])
def test_skew(counts, min_domains, expected):
    assert skew(counts, min_domains) == expected


def test_normalized_defaults():
    assert normalized({"topologyKey": ZONE}) == {
        "topologyKey": ZONE, "maxSkew": 1, "whenUnsatisfiable": "DoNotSchedule", "minDomains": 1,
        "nodeAffinityPolicy": "Honor", "nodeTaintsPolicy": "Ignore"}


def test_match_label_keys_missing_on_the_pod_are_ignored():
    pod = Pod(web("p", None, labels={"app": "web"}))
    selector = constraint_selector(pod, {**ZONE_SPREAD, "matchLabelKeys": ["rev"]})
    assert str(selector) == "app=web"


def test_explain_requires_only_the_keys_of_constraints_of_the_same_kind():
    # A soft constraint on "rack" must not hide nodes without a rack label from the hard zone constraint.
    rack = {"maxSkew": 1, "topologyKey": "rack", "whenUnsatisfiable": "ScheduleAnyway",
            "labelSelector": {"matchLabels": {"app": "web"}}}
    objects = nodes(a1={"zone": "a", "labels": {"rack": "r1"}}) + [
        web("w1", "a1", topologySpreadConstraints=[ZONE_SPREAD, rack]), web("w2", "b1")]
    rows = spread_constraints(snapshot(*objects).pod("default", "w1"), snapshot(*objects))
    assert rows[0].domains == {"a": 1, "b": 1, "c": 0}
    assert rows[1].domains == {"r1": 1}


# -- one counter: every caller counts a constraint's domains through ``count_in_domains`` ------------

COUNTED_PODS = nodes() + PODS + [web("o", "c1", namespace="other"), web("f", "c1", phase="Failed"),
                                 web("t", "b1", meta={"deletionTimestamp": "2026-11-22T08:00:00Z"}),
                                 web("x", "c1", labels={"app": "api"}), web("pending", None)]


def test_prefilter_rebalance_and_explain_count_alike():
    """drain capacity and preemption (the PreFilter state), rebalance and explain give one answer."""
    from kubectl_safety.analysis.rebalance import Spread
    from kubectl_safety.analysis.scheduling.prefilter import prefilter_state

    snap = snapshot(*COUNTED_PODS, web("w4", "c1", topologySpreadConstraints=[ZONE_SPREAD]))
    pod = snap.pod("default", "w4")
    prefilter = prefilter_state(pod, snap).spread[0].counts
    rebalance = Spread(pod, ZONE_SPREAD, [ZONE_SPREAD], snap).counts
    explain = spread_constraints(pod, snap)[0].domains
    assert prefilter == rebalance == domain_counts(pod, ZONE_SPREAD, snap) == {"a": 2, "b": 1, "c": 1}
    assert explain == {"a": 2, "b": 1, "c": 1}


@pytest.mark.parametrize("selector,expected", [
    ({"matchLabels": {"app": "web"}}, {"a": 2, "b": 1, "c": 0}),
    ({}, {"a": 0, "b": 0, "c": 0}),  # an empty selector counts no pod (selector.Empty())
    (None, {"a": 0, "b": 0, "c": 0}),  # nor does a missing one
], ids=["matching", "empty-selector", "no-selector"])
def test_count_in_domains(selector, expected):
    snap = snapshot(*COUNTED_PODS)
    constraint = {**ZONE_SPREAD, "labelSelector": selector}
    incoming = Pod(web("incoming", None))
    domains = eligible_domains(incoming, constraint, [ZONE], snap)
    assert count_in_domains(domains, constraint_selector(incoming, constraint), snap.pods_in("default")) == expected


def test_global_min_is_zero_below_min_domains():
    assert (global_min({"a": 2, "b": 1}, 3), global_min({"a": 2, "b": 1}, 2), global_min({}, 1)) == (0, 1, 0)


# -- one reading of whenUnsatisfiable ---------------------------------------------------------------

@pytest.mark.parametrize("when, hard", [("missing", True), (None, True), ("DoNotSchedule", True),
                                        ("ScheduleAnyway", False)], ids=["missing", "null", "hard", "soft"])
def test_a_spread_constraint_without_when_unsatisfiable_is_hard_wherever_it_is_read(when, hard):
    """Go decodes a missing and a null whenUnsatisfiable alike (""): the filter, capacity's retry and
    the rollout's batch order all read such a constraint as DoNotSchedule, as ``normalized`` does."""
    from kubectl_safety.analysis.capacity import _may_fit_later
    from kubectl_safety.analysis.rollout_plan import constrained_pods
    from kubectl_safety.analysis.scheduling.prefilter import prefilter_state

    constraint = {k: v for k, v in ZONE_SPREAD.items() if k != "whenUnsatisfiable"}
    if when != "missing":
        constraint["whenUnsatisfiable"] = when
    snap = snapshot(*nodes(), web("w1", "a1", topologySpreadConstraints=[constraint]))
    pod = snap.pod("default", "w1")
    assert (normalized(constraint)["whenUnsatisfiable"] == "DoNotSchedule") is hard
    assert len(prefilter_state(pod, snap).spread) == hard
    assert _may_fit_later(pod) is hard
    assert constrained_pods(snap, "a1") == hard
