"""Tests run from the repository root so relative example paths resolve."""

import os

os.chdir(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import pytest  # noqa: E402


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
