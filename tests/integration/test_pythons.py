"""The README's quick start, as written, on the oldest and the newest Python the package claims.

A clean copy of the checkout is installed (not editable) into a fresh virtual environment by the
README's first command line, run by bash with ``python3`` being the claimed interpreter and the
address space limited as on a small machine (``ulimit -v 2097152``). The interpreters come from pyenv
(``~/.pyenv/versions/X.Y.*``) or PATH (``pythonX.Y``). A claimed one that is missing fails under
CI=true and is skipped, loudly, elsewhere. The installs need the package registry.
"""

from __future__ import annotations

import configparser
import glob
import os
import re
import shutil
import subprocess
import warnings
from pathlib import Path

import pytest
from cluster_helpers import in_ci

from tests.unit.cli_helpers import run_cli

ROOT = Path(__file__).resolve().parents[2]
ADDRESS_SPACE_KIB = 2097152  # ulimit -v: 2 GiB


def claimed_versions() -> list:
    """``(major, minor)`` of every ``Programming Language :: Python :: X.Y`` classifier, oldest first,
    checked against ``python_requires``."""
    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "setup.cfg")
    classifiers = cfg["metadata"]["classifiers"]
    versions = sorted({(int(a), int(b)) for a, b in re.findall(r"Python :: (\d+)\.(\d+)\s*$", classifiers, re.M)})
    requires = cfg["options"]["python_requires"].strip()
    floor = tuple(int(x) for x in re.fullmatch(r">=\s*(\d+)\.(\d+)", requires).groups())
    assert versions and versions[0] == floor, f"python_requires >={floor} but the classifiers say {versions}"
    return versions


def quick_start() -> str:
    """The README's first command line (the first line of its first shell block)."""
    text = (ROOT / "README.md").read_text()
    return re.search(r"```sh\n(.+)\n", text).group(1)


def interpreter(version) -> str | None:
    """The newest installed ``X.Y.*`` interpreter: pyenv's, else ``pythonX.Y`` on PATH."""
    wanted = "%d.%d" % version
    found = [p for p in glob.glob(os.path.expanduser(f"~/.pyenv/versions/{wanted}.*/bin/python{wanted}"))
             if re.search(rf"/{re.escape(wanted)}\.\d+/bin/", p)]
    found.sort(key=lambda p: int(re.search(rf"/{re.escape(wanted)}\.(\d+)/", p).group(1)))
    return found[-1] if found else shutil.which(f"python{wanted}")


def clean_copy(dest: Path) -> Path:
    """The files of the checkout a clean clone would have (tracked, plus new ones not ignored)."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                            capture_output=True, check=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        source = ROOT / name
        if source.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / name)
    return dest


def pythons():
    versions = claimed_versions()
    return [pytest.param(v, id="oldest-%d.%d" % v) for v in versions[:1]] + \
        [pytest.param(v, id="newest-%d.%d" % v) for v in versions[1:][-1:]]


@pytest.mark.parametrize("version", pythons())
def test_quick_start_installs_and_runs_on_each_claimed_python(version, tmp_path):
    python = interpreter(version)
    if python is None:
        message = f"Python {'%d.%d' % version} is claimed but not installed (pyenv or python{'%d.%d' % version})"
        if in_ci():
            pytest.fail(message, pytrace=False)
        warnings.warn(message)
        pytest.skip(f"CLAIMED PYTHON MISSING: {message}")
    checkout = clean_copy(tmp_path / "checkout")
    shims = tmp_path / "shims"
    shims.mkdir()
    (shims / "python3").symlink_to(python)
    env = {**os.environ, "PATH": f"{shims}{os.pathsep}{os.environ['PATH']}", "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    for name in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME", "PIP_REQUIRE_VIRTUALENV"):
        env.pop(name, None)
    done = subprocess.run(["bash", "-c", f"ulimit -v {ADDRESS_SPACE_KIB} && {quick_start()}"], cwd=checkout, env=env,
                          capture_output=True, text=True, timeout=900)
    installed = subprocess.run([str(checkout / ".venv/bin/python"), "-c", "import sys; print(sys.version_info[:2])"],
                               capture_output=True, text=True)
    assert installed.stdout.strip() == str(version), installed.stdout + installed.stderr

    args = quick_start().split(".venv/bin/kubectl-safety ", 1)[1].split()
    expected = run_cli(args)
    assert (done.returncode, done.stdout) == expected[:2], done.stderr
    assert done.stdout.startswith("Node node-a1: 4 pod(s)\n"), done.stdout
    assert done.stderr == expected[2]
