"""deploy/publish-reports.yaml on the control plane: its container's command line run through the in-cluster
code path (a ServiceAccount's token, CA and namespace files) with exactly its roles, then with each verb
of the report role taken away (and without the read role): sufficient and minimal, one clear line each."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from cluster_helpers import create, pdb, pool_nodes, pool_web, wait_pods_running, wait_until
from report_crds import OPENREPORTS, WGPOLICY, install
from test_incluster import pod_files  # noqa: F401 - the fixture: the pod's files for ServiceAccount "job"

from tests.unit.cli_helpers import run_cli

DEPLOY = Path(__file__).resolve().parents[2] / "deploy" / "publish-reports.yaml"
DOCS = [d for d in yaml.safe_load_all(DEPLOY.read_text()) if d]
ROLE = next(d for d in DOCS if d["kind"] == "ClusterRole")
CRON = next(d for d in DOCS if d["kind"] == "CronJob")
ONCE = yaml.safe_load((DEPLOY.parent / "job-publish-reports.yaml").read_text())
ARGS = CRON["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]["args"]
API = {"openreports.io": "openreports", "wgpolicyk8s.io": "wgpolicy"}
LABEL = "app.kubernetes.io/managed-by=kubectl-safety"


def test_the_cronjob_and_the_job_run_the_same_check_with_the_manifests_account():
    assert ONCE["spec"]["template"]["spec"]["containers"][0]["args"] == ARGS
    assert ARGS[:2] == ["check", "--publish"]
    accounts = {d["spec"]["jobTemplate"]["spec"]["template"]["spec"]["serviceAccountName"] if d is CRON
                else d["spec"]["template"]["spec"]["serviceAccountName"] for d in (CRON, ONCE)}
    bound = {s["name"] for d in DOCS if d["kind"] == "ClusterRoleBinding" for s in d["subjects"]}
    assert accounts == bound == {"kubectl-safety-reports"}


def _role(cluster, rules, user):
    """Apply the role with ``rules`` and wait until the authorizer answers by them for ``user``."""
    cluster.kubectl("apply", "-f", "-", input=json.dumps({**ROLE, "rules": rules}))
    for rule in ROLE["rules"]:
        for verb in rule["verbs"]:
            want = "yes" if any(verb in r["verbs"] and r["apiGroups"] == rule["apiGroups"] for r in rules) else "no"
            what = f"{rule['resources'][0]}.{rule['apiGroups'][0]}"
            wait_until(lambda: cluster.kubectl("auth", "can-i", verb, what, "-A", f"--as={user}",
                                               check=False).stdout.strip() == want, 20, f"{verb} {what}: {want}")


def _reset(cluster, other):
    """No report of ours anywhere but a stale one in ``other``: each run creates, patches, lists, deletes."""
    for kind in ("clusterreports.openreports.io", "reports.openreports.io",
                 "clusterpolicyreports.wgpolicyk8s.io", "policyreports.wgpolicyk8s.io"):
        cluster.kubectl("delete", kind, "-A", "-l", LABEL, "--wait=true")
    for version, kind in (("openreports.io/v1alpha1", "Report"), ("wgpolicyk8s.io/v1alpha2", "PolicyReport")):
        create(cluster, other, {"apiVersion": version, "kind": kind,
                                "metadata": {"name": "kubectl-safety", "labels": {LABEL.split("=")[0]: "kubectl-safety"}}})


def _run(api):
    code, out, err = run_cli(ARGS + ["--report-api", api])
    lines = [line for line in err.strip().splitlines() if not line.startswith("warning: ")]
    return code, lines


CASES = [(group, verb) for group in API for verb in ROLE["rules"][0]["verbs"]]


def test_publish_rbac_is_sufficient_and_minimal(cluster, namespace, make_node, pod_files):  # noqa: F811
    install(cluster, OPENREPORTS + WGPOLICY)
    pool_nodes(make_node, namespace, 1)
    create(cluster, namespace, pool_web(1, namespace), pdb("web", {"app": "web"}, min_available=1))
    wait_pods_running(cluster, namespace, "app=web", count=1, ready=False)
    other = f"{namespace}-old"
    cluster.kubectl("create", "namespace", other)
    sa = f"--serviceaccount={namespace}:job"
    cluster.kubectl("create", "clusterrolebinding", f"{namespace}-job", "--clusterrole=kubectl-safety-read", sa)
    cluster.kubectl("create", "clusterrolebinding", f"{namespace}-pub", f"--clusterrole={ROLE['metadata']['name']}", sa)
    try:
        for api in API.values():  # the manifest's role: enough
            _role(cluster, ROLE["rules"], pod_files)
            _reset(cluster, other)
            code, lines = _run(api)
            assert code in (0, 3), lines
            assert lines and lines[-1].startswith("published ") and "deleted " in lines[-1], lines
            assert f"Report/{namespace}/kubectl-safety" in lines[-1] and other in lines[-1].split("deleted")[1]
        for group, verb in CASES:  # each verb taken away: one clear line
            rules = [{**r, "verbs": [v for v in r["verbs"] if v != verb]} if r["apiGroups"] == [group] else r
                     for r in ROLE["rules"]]
            _role(cluster, rules, pod_files)
            _reset(cluster, other)
            code, lines = _run(API[group])
            assert code == 1 and len(lines) == 1 and "forbidden" in lines[0].lower() and f"cannot {verb} resource" in lines[0] \
                and pod_files in lines[0], (group, verb, lines)
        _role(cluster, ROLE["rules"], pod_files)
        cluster.kubectl("delete", "clusterrolebinding", f"{namespace}-job")  # no read role: the check cannot read
        code, lines = wait_until(lambda: (lambda r: r if r[0] == 1 else None)(_run("openreports")), 20,
                                 "the check without the read role to fail")
        assert len(lines) == 1 and "forbidden" in lines[0].lower() and "cannot list resource" in lines[0], lines
    finally:
        cluster.kubectl("delete", "clusterrolebinding", f"{namespace}-pub", "--ignore-not-found", check=False)
        cluster.kubectl("delete", "namespace", other, "--wait=false", check=False)
