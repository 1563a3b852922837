"""engine/drain_planner.py: the engine reads and plans a drain itself (the CLI only makes the planner of
its flags): ``-l`` resolved on the first plan and kept by the re-plans, a missing node named."""

import pytest

from kubectl_safety.analysis.drain import DrainOptions
from kubectl_safety.engine.drain_planner import DrainPlanner
from kubectl_safety.errors import NotFoundError
from kubectl_safety.model.selectors import LabelSelector
from tests.builders import make_node, make_pod, snapshot


def offline(*objects):
    snap = snapshot(*objects)
    return lambda: snap


def test_the_selector_is_resolved_on_the_first_plan_and_the_re_plans_keep_its_nodes():
    a1, a2, b1 = make_node("a1", labels={"pool": "a"}), make_node("a2", labels={"pool": "a"}), make_node("b1")
    planner = DrainPlanner(DrainOptions(), (), LabelSelector.from_string("pool=a"), connect=None,
                           offline=offline(a1, a2, b1, make_pod("p", node="a1")), selector_text="pool=a")
    _, plan = planner.plan()
    assert plan.node_names == ["a1", "a2"] and planner.nodes == ["a1", "a2"] and planner.node_selector is None
    assert planner.replan(group=None).node_names == ["a1", "a2"]
    assert [p.name for p in planner.batch_plan(["a2"], None, None).pods] == [] and planner.nodes == ["a2"]


@pytest.mark.parametrize("hint,message", [(lambda name: "", 'node "gone" not found'),
                                          (lambda name: f" ({name}?)", 'node "gone" not found (gone?)')])
def test_a_missing_node_is_named_with_the_command_s_hint(hint, message):
    planner = DrainPlanner(DrainOptions(), ["gone"], None, connect=None, offline=offline(make_node("n1")),
                           missing_hint=hint)
    with pytest.raises(NotFoundError) as e:
        planner.plan()
    assert str(e.value) == message
