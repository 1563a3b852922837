"""A drain of a "GPU node" on the test control plane: the scheduler allocated the pod's claim from a
ResourceSlice made by hand (kwok nodes run no DRA driver); the plan is NOT SAFE while no other node
publishes a matching device, SAFE once one does."""

from __future__ import annotations

import json

from cluster_helpers import create, deployment, wait_pods_running, wait_until

from tests.unit.cli_helpers import run_cli

DRIVER = "gpu.example.com"


def resource_slice(node: str) -> dict:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"{node}-gpu"},
            "spec": {"driver": DRIVER, "nodeName": node, "pool": {"name": node, "generation": 1,
                                                                  "resourceSliceCount": 1},
                     "devices": [{"name": "gpu-0", "attributes": {"model": {"string": "A100"}}}]}}


def test_a_drain_of_the_only_gpu_node_is_not_safe_until_another_node_publishes_a_gpu(cluster, namespace,
                                                                                      make_node):
    nodes = [make_node(f"gpu-{namespace[-6:]}-{i}")["metadata"]["name"] for i in range(2)]
    klass = f"gpu-{namespace[-6:]}"
    create(cluster, None, {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": klass},
                           "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]}},
           resource_slice(nodes[0]))
    template = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": {"name": "gpu"},
                "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": klass}}]}}}}
    train = deployment("train", 1, requests={"cpu": "100m"})
    spec = train["spec"]["template"]["spec"]
    spec["resourceClaims"] = [{"name": "gpu", "resourceClaimTemplateName": "gpu"}]
    spec["containers"][0]["resources"]["claims"] = [{"name": "gpu"}]
    try:
        create(cluster, namespace, template, train)
        pod = wait_pods_running(cluster, namespace, "app=train", count=1, ready=False)[0]
        assert pod["spec"]["nodeName"] == nodes[0]
        base = ["--kubeconfig", str(cluster.kubeconfig), "--request-timeout", "30s"]

        def plan():
            code, out, err = run_cli(["drain", nodes[0], "--dry-run", "--ignore-daemonsets", "-o", "json"] + base)
            return code, json.loads(out) if out else {}, err

        code, report, err = plan()
        assert report.get("safe") is False, (code, report, err)
        assert "REPLACEMENT_UNPLACEABLE" in [r["code"] for r in report["risks"]], report["risks"]
        create(cluster, None, resource_slice(nodes[1]))
        wait_until(lambda: plan()[1].get("safe") is True, timeout=30, what="a SAFE plan once n2 has a GPU")
    finally:
        cluster.kubectl("delete", "resourceslice", f"{nodes[0]}-gpu", f"{nodes[1]}-gpu", "--ignore-not-found",
                        check=False)
        cluster.kubectl("delete", "deviceclass", klass, "--ignore-not-found", check=False)
