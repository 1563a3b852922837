"""Distribution: the wheel and the krew archive, installed cleanly and run through a real kubectl.

Slow (a wheel build and a virtualenv install with dependencies from the package index, about a
minute), so the checks share module-scoped installs and stay few.
"""

import glob
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tarfile

import pytest
import yaml

from kubectl_safety import __version__
from tests.unit.cli_helpers import DEMO, DEMO_NOW

ROOT = os.getcwd()
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import build_krew_archive  # noqa: E402
import gen_completions  # noqa: E402

SOURCES = ("kubectl_safety", "setup.cfg", "pyproject.toml", "README.md")


def find_kubectl() -> str:
    """The kubectl built for the local control plane when present, else the one on PATH."""
    built = sorted(glob.glob(os.path.expanduser("~/.cache/kubectl-safety/*/bin/kubectl")))
    found = built[-1] if built else shutil.which("kubectl")
    assert found, "no kubectl binary"
    return found


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory):
    """A HOME, a kubeconfig whose server is unreachable, and a bin folder holding only kubectl."""
    base = tmp_path_factory.mktemp("sandbox")
    tools = base / "tools"
    tools.mkdir()
    os.symlink(os.path.realpath(find_kubectl()), tools / "kubectl")
    config = base / "kubeconfig"
    config.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "nowhere",
        "clusters": [{"name": "c", "cluster": {"server": "https://127.0.0.1:9"}}],
        "users": [{"name": "u", "user": {"token": "t"}}],
        "contexts": [{"name": "nowhere", "context": {"cluster": "c", "user": "u"}}]}))
    return base


def run(sandbox, path_dirs, *cmd, env=None):
    """Run ``cmd`` with PATH = ``path_dirs`` + kubectl + /usr/bin:/bin and nothing else of ours."""
    path = os.pathsep.join([*map(str, path_dirs), str(sandbox / "tools"), "/usr/bin", "/bin"])
    full_env = {"PATH": path, "HOME": str(sandbox), "KUBECONFIG": str(sandbox / "kubeconfig"),
                "LANG": "C.UTF-8", **(env or {})}
    return subprocess.run(list(map(str, cmd)), env=full_env, capture_output=True, text=True, timeout=120,
                          cwd=ROOT)


def assert_plugin(sandbox, path_dirs, expected_bin):
    """kubectl discovers the plugin, runs it, and completes through kubectl_complete-safety."""
    listed = run(sandbox, path_dirs, "kubectl", "plugin", "list")
    assert f"{expected_bin}/kubectl-safety" in listed.stdout, listed.stdout + listed.stderr
    assert "warning" not in (listed.stdout + listed.stderr).lower().replace("unable to read directory", "")
    helped = run(sandbox, path_dirs, "kubectl", "safety", "--help")
    assert helped.returncode == 0, helped.stderr
    assert "Usage: kubectl safety" in helped.stdout and "Exit codes:" in helped.stdout
    version = run(sandbox, path_dirs, "kubectl", "safety", "--version")
    assert version.stdout == f"kubectl-safety {__version__}\n"
    completed = run(sandbox, path_dirs, "kubectl", "__complete", "safety", "ex")
    assert completed.stdout.splitlines()[0].split("\t")[0] == "explain", completed.stdout + completed.stderr
    assert completed.stdout.splitlines()[-1] == ":4"


# -- the wheel ----------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def wheel_bin(tmp_path_factory):
    """bin/ of a fresh virtualenv with the built wheel installed with its dependencies."""
    base = tmp_path_factory.mktemp("wheel")
    (base / "src").mkdir()
    for name in SOURCES:  # a copy: building never writes into the shared checkout
        copy = shutil.copytree if os.path.isdir(name) else shutil.copyfile
        copy(os.path.join(ROOT, name), base / "src" / name)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", base / "wheel", base / "src"],
                   check=True, capture_output=True, timeout=600)
    wheel = glob.glob(str(base / "wheel" / "*.whl"))[0]
    subprocess.run([sys.executable, "-m", "venv", base / "venv"], check=True, timeout=120)
    subprocess.run([base / "venv" / "bin" / "python", "-m", "pip", "install", "-q", wheel],
                   check=True, capture_output=True, timeout=900)
    return base / "venv" / "bin"


def test_wheel_in_clean_venv_through_kubectl(sandbox, wheel_bin):
    assert_plugin(sandbox, [wheel_bin], wheel_bin)
    # the declared dependencies are enough to reach for a cluster (the kubernetes client imports)
    version = run(sandbox, [wheel_bin], "kubectl", "safety", "version", "--request-timeout", "2s")
    assert version.returncode == 0, version.stderr
    assert "server: unreachable" in version.stdout
    explained = run(sandbox, [wheel_bin], "kubectl", "safety", "explain", "pod", "web-5d8f7c-0x0", "-n", "shop",
                    "--snapshot", DEMO, "--as-of", DEMO_NOW, "-o", "json")
    assert explained.returncode == 0, explained.stderr
    assert '"kind": "PodExplanation"' in explained.stdout


