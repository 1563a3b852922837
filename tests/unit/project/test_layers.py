"""The layering holds: model/ and analysis/ are pure (no I/O, no clock, no client libraries).

Checked two ways: importing every pure module in a fresh interpreter pulls in no client
library, and the source of every pure module names no forbidden call or import. The CLI's
``--help``, ``--version`` and offline analyses do not import the kubernetes client either.
"""

import ast
import json
import os
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
        names += [m.name for m in pkgutil.walk_packages([str(PACKAGE / layer)], prefix=package + ".")]
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


def source_files(layers=PURE):
    """Every module of the layers, subpackages included."""
    return sorted(p for layer in layers for p in (PACKAGE / layer).rglob("*.py"))


def _id(path) -> str:
    return str(path.relative_to(PACKAGE))


def test_source_files_include_subpackages():
    assert PACKAGE / "analysis" / "scheduling" / "filters.py" in source_files()
    assert "kubectl_safety.analysis.scheduling.filters" in pure_modules()


@pytest.mark.parametrize("path", source_files(), ids=_id)
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


# -- the import contracts (setup.cfg [importlinter]), checked by import-linter -------------------

ROOT = PACKAGE.parent
CONTRACTS = ("layers", "pure", "acyclic", "acyclic-cli")
needs_import_linter = pytest.mark.skipif(sys.version_info < (3, 11), reason="import-linter>=2.17 needs Python 3.11")


def lint_imports(*contracts) -> subprocess.CompletedProcess:
    command = [str(Path(sys.executable).parent / "lint-imports"), "--no-cache", "--no-logo"]
    for c in contracts:
        command += ["--contract", c]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True)


@needs_import_linter
def test_import_contracts_hold():
    """cli > engine > (cluster | analysis) > printable > model > (errors | record); analysis and model import
    no client library; no circle between sibling modules."""
    proc = lint_imports(*CONTRACTS)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert f"Contracts: {len(CONTRACTS)} kept, 0 broken." in proc.stdout


@needs_import_linter
def test_import_contracts_catch_an_upward_import(tmp_path):
    """The layers contract fails when a model module imports analysis (as snapshot.py once did)."""
    tree = tmp_path / "kubectl_safety"
    for layer in ("cli", "engine", "cluster", "analysis", "model"):
        (tree / layer).mkdir(parents=True)
        (tree / layer / "__init__.py").write_text("")
    for leaf in ("__init__", "errors", "record", "printable"):
        (tree / f"{leaf}.py").write_text("")
    (tree / "analysis" / "priority.py").write_text("from kubectl_safety.model import snapshot\n")
    (tree / "model" / "snapshot.py").write_text("def f():\n    from kubectl_safety.analysis import priority\n")
    config = tmp_path / "setup.cfg"
    config.write_text((ROOT / "setup.cfg").read_text())
    command = [str(Path(sys.executable).parent / "lint-imports"), "--no-cache", "--no-logo", str(config),
               "--contract", "layers"]
    proc = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(tmp_path)})
    assert proc.returncode == 1, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "kubectl_safety.model.snapshot -> kubectl_safety.analysis.priority" in proc.stdout


# -- analysis keeps no module-level state -------------------------------------------------------

MUTABLE_CONSTRUCTORS = {"dict", "list", "set", "bytearray", "defaultdict", "OrderedDict", "Counter", "deque",
                        "WeakKeyDictionary", "WeakValueDictionary", "WeakSet", "ChainMap"}
MUTATORS = {"append", "extend", "insert", "add", "update", "setdefault", "pop", "popitem", "remove", "discard",
            "clear", "sort", "reverse", "appendleft", "__setitem__", "__delitem__"}
MEMOS = {"lru_cache", "cache", "cached_property"}
# module functions whose memo is keyed by content, never by a snapshot or its objects: why each is safe
CONTENT_MEMOS = {("analysis/scheduling/node_state.py", "_requests_alike"):
                 "pod_requests by requests_key (a pod's container resources): equal keys, equal answers"}


def module_state(source: str, filename="<source>") -> list:
    """``line: what`` for each piece of module-level state: a mutable container bound at module level
    (a literal one counts only when the module changes it), a ``global`` statement, or a memo on a
    module function (but ``CONTENT_MEMOS``)."""
    tree = ast.parse(source, filename)
    found, containers = [], {}
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] \
            if isinstance(node, ast.AnnAssign) and node.value is not None else []
        value = getattr(node, "value", None)
        for target in targets:
            if not isinstance(target, ast.Name):
                continue
            if isinstance(value, ast.Call) and dotted(value.func).split(".")[-1] in MUTABLE_CONSTRUCTORS:
                found.append(f"{node.lineno}: {target.id} = {dotted(value.func)}() (module-level mutable state)")
            elif isinstance(value, (ast.Dict, ast.List, ast.Set, ast.DictComp, ast.ListComp, ast.SetComp)):
                containers[target.id] = node.lineno
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for decorator in node.decorator_list:
                name = dotted(decorator.func if isinstance(decorator, ast.Call) else decorator).split(".")[-1]
                where = (str(Path(filename).relative_to(PACKAGE)) if Path(filename).is_absolute() else filename,
                         node.name)
                if name in MEMOS and where not in CONTENT_MEMOS:
                    found.append(f"{node.lineno}: @{name} on {node.name} (a memo shared by every snapshot)")
    for node in ast.walk(tree):
        if isinstance(node, ast.Global):
            found.append(f"{node.lineno}: global {', '.join(node.names)}")
        elif isinstance(node, (ast.Subscript, ast.Attribute)) and isinstance(node.ctx, (ast.Store, ast.Del)) \
                and isinstance(node.value, ast.Name) and node.value.id in containers:
            found.append(f"{node.lineno}: {node.value.id} changed (module-level mutable state)")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in MUTATORS \
                and isinstance(node.func.value, ast.Name) and node.func.value.id in containers:
            found.append(f"{node.lineno}: {node.func.value.id}.{node.func.attr}() (module-level mutable state)")
    return found


@pytest.mark.parametrize("path", source_files(("analysis",)), ids=_id)
def test_analysis_keeps_no_module_level_state(path):
    assert module_state(path.read_text(), str(path)) == []


STATE_CASES = [
    ("weak-cache", "import weakref\n_CACHE = weakref.WeakKeyDictionary()\n", "_CACHE = weakref.WeakKeyDictionary()"),
    ("dict-call", "_SEEN = dict()\n", "_SEEN = dict()"),
    ("filled-literal", "_ALIKE = {}\ndef f(k):\n    _ALIKE[k] = 1\n", "_ALIKE changed"),
    ("cleared-literal", "_ALIKE = {}\ndef f():\n    _ALIKE.clear()\n", "_ALIKE.clear()"),
    ("global", "n = 0\ndef f():\n    global n\n    n += 1\n", "global n"),
    ("lru-cache", "from functools import lru_cache\n@lru_cache(maxsize=None)\ndef f(snapshot):\n    pass\n",
     "@lru_cache on f"),
    ("functools-cache", "import functools\n@functools.cache\ndef f(pod):\n    pass\n", "@cache on f"),
]


@pytest.mark.parametrize("source,expected", [(s, e) for _, s, e in STATE_CASES], ids=[c[0] for c in STATE_CASES])
def test_state_checker_catches(source, expected):
    found = module_state(source)
    assert found and expected in found[0], found


def test_state_checker_allows_constants():
    assert module_state('RISKS = {"A": 1}\nKINDS = ("Pod",)\ndef f(x):\n    return RISKS.get(x)\n') == []
