"""Fixtures for integration tests: one real control plane per session, a namespace per test.

Every test under tests/integration is marked ``integration``. When the control plane
cannot start, the tests fail in CI (``CI`` set) and are skipped, loudly, elsewhere.
"""

from __future__ import annotations

import os
import re
import sys
import uuid
from pathlib import Path

import pytest

from cluster_helpers import AuditLog, Cluster, ClusterError, create_node, in_ci, remove_stale_clusters

HERE = Path(__file__).resolve().parent
_unavailable: list[str] = []


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "integration: needs the local control plane (build it with controlplane/build.sh)"
    )


def pytest_collection_modifyitems(config, items):
    for item in items:
        if HERE in Path(item.path).parents:
            item.add_marker(pytest.mark.integration)


def pytest_terminal_summary(terminalreporter):
    for reason in _unavailable:
        terminalreporter.write_line(f"CONTROL PLANE UNAVAILABLE, integration tests skipped: {reason}", red=True)


@pytest.fixture(scope="session")
def cluster():
    """The session's cluster: ``.kubeconfig``, ``.bin_dir``, ``.audit_log``, ``.kubectl(*args, as_user=)``."""
    remove_stale_clusters()
    c = Cluster(f"pytest-{os.getpid()}")
    try:
        seconds = c.up()
    except ClusterError as err:
        if in_ci():
            pytest.fail(f"control plane did not start (CI): {err}", pytrace=False)
        _unavailable.append(str(err).splitlines()[0])
        pytest.skip(f"CONTROL PLANE UNAVAILABLE: {err}")
    print(f"\ncontrol plane {c.name} ready in {seconds:.1f}s, KUBECONFIG={c.kubeconfig}", file=sys.stderr)
    yield c
    c.down()


@pytest.fixture(scope="session")
def audit(cluster) -> AuditLog:
    """Reader for the session cluster's API server audit log."""
    return AuditLog(cluster.audit_log)


@pytest.fixture
def namespace(cluster, request) -> str:
    """A fresh namespace for one test, deleted (without waiting) afterwards."""
    base = re.sub(r"[^a-z0-9-]+", "-", request.node.name.lower()).strip("-")[:40].strip("-")
    name = f"t-{base}-{uuid.uuid4().hex[:6]}"
    cluster.kubectl("create", "namespace", name)
    cluster.kubectl("wait", "serviceaccount/default", "-n", name, "--for=create", "--timeout=30s")
    yield name
    cluster.kubectl("delete", "namespace", name, "--wait=false", check=False)


@pytest.fixture
def make_node(cluster):
    """Factory ``make_node(name, ready=True, **node_kwargs)``; the nodes are deleted after the test."""
    names: list[str] = []

    def make(name: str | None = None, **kwargs) -> dict:
        name = name or f"node-{uuid.uuid4().hex[:8]}"
        names.append(name)
        return create_node(cluster, name, **kwargs)

    yield make
    if names:
        cluster.kubectl("delete", "node", *names, "--ignore-not-found", check=False)


@pytest.fixture(scope="session")
def real_node(cluster):
    """The machine's real kubelet node (controlplane/node.py), joined to the session's cluster."""
    from controlplane.node import Node

    node = Node(cluster)
    try:
        seconds = node.up(wait_for_other=600)  # one real node per machine: another session may hold it
    except ClusterError as err:
        if in_ci():
            pytest.fail(f"the real node did not start (CI): {err}", pytrace=False)
        _unavailable.append(f"real node: {str(err).splitlines()[0]}")
        pytest.skip(f"REAL NODE UNAVAILABLE: {err}")
    print(f"\nreal node {node.name} Ready in {seconds:.1f}s", file=sys.stderr)
    yield node
    node.down()
