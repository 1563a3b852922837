"""Tests run from the repository root so relative example paths resolve."""

import os

os.chdir(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import pytest  # noqa: E402

from controlplane.cluster import BUILD_STAGES  # noqa: E402


def build_stage_rank(item) -> int:
    """Where a test's build stage (marker ``needs_build(STAGE)``; none: the control plane) comes in build order."""
    marker = item.get_closest_marker("needs_build")
    return BUILD_STAGES.index(marker.args[0]) if marker else 0


def pytest_collection_modifyitems(items):
    """The tests needing a later build stage run last, in build order, so that scripts/test-all builds that stage
    beside the tests needing only the control plane (otherwise in collection order)."""
    items.sort(key=build_stage_rank)


@pytest.fixture(autouse=True)
def json_outputs_match_their_schemas(monkeypatch):
    """Every -o json report printed in-process validates against kubectl_safety/schemas/KIND.json."""
    from kubectl_safety.cli import render
    from tests.schemas import Recorder

    recorder = Recorder()
    monkeypatch.setattr(render, "to_json", recorder.wrap(render.to_json))
    yield recorder
    failures = recorder.failures()
    if failures:
        pytest.fail("-o json output does not match its schema:\n" + "\n".join(failures[:10]), pytrace=False)
