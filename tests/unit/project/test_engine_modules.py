"""The engines' oracle modules select the same version of every module they share, so that a cold build compiles
the shared packages once (Go reuses a compiled package only when its whole dependency subtree is the same)."""

import re
from itertools import combinations
from pathlib import Path

import pytest

ENGINES = Path(__file__).resolve().parents[3] / "controlplane" / "engines"
REQUIRE = re.compile(r"^(?:require\s+)?\s*([\w.~/-]+) (v\S+)(?: // indirect)?$", re.M)


def selected(engine: str) -> dict[str, str]:
    """module -> version, as the engine's go.mod requires it (go mod tidy lists every module of the build)."""
    return dict(REQUIRE.findall((ENGINES / engine / "go.mod").read_text()))


def test_the_engine_modules_are_read_from_their_go_mod():
    assert selected("karpenter")["sigs.k8s.io/karpenter"] == "v1.14.1"
    assert selected("capi")["sigs.k8s.io/cluster-api"] == "v1.14.2"


@pytest.mark.parametrize("a, b", list(combinations(sorted(p.name for p in ENGINES.iterdir() if p.is_dir()), 2)))
def test_the_engine_oracles_select_one_version_of_every_module_they_share(a, b):
    mods_a, mods_b = selected(a), selected(b)
    differ = {m: (mods_a[m], mods_b[m]) for m in mods_a.keys() & mods_b.keys() if mods_a[m] != mods_b[m]}
    assert len(mods_a.keys() & mods_b.keys()) > 40
    assert differ == {}
