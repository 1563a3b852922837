import pytest

from kubectl_safety.errors import UsageError
from kubectl_safety.model.nodes import Node
from kubectl_safety.model.pods import Pod
from kubectl_safety.model.selectors import (LabelSelector, pod_matches_node_selector_and_affinity,
                                            toleration_tolerates, untolerated_taint)
from tests.builders import make_node, make_pod

LABELS = {"app": "web", "tier": "frontend", "env": "prod"}


@pytest.mark.parametrize("text,matches", [
    ("app=web", True), ("app==web", True), ("app!=web", False), ("app in (web,api)", True),
    ("app notin (web)", False), ("tier", True), ("!tier", False), ("missing", False), ("!missing", True),
    ("app=web,env=dev", False), ("app=web, tier in (frontend)", True),
], ids=lambda x: str(x))
def test_string_selector(text, matches):
    assert LabelSelector.from_string(text).matches(LABELS) is matches


@pytest.mark.parametrize("text", ["a in (b", "=x", "a=b,,c", "bad key!=x", "a=" + "x" * 64])
def test_invalid_string_selectors(text):
    with pytest.raises(UsageError):
        LabelSelector.from_string(text)


@pytest.mark.parametrize("raw,matches", [
    ({"matchLabels": {"app": "web"}}, True),
    ({"matchExpressions": [{"key": "env", "operator": "In", "values": ["prod", "stage"]}]}, True),
    ({"matchExpressions": [{"key": "env", "operator": "NotIn", "values": ["prod"]}]}, False),
    ({"matchExpressions": [{"key": "gpu", "operator": "DoesNotExist"}]}, True),
    ({}, True),
], ids=["matchLabels", "In", "NotIn", "DoesNotExist", "empty selects all"])
def test_api_selector(raw, matches):
    assert LabelSelector.parse(raw).matches(LABELS) is matches


def test_nil_selector_is_none():
    assert LabelSelector.parse(None) is None


@pytest.mark.parametrize("toleration,taint,ok", [
    ({"key": "k", "operator": "Equal", "value": "v", "effect": "NoSchedule"}, {"key": "k", "value": "v", "effect": "NoSchedule"}, True),
    ({"key": "k", "operator": "Equal", "value": "x"}, {"key": "k", "value": "v", "effect": "NoSchedule"}, False),
    ({"key": "k", "operator": "Exists"}, {"key": "k", "value": "v", "effect": "NoExecute"}, True),
    ({"operator": "Exists"}, {"key": "any", "effect": "NoSchedule"}, True),
    ({"key": "k", "operator": "Exists", "effect": "NoExecute"}, {"key": "k", "effect": "NoSchedule"}, False),
], ids=["equal", "wrong value", "exists any effect", "tolerate everything", "wrong effect"])
def test_toleration(toleration, taint, ok):
    assert toleration_tolerates(toleration, taint) is ok


def test_prefer_no_schedule_taints_are_ignored():
    node = Node(make_node("n", taints=[{"key": "k", "effect": "PreferNoSchedule"}]))
    assert untolerated_taint(Pod(make_pod("p")), node) is None


@pytest.mark.parametrize("spec,ok", [
    ({"nodeSelector": {"topology.kubernetes.io/zone": "a"}}, True),
    ({"nodeSelector": {"topology.kubernetes.io/zone": "b"}}, False),
    ({"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "cores", "operator": "Gt", "values": ["8"]}]},
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n"]}]}]}}}}, True),
    ({"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "cores", "operator": "Lt", "values": ["4"]}]}]}}}}, False),
], ids=["selector match", "selector mismatch", "terms ORed", "Lt fails"])
def test_node_affinity(spec, ok):
    node = Node(make_node("n", zone="a", labels={"cores": "4"}))
    assert pod_matches_node_selector_and_affinity(Pod(make_pod("p", **spec)), node) is ok
