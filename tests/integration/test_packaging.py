"""Dynamic completion against the real control plane, through the built kubectl."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid

import click
from cluster_helpers import create, deployment, pod

from kubectl_safety.cli.completion import (KubectlComplete, complete_namespaces, complete_nodes, complete_pods,
                                           complete_workloads)
from kubectl_safety.cli.options import global_options

ROOT = os.getcwd()


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
