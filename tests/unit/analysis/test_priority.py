"""Priority resolution as admission does it, with the PriorityClass examples of seed 001."""

import pytest

from kubectl_safety.analysis.priority import UnknownPriorityClass, resolve
from kubectl_safety.model.pods import Pod
from tests.builders import make_class, make_pod, snapshot

HIGH = make_class("high-priority", 1000000)  # seed 001 example
NON_PREEMPTING = make_class("high-priority-nonpreempting", 1000000, policy="Never")  # seed 001 example
DEFAULT = make_class("standard", 500, default=True)

CASES = [
    ("class name resolves (seed 001 high-priority)", dict(priority_class="high-priority"), [HIGH], 1000000, "priorityClassName", "PreemptLowerPriority"),
    ("non-preempting class (seed 001)", dict(priority_class="high-priority-nonpreempting"), [NON_PREEMPTING], 1000000, "priorityClassName", "Never"),
    ("no class: global default", {}, [DEFAULT, HIGH], 500, "globalDefault", "PreemptLowerPriority"),
    ("no class, no default: zero", {}, [HIGH], 0, "default (no class, no global default)", "PreemptLowerPriority"),
    ("admitted spec.priority wins", dict(priority=7, priority_class="high-priority"), [HIGH], 7, "spec.priority", "PreemptLowerPriority"),
    ("system class built in", dict(priority_class="system-node-critical"), [], 2000001000, "priorityClassName", "PreemptLowerPriority"),
    ("pod-level preemptionPolicy wins", dict(priority_class="high-priority", preemptionPolicy="Never"), [HIGH], 1000000, "priorityClassName", "Never"),
]


@pytest.mark.parametrize("pod_kwargs,classes,value,source,policy", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_resolve(pod_kwargs, classes, value, source, policy):
    result = resolve(Pod(make_pod("p", **pod_kwargs)), snapshot(*classes))
    assert (result["value"], result["source"], result["preemptionPolicy"]) == (value, source, policy)


def test_unknown_class_is_rejected_like_admission():
    with pytest.raises(UnknownPriorityClass):
        resolve(Pod(make_pod("p", priority_class="gone")), snapshot(HIGH))


def test_deleted_class_does_not_change_admitted_pod():
    result = resolve(Pod(make_pod("p", priority=1000000, priority_class="gone")), snapshot())
    assert result["value"] == 1000000 and result["classMissing"] is True


def test_several_global_default_classes_admission_takes_the_lowest():
    """getDefaultPriorityClass: of several globalDefault classes, the lowest value wins."""
    classes = [make_class("big-default", 1000, default=True), make_class("small-default", 10, default=True),
               make_class("mid-default", 500, default=True)]
    result = resolve(Pod(make_pod("p")), snapshot(*classes))
    assert (result["value"], result["className"], result["source"]) == (10, "small-default", "globalDefault")