def test_wheel_bash_completion_script(sandbox, wheel_bin):
    script = (f"source {gen_completions.path('bash')}\n"
              "COMP_WORDS=(kubectl-safety explain ''); COMP_CWORD=2\n"
              "_kubectl_safety_completion kubectl-safety\n"
              "printf '%s\\n' \"${COMPREPLY[@]}\"\n")
    done = run(sandbox, [wheel_bin], "bash", "--norc", "--noprofile", "-c", script)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["node", "pod", "priorities"]


# -- the krew archive ---------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def archive(tmp_path_factory):
    """(archive path, filled manifest, unpacked folder) built from this checkout."""
    base = tmp_path_factory.mktemp("krew")
    manifest = base / "safety.yaml"
    shutil.copyfile(os.path.join(ROOT, "krew", "safety.yaml"), manifest)
    path = build_krew_archive.build(str(base / "dist"), str(manifest), "https://example.test/releases")
    with tarfile.open(path) as tar:
        tar.extractall(base / "unpacked")
    return path, manifest, base / "unpacked" / f"kubectl-safety-{__version__}"


def test_manifest_filled_for_the_archive(archive, tmp_path):
    path, manifest, _ = archive
    spec = yaml.safe_load(manifest.read_text())
    assert spec["apiVersion"] == "krew.googlecontainertools.github.com/v1alpha2" and spec["kind"] == "Plugin"
    assert spec["metadata"]["name"] == "safety"
    assert spec["spec"]["version"] == f"v{__version__}"
    minimum = ".".join(map(str, build_krew_archive.minimum_python()))
    assert f"Python >= {minimum}" in spec["spec"]["caveats"]
    (platform,) = spec["spec"]["platforms"]
    assert platform["sha256"] == hashlib.sha256(open(path, "rb").read()).hexdigest()
    assert platform["uri"] == f"https://example.test/releases/v{__version__}/{os.path.basename(path)}"
    assert platform["files"] == [{"from": f"kubectl-safety-{__version__}/*", "to": "."}]
    with tarfile.open(path) as tar:
        binary = tar.getmember(f"kubectl-safety-{__version__}/{platform['bin']}")
        assert binary.mode & 0o111 and binary.mtime == 0
        names = tar.getnames()
        assert not [n for n in names if n.endswith((".so", ".pyc", ".pyd"))]
        vendor = f"kubectl-safety-{__version__}/vendor/"
        for module in ("kubernetes/client/api_client.py", "kubernetes/config/kube_config.py", "urllib3/__init__.py",
                       "requests/__init__.py", "certifi/cacert.pem", "yaml/__init__.py", "click/__init__.py"):
            assert vendor + module in names, module
        assert not [n for n in names if n.startswith(vendor + "kubernetes/aio") or n.endswith("_test.py")]
    assert "pip install" not in spec["spec"]["caveats"]
    # reproducible: a second build has the same digest
    again = build_krew_archive.build(str(tmp_path), str(manifest), "https://example.test/releases")
    assert hashlib.sha256(open(again, "rb").read()).hexdigest() == platform["sha256"]


def test_committed_manifest_shape():
    spec = yaml.safe_load(open(os.path.join(ROOT, "krew", "safety.yaml")).read())
    assert spec["apiVersion"] == "krew.googlecontainertools.github.com/v1alpha2"
    assert spec["metadata"]["name"] == "safety" and spec["spec"]["version"].startswith("v")
    for key in ("homepage", "shortDescription", "description", "caveats", "platforms"):
        assert spec["spec"][key]
    assert spec["spec"]["platforms"][0]["bin"] == "kubectl-safety"


def test_committed_manifest_is_valid_as_committed():
    """No placeholder that YAML reads as a number; every release field agrees with the version."""
    spec = yaml.safe_load(open(os.path.join(ROOT, "krew", "safety.yaml")).read())["spec"]
    platform = spec["platforms"][0]
    folder = f"kubectl-safety-{__version__}"
    assert isinstance(platform["sha256"], str) and re.fullmatch(r"[0-9a-f]{64}", platform["sha256"])
    assert set(platform["sha256"]) != {"0"}, "a placeholder digest"
    assert spec["version"] == f"v{__version__}"
    assert platform["uri"].endswith(f"/v{__version__}/{folder}.tar.gz")
    assert platform["files"] == [{"from": f"{folder}/*", "to": "."}]
    assert "ln -sf ~/.krew/bin/kubectl-safety ~/.local/bin/kubectl_complete-safety" in spec["caveats"]


