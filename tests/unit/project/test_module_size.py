"""A module holds one thing: past 600 lines it holds two (docs/layout.md)."""

import pathlib

PACKAGE = pathlib.Path(__file__).resolve().parents[3] / "kubectl_safety"
LIMIT = 600


def test_no_module_of_the_package_is_over_600_lines():
    long = {str(p.relative_to(PACKAGE)): n for p in PACKAGE.rglob("*.py")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > LIMIT}
    assert long == {}
