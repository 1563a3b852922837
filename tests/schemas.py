"""Every ``-o json`` report printed during the test run is checked against its kind's shipped JSON Schema.

``tests/conftest.py`` wraps ``render.to_json`` for each test; the test fails (in teardown) when an
output does not validate or its kind has no schema. With ``KUBECTL_SAFETY_SCHEMA_SAMPLES=DIR`` the
outputs are written to DIR instead (``scripts/gen_schemas.py`` derives schemas from them).
"""

import json
import os
from functools import lru_cache
from pathlib import Path

SCHEMAS = Path(__file__).resolve().parent.parent / "kubectl_safety" / "schemas"


@lru_cache(maxsize=None)
def validator(kind):
    """A jsonschema validator for ``kind``, or None when no schema file exists."""
    import jsonschema

    path = SCHEMAS / f"{kind}.json"
    if not path.exists():
        return None
    schema = json.loads(path.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def problems(report) -> list:
    """One line per way ``report`` breaks its schema ([] when it validates)."""
    kind = report.get("kind") if isinstance(report, dict) else None
    v = validator(kind) if kind else None
    if v is None:
        return [f"no schema for kind {kind!r} in {SCHEMAS}"]
    return [f"{kind}: {'/'.join(map(str, e.absolute_path)) or '(top)'}: {e.message[:200]}" for e in v.iter_errors(report)]


class Recorder:
    """Collects what ``to_json`` printed during one test."""

    def __init__(self):
        self.outputs = []
        self.samples = os.environ.get("KUBECTL_SAFETY_SCHEMA_SAMPLES")

    def wrap(self, to_json):
        def recording(report):
            text = to_json(report)
            self.outputs.append(json.loads(text))
            if self.samples:
                os.makedirs(self.samples, exist_ok=True)
                n = len(os.listdir(self.samples))
                Path(self.samples, f"{n:05d}.json").write_text(text)
            return text
        return recording

    def failures(self) -> list:
        return [] if self.samples else [p for out in self.outputs for p in problems(out)]