def test_vendored_dependencies_are_the_tested_versions():
    """The archive vendors exactly the click, tabulate and PyYAML these tests run with."""
    import importlib.metadata

    installed = {name: importlib.metadata.version(name) for name in build_krew_archive.VENDORED}
    assert installed == build_krew_archive.VENDORED
    assert f"click=={build_krew_archive.VENDORED['click']}" in open(os.path.join(ROOT, "setup.cfg")).read()


def interpreters():
    """This Python and, when installed, the minimum one the caveat names."""
    minimum = ".".join(map(str, build_krew_archive.minimum_python()))
    found = sorted(glob.glob(os.path.expanduser(f"~/.pyenv/versions/{minimum}.*/bin/python3")))
    return [sys.executable] + found[-1:]


@pytest.mark.parametrize("python", interpreters())
def test_archive_runs_on_a_bare_interpreter(sandbox, archive, python):
    _, _, unpacked = archive
    bare = [python, "-I", "-S"]  # no site-packages: only the archive's own files
    version = subprocess.run([*bare, unpacked / "kubectl-safety", "--version"], capture_output=True, text=True)
    assert version.stdout == f"kubectl-safety {__version__}\n", version.stderr
    explained = subprocess.run([*bare, unpacked / "kubectl-safety", "explain", "pod", "web-5d8f7c-0x0", "-n", "shop",
                                "--snapshot", DEMO, "--as-of", DEMO_NOW], capture_output=True, text=True, cwd=ROOT)
    assert explained.returncode == 0, explained.stderr
    assert explained.stdout.startswith("Pod:          shop/web-5d8f7c-0x0")
    # preemption -f without kubernetes-validate (not bundled): the structural check, and one line saying so
    previewed = subprocess.run([*bare, unpacked / "kubectl-safety", "preemption", "-f", "examples/demo-workloads.yaml",
                                "--snapshot", DEMO, "--as-of", DEMO_NOW, "-o", "jsonpath={.kind}"],
                               capture_output=True, text=True, cwd=ROOT)
    assert (previewed.returncode, previewed.stdout) == (3, "List"), previewed.stderr
    assert "kubernetes-validate is not installed: checking only apiVersion, kind" in previewed.stderr
    # the bundled kubernetes client loads the kubeconfig and gets as far as the (closed) port
    version = subprocess.run([*bare, unpacked / "kubectl-safety", "version", "--kubeconfig", sandbox / "kubeconfig",
                              "--request-timeout", "2s"], capture_output=True, text=True)
    assert version.returncode == 0, version.stderr
    assert "unable to connect to the server https://127.0.0.1:9" in version.stdout, version.stdout
    completed = subprocess.run([*bare, unpacked / "kubectl_complete-safety", "explain", "p"],
                               capture_output=True, text=True)
    assert [line.split("\t")[0] for line in completed.stdout.splitlines()] == ["pod", "priorities", ":4"]
    # the caveat's link: krew's bin/kubectl-safety under the helper's name (survives krew upgrade)
    link = sandbox / "krew-link" / "kubectl_complete-safety"
    link.parent.mkdir(exist_ok=True)
    if not link.exists():
        link.symlink_to(unpacked / "kubectl-safety")
    linked = subprocess.run([*bare, link, "explain", "p"], capture_output=True, text=True)
    assert linked.stdout == completed.stdout, linked.stderr


def test_archive_through_kubectl_with_an_empty_venv(sandbox, archive, tmp_path):
    _, _, unpacked = archive
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", tmp_path / "empty"], check=True, timeout=120)
    assert_plugin(sandbox, [unpacked, tmp_path / "empty" / "bin"], unpacked)


def older_interpreters():
    """Installed interpreters just below the archive's minimum Python."""
    major, minor = build_krew_archive.minimum_python()
    return sorted(glob.glob(os.path.expanduser(f"~/.pyenv/versions/{major}.{minor - 1}.*/bin/python3")))[-1:]


@pytest.mark.parametrize("python", older_interpreters())
def test_archive_on_a_too_old_interpreter(archive, python):
    _, _, unpacked = archive
    refused = subprocess.run([python, "-I", "-S", unpacked / "kubectl-safety", "--version"],
                             capture_output=True, text=True)
    assert refused.returncode == 1 and "kubectl-safety needs Python >= " in refused.stderr
    completed = subprocess.run([python, "-I", "-S", unpacked / "kubectl_complete-safety", "ex"],
                               capture_output=True, text=True)
    assert (completed.stdout, completed.stderr) == (":4\n", "")
