"""Distribution against the real control plane: dynamic completion through the built kubectl, and
the krew archive's live commands on a bare interpreter."""

from __future__ import annotations

import glob
import json
import os
import subprocess
import sys
import tarfile
import time
import uuid

import click
import pytest
from cluster_helpers import create, deployment, pod

from kubectl_safety import __version__
from kubectl_safety.cli.completers import complete_namespaces, complete_nodes, complete_pods, complete_workloads
from kubectl_safety.cli.completion import KubectlComplete
from kubectl_safety.cli.options import global_options

ROOT = os.getcwd()
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import build_krew_archive  # noqa: E402


@click.group()
@global_options
def tree():
    """Arguments wired like the real commands."""


@tree.command("drain")
@click.argument("nodes", nargs=-1, shell_complete=complete_nodes)
@global_options
def drain(nodes):
    """Nodes."""


@tree.command("pod")
@click.argument("name", shell_complete=complete_pods)
@click.option("--ns", shell_complete=complete_namespaces)
@global_options
def pod_command(name, ns):
    """Pods."""


@tree.command("rebalance")
@click.argument("workload", shell_complete=complete_workloads)
@global_options
def rebalance(workload):
    """Workloads."""


def candidates(cluster, *argv):
    """Candidate values for ``argv`` with kubectl from the cluster's bin folder first on PATH."""
    old = os.environ["PATH"]
    os.environ["PATH"] = f"{cluster.bin_dir}{os.pathsep}{old}"
    try:
        out = KubectlComplete(tree, ["--kubeconfig", str(cluster.kubeconfig), *argv]).complete()
    finally:
        os.environ["PATH"] = old
    return [line.split("\t")[0] for line in out.splitlines()[:-1]]


def test_names_come_from_the_api_server(cluster, namespace, make_node):
    prefix = f"cmpl-{uuid.uuid4().hex[:5]}"
    for suffix in ("a", "b"):
        make_node(f"{prefix}-{suffix}")
    create(cluster, namespace, deployment("web", 2), pod("solo"))

    assert candidates(cluster, "drain", prefix) == [f"{prefix}-a", f"{prefix}-b"]
    assert candidates(cluster, "drain", f"{prefix}-a", prefix) == [f"{prefix}-b"]
    assert candidates(cluster, "pod", "-n", namespace, "so") == ["solo"]
    assert candidates(cluster, "pod", "--ns", namespace[:-3]) == [namespace]
    # the Deployment's ReplicaSet is owned, so only the Deployment is offered
    assert candidates(cluster, "rebalance", "-n", namespace, "") == ["deployment/web"]


def test_unreachable_server_answers_nothing_quickly(cluster, tmp_path):
    config = tmp_path / "kubeconfig"
    config.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
        "clusters: [{name: c, cluster: {server: 'https://10.255.255.1:6443'}}]\n"  # never answers
        "users: [{name: u, user: {token: t}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\n")
    start = time.monotonic()
    old = os.environ["PATH"]
    os.environ["PATH"] = f"{cluster.bin_dir}{os.pathsep}{old}"
    try:
        out = KubectlComplete(tree, ["--kubeconfig", str(config), "drain", ""]).complete()
    finally:
        os.environ["PATH"] = old
    assert out == ":4"
    assert time.monotonic() - start < 6


def test_kubectl_plugin_completion_of_node_names(cluster, make_node):
    """``kubectl safety drain <TAB>`` end to end: kubectl -> bin/kubectl_complete-safety -> the API server."""
    name = make_node(f"plug-{uuid.uuid4().hex[:5]}")["metadata"]["name"]
    path = os.pathsep.join([os.path.join(ROOT, "bin"), os.path.dirname(sys.executable), str(cluster.bin_dir),
                            "/usr/bin", "/bin"])
    done = subprocess.run(["kubectl", "__complete", "safety", "drain", "--kubeconfig", str(cluster.kubeconfig),
                           name[:-2]], env={**os.environ, "PATH": path}, capture_output=True, text=True, timeout=60)
    assert done.stdout.splitlines() == [name, ":4"], done.stdout + done.stderr


# -- the krew archive ---------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def unpacked_archive(tmp_path_factory):
    """The krew archive built from this checkout (into a temporary folder), unpacked."""
    base = tmp_path_factory.mktemp("krew")
    manifest = base / "safety.yaml"
    manifest.write_text(open(os.path.join(ROOT, "krew", "safety.yaml")).read())
    path = build_krew_archive.build(str(base / "dist"), str(manifest), "https://example.test/releases")
    with tarfile.open(path) as tar:
        tar.extractall(base / "unpacked")
    return base / "unpacked" / f"kubectl-safety-{__version__}"


def bare_interpreters():
    """This Python and, when installed, the minimum one the archive supports."""
    minimum = ".".join(map(str, build_krew_archive.minimum_python()))
    return [sys.executable] + sorted(glob.glob(os.path.expanduser(f"~/.pyenv/versions/{minimum}.*/bin/python3")))[-1:]


@pytest.mark.parametrize("python", bare_interpreters())
def test_archive_explains_a_live_node_on_a_bare_interpreter(cluster, make_node, unpacked_archive, python, tmp_path):
    """No site-packages, no environment of ours: the archive alone reaches the API server."""
    name = make_node(f"krew-{uuid.uuid4().hex[:5]}")["metadata"]["name"]
    done = subprocess.run([python, "-I", "-S", unpacked_archive / "kubectl-safety", "explain", "node", name,
                           "--kubeconfig", cluster.kubeconfig, "-o", "json"],
                          env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "LANG": "C.UTF-8"},
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert (report["kind"], report["node"]["name"]) == ("NodeExplanation", name)
