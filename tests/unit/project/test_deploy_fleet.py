"""deploy/: the kustomization a fleet engine applies holds the report CronJob and what it needs, and the
fleet recipes (deploy/fleet/) point at it."""

from pathlib import Path

import yaml

DEPLOY = Path(__file__).resolve().parents[3] / "deploy"


def _docs(path):
    return [d for d in yaml.safe_load_all(path.read_text()) if d]


def test_the_deploy_kustomization_holds_the_report_job_and_its_account_and_roles():
    resources = _docs(DEPLOY / "kustomization.yaml")[0]["resources"]
    docs = [d for r in resources for d in _docs(DEPLOY / r)]
    kinds = {(d["kind"], d["metadata"]["name"]) for d in docs}
    assert {("CronJob", "kubectl-safety-reports"), ("ServiceAccount", "kubectl-safety-reports"),
            ("ClusterRole", "kubectl-safety-read"), ("ClusterRole", "kubectl-safety-publish-reports"),
            ("Namespace", "kubectl-safety")} <= kinds
    bound = {d["roleRef"]["name"] for d in docs if d["kind"] == "ClusterRoleBinding"
             if any(s["name"] == "kubectl-safety-reports" for s in d["subjects"])}
    assert bound == {"kubectl-safety-read", "kubectl-safety-publish-reports"}


def test_the_fleet_recipes_apply_the_deploy_directory():
    appset = _docs(DEPLOY / "fleet" / "argocd-applicationset.yaml")[0]
    assert appset["spec"]["template"]["spec"]["source"]["path"] == "deploy"
    flux = {d["kind"]: d for d in _docs(DEPLOY / "fleet" / "flux-kustomization.yaml")}
    assert flux["Kustomization"]["spec"]["path"] == "./deploy"
    assert flux["Kustomization"]["spec"]["sourceRef"]["name"] == flux["GitRepository"]["metadata"]["name"]
