"""The layering holds: model/ and analysis/ are pure (no I/O, no clock, no client libraries).

Checked two ways: importing every pure module in a fresh interpreter pulls in no client
library, and the source of every pure module names no forbidden call or import. The CLI's
``--help``, ``--version`` and offline analyses do not import the kubernetes client either.
"""

import ast
import json
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import kubectl_safety
from tests.unit.cli_helpers import DEMO, DEMO_NOW

PACKAGE = Path(kubectl_safety.__file__).parent
PURE = ("model", "analysis")
CLIENT_LIBRARIES = ("kubernetes", "click", "urllib3", "tabulate")
FORBIDDEN_CALLS = {  # dotted call name -> why
    "datetime.now": "the clock: take an explicit `now`",
    "datetime.utcnow": "the clock: take an explicit `now`",
    "datetime.today": "the clock: take an explicit `now`",
    "date.today": "the clock: take an explicit `now`",
    "time.time": "the clock: take an explicit `now`",
    "time.monotonic": "the clock: take an explicit `now`",
    "time.sleep": "waiting belongs to the CLI/executor",
    "open": "file I/O belongs to cluster/",
    "input": "terminal I/O belongs to cli/",
    "print": "output belongs to cli/",
    "os.getenv": "the environment belongs to cli/",
    "subprocess.run": "processes belong to cluster/",
}
FORBIDDEN_ATTRIBUTES = {"os.environ": "the environment belongs to cli/"}
FORBIDDEN_IMPORTS = ("kubectl_safety.cluster", "kubectl_safety.cli", "subprocess", "socket", "requests",
                     *CLIENT_LIBRARIES)


def pure_modules():
    names = []
    for layer in PURE:
        package = f"kubectl_safety.{layer}"
        names.append(package)
        names += [f"{package}.{m.name}" for m in pkgutil.iter_modules([str(PACKAGE / layer)])]
    return sorted(names)


def dotted(node) -> str:
    """``a.b.c`` for a Name/Attribute chain, else ''."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return ""


def violations(source: str, filename="<source>") -> list:
    """``line: what (why)`` for every forbidden call, attribute or import in ``source``."""
    found = []
    for node in ast.walk(ast.parse(source, filename)):
        if isinstance(node, ast.Call):
            name = dotted(node.func)
            for bad, why in FORBIDDEN_CALLS.items():
                if name == bad or name.endswith("." + bad):
                    found.append(f"{node.lineno}: {name}() ({why})")
        elif isinstance(node, ast.Attribute):
            name = dotted(node)
            if name in FORBIDDEN_ATTRIBUTES:
                found.append(f"{node.lineno}: {name} ({FORBIDDEN_ATTRIBUTES[name]})")
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            if isinstance(node, ast.ImportFrom):
                modules = [node.module or ""] if node.level == 0 else [_relative(filename, node)]
            else:
                modules = [a.name for a in node.names]
            for module in modules:
                if any(module == bad or module.startswith(bad + ".") for bad in FORBIDDEN_IMPORTS):
                    found.append(f"{node.lineno}: import {module}")
    return found


def _relative(filename, node) -> str:
    """The absolute module of a relative ``from . import x`` inside kubectl_safety/<layer>/."""
    package = Path(filename).parent.relative_to(PACKAGE.parent).parts
    base = package[: len(package) - node.level + 1]
    return ".".join(base + ((node.module,) if node.module else ()))


def source_files():
    return sorted(p for layer in PURE for p in (PACKAGE / layer).glob("*.py"))


@pytest.mark.parametrize("path", source_files(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_pure_source_has_no_forbidden_names(path):
    assert violations(path.read_text(), str(path)) == []


CHECKER_CASES = [
    ("clock", "from datetime import datetime\nx = datetime.now()\n", "datetime.now"),
    ("clock-module", "import datetime\nx = datetime.datetime.now(tz)\n", "datetime.datetime.now"),
    ("time", "import time\nt = time.time()\n", "time.time"),
    ("open", "data = open('f').read()\n", "open"),
    ("environ", "import os\nv = os.environ['HOME']\n", "os.environ"),
    ("environ-get", "import os\nv = os.environ.get('HOME')\n", "os.environ"),
    ("import-cluster", "from kubectl_safety.cluster.live import Connection\n", "kubectl_safety.cluster"),
    ("import-cli", "import kubectl_safety.cli.main\n", "kubectl_safety.cli"),
    ("import-kubernetes", "from kubernetes import client\n", "kubernetes"),
    ("import-click", "import click\n", "click"),
]


@pytest.mark.parametrize("source,expected", [(s, e) for _, s, e in CHECKER_CASES],
                         ids=[c[0] for c in CHECKER_CASES])
def test_checker_catches(source, expected):
    found = violations(source)
    assert found and expected in found[0]


def test_checker_resolves_relative_imports():
    found = violations("from ..cluster import live\nfrom . import qos\n", str(PACKAGE / "analysis" / "x.py"))
    assert found == ["1: import kubectl_safety.cluster"]


def test_checker_allows_pure_code():
    assert violations("from datetime import timedelta\nfrom kubectl_safety.model.quantity import add\n"
                      "def f(now):\n    return now + timedelta(seconds=1)\n") == []


PROBE = """
import importlib, json, sys
for name in {modules!r}:
    importlib.import_module(name)
print(json.dumps(sorted(m for m in {libraries!r} if m in sys.modules)))
"""


def test_importing_pure_modules_loads_no_client_library():
    modules = pure_modules()
    assert len(modules) > 10
    code = PROBE.format(modules=modules, libraries=CLIENT_LIBRARIES)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert json.loads(out) == []


LAZY = """
import sys
from kubectl_safety.cli.main import main
try:
    main({args!r})
except SystemExit as e:
    code = e.code
sys.stderr.write("\\nLOADED=" + ",".join(m for m in ("kubernetes", "urllib3") if m in sys.modules)
                 + " CODE=" + str(code) + "\\n")
"""


@pytest.mark.parametrize("args", [
    ["--help"], ["--version"], ["explain", "--help"], ["explain", "pod", "--help"],
    ["explain", "pod", "web-5d8f7c-0x0", "-n", "shop", "--snapshot", DEMO, "--as-of", DEMO_NOW],
    ["explain", "priorities", "--snapshot", DEMO, "-o", "json"],
], ids=["help", "version", "explain-help", "explain-pod-help", "offline-explain-pod", "offline-priorities"])
def test_cli_does_not_import_the_client_when_not_talking_to_a_cluster(args):
    proc = subprocess.run([sys.executable, "-c", LAZY.format(args=args)], capture_output=True, text=True)
    tail = proc.stderr.strip().splitlines()[-1]
    assert tail == "LOADED= CODE=0", proc.stderr[-500:]


def test_plain_credentials_reach_the_cluster_without_the_client_libraries(tmp_path):
    """A token/certificate kubeconfig goes through http.client: neither kubernetes nor urllib3 is imported."""
    path = tmp_path / "kc.yaml"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "Config", "current-context": "x",
                                "clusters": [{"name": "c", "cluster": {"server": "https://127.0.0.1:1"}}],
                                "users": [{"name": "u", "user": {"token": "t"}}],
                                "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}]}))
    args = ["drain", "n1", "--dry-run", "--no-capacity", "--kubeconfig", str(path)]
    proc = subprocess.run([sys.executable, "-c", LAZY.format(args=args)], capture_output=True, text=True)
    assert "unable to connect to the server https://127.0.0.1:1" in proc.stderr
    assert proc.stderr.strip().splitlines()[-1] == "LOADED= CODE=1", proc.stderr[-500:]
