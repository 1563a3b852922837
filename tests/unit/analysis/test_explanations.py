"""explain's typed reports: frozen, closed sets as enums, rendered as text from their typed fields."""

import dataclasses

import pytest

from kubectl_safety.analysis.explain import explain_node, explain_pod, explain_priorities
from kubectl_safety.analysis.explanations.common import NodeReadiness
from kubectl_safety.analysis.explanations.node import NodeExplanation
from kubectl_safety.analysis.explanations.pod import PodExplanation, PrioritySource
from kubectl_safety.analysis.explanations.priority import PriorityAudit
from kubectl_safety.analysis.explanations.qos import QosClass
from kubectl_safety.cli.views.explain import render_node, render_pod, render_priorities
from kubectl_safety.printable import clean
from tests.builders import NOW, make_node, make_pod, snapshot

HOSTILE = "web\x1b[31m\u202e"


def _snapshot():
    return snapshot(make_pod(HOSTILE, cpu="100m", memory="64Mi", priority=0),
                    make_pod("db-0", owner=("StatefulSet", "db"), priority_class="gone"),
                    make_node("n1"), make_node("n2", ready="Unknown"))


@pytest.mark.parametrize("build, kind", [
    (lambda s: explain_pod(s.pod("default", HOSTILE), s, NOW), PodExplanation),
    (lambda s: explain_node(s.node("n1"), s, NOW), NodeExplanation),
    (lambda s: explain_priorities(s), PriorityAudit),
], ids=["pod", "node", "priorities"])
def test_an_explanation_is_frozen(build, kind):
    report = build(_snapshot())
    assert type(report) is kind
    with pytest.raises(dataclasses.FrozenInstanceError):
        report.findings = ()


def test_closed_sets_are_enums():
    s = _snapshot()
    pod = explain_pod(s.pod("default", HOSTILE), s, NOW)
    assert pod.qos.computed is QosClass.BURSTABLE and pod.qos.containers[0].qos_class is QosClass.BURSTABLE
    assert pod.priority.source is PrioritySource.SPEC_WITHOUT_CLASS
    assert pod.node_state.state is NodeReadiness.READY and pod.force_delete.node.state is NodeReadiness.READY
    missing = explain_pod(s.pod("default", "db-0"), s, NOW)
    assert missing.priority.source is PrioritySource.UNKNOWN_CLASS and missing.priority.class_missing
    assert explain_node(s.node("n2"), s, NOW).state.state is NodeReadiness.UNKNOWN


def test_a_typed_report_made_printable_stays_typed():
    s = _snapshot()
    report = explain_pod(s.pod("default", HOSTILE), s, NOW)
    shown = clean(report)
    assert type(shown) is PodExplanation and shown.qos.computed is QosClass.BURSTABLE
    assert shown.pod.name == "web\\x1b[31m\\u202e" and shown.force_delete.name == shown.pod.name
    assert report.pod.name == HOSTILE  # the report itself is unchanged


@pytest.mark.parametrize("build, render, expected", [
    (lambda s: explain_pod(s.pod("default", "db-0"), s, NOW), render_pod, "Priority:     0 from unknown class"),
    (lambda s: explain_node(s.node("n2"), s, NOW), render_node, "State:  Unknown"),
    (lambda s: explain_priorities(s), render_priorities, "Pods without a class: 1"),
], ids=["pod", "node", "priorities"])
def test_the_text_is_rendered_from_the_typed_report(build, render, expected):
    assert expected in render(clean(build(_snapshot())))
