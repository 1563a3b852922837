"""The tests needing the engines' oracles or Prometheus run last, so that their builds go on beside the rest."""

import re
from pathlib import Path

import pytest

from tests import conftest

TESTS = Path(__file__).resolve().parents[2]
# the helpers that find a later stage's binaries (tests/engine_oracles.py, tests/promstack.py), and that stage
STAGE_OF_HELPER = {"engine_oracles": "engines", "promstack": "prometheus"}
FINDS_BINARIES = "available|unavailable|binary|bin_dir|run|Stack"


class Item:
    def __init__(self, name, stage=None):
        self.name = name
        self.marker = pytest.mark.needs_build(stage).mark if stage else None

    def get_closest_marker(self, name):
        return self.marker if name == "needs_build" else None


def test_tests_needing_a_later_build_stage_run_after_the_rest_in_build_order():
    items = [Item("unit"), Item("gates", "prometheus"), Item("oracles", "engines"), Item("drain"),
             Item("metrics", "prometheus"), Item("differential")]
    conftest.pytest_collection_modifyitems(items)
    assert [i.name for i in items] == ["unit", "drain", "differential", "oracles", "gates", "metrics"]


@pytest.mark.parametrize("helper, stage", STAGE_OF_HELPER.items())
def test_every_test_module_using_a_later_stages_binaries_is_marked_with_that_stage(helper, stage):
    users = [p for p in TESTS.rglob("test_*.py") if re.search(rf"\b{helper}\.({FINDS_BINARIES})\(", p.read_text())]
    assert users, f"no test module uses tests/{helper}.py"
    unmarked = [str(p.relative_to(TESTS)) for p in users
                if f'pytestmark = pytest.mark.needs_build("{stage}")' not in p.read_text()]
    assert unmarked == []
