"""``check -o openreports``: a ClusterCheck as OpenReports (or wgpolicyk8s.io PolicyReport) objects.

Pure mapping from the typed ClusterCheck, no analysis: one ``ClusterReport`` holds a result per node
(``pass``: drainable; ``fail``: its blocking risk codes) and the findings that are not about one
namespace; one ``Report`` per namespace holds the findings whose objects all live there (PDBs,
workloads). Field names and enums are those of the CRDs of ``github.com/openreports/reports-api``
v0.2.1 (``config/crd/openreports.io_*.yaml``) and of the ``wgpolicyk8s.io/v1alpha2`` CRDs Kyverno
v1.19.1 ships (``config/crds/policyreport/``): the same ``results[]``, but no report-level ``source``.
"""

from kubectl_safety.model.meta import parse_time

SOURCE = "kubectl-safety"
NAME = "kubectl-safety"  # every report's name: one of each per cluster and namespace
LABEL = "app.kubernetes.io/managed-by"  # the label that marks the reports ``check --publish`` owns
APIS = {  # --report-api: (apiVersion, cluster kind, namespaced kind, their resources)
    "openreports": ("openreports.io/v1alpha1", "ClusterReport", "Report", "clusterreports", "reports"),
    "wgpolicy": ("wgpolicyk8s.io/v1alpha2", "ClusterPolicyReport", "PolicyReport",
                 "clusterpolicyreports", "policyreports"),
}
# Our finding severities on the reports' enum (critical|high|medium|low|info).
SEVERITY = {"error": "high", "warning": "medium", "info": "info"}
RANK = ("info", "warning", "error")
RESULTS = ("pass", "fail", "warn", "error", "skip")


def reports(check, api="openreports") -> list:
    """The report objects of one ClusterCheck in ``api`` (``APIS``): the ClusterReport first, then
    one Report per namespace in name order."""
    version, cluster_kind, ns_kind, _, _ = APIS[api]
    stamp = _timestamp(check.taken_at)
    cluster, namespaced = [_node(n, stamp) for n in check.nodes], {}
    for finding in check.findings + check.other_findings:
        result = _finding(finding, check.summary.fail_on, stamp)
        namespaces = {o.namespace for o in finding.objects}
        if len(namespaces) == 1 and "" not in namespaces:
            namespaced.setdefault(namespaces.pop(), []).append(result)
        else:
            cluster.append(result)
    out = [_report(version, cluster_kind, None, cluster, api)]
    out += [_report(version, ns_kind, ns, namespaced[ns], api) for ns in sorted(namespaced)]
    return out


def _report(version, kind, namespace, results, api) -> dict:
    metadata = {"name": NAME, "labels": {LABEL: SOURCE}}
    if namespace:
        metadata["namespace"] = namespace
    report = {"apiVersion": version, "kind": kind, "metadata": metadata}
    if api == "openreports":
        report["source"] = SOURCE
    else:  # wgpolicy has no report-level source: each result says it
        results = [{**r, "source": SOURCE} for r in results]
    report["summary"] = {r: sum(1 for x in results if x["result"] == r) for r in RESULTS}
    report["results"] = results
    return report


def _node(node, stamp) -> dict:
    """A node's drain verdict: pass when drainable, else fail with the codes of its unaccepted risks."""
    codes = sorted({str(r.code.value) for r in node.risks if not r.accepted})
    properties = {"pods": str(node.pods), "estimatedSeconds": str(node.estimated_seconds),
                  "removable": str(node.removable).lower(), "state": node.state,
                  "resultID": f"drainable/{node.name}"}
    if codes:
        properties["blockingCodes"] = ",".join(codes)
    if node.unplaceable:
        properties["unplaceable"] = str(len(node.unplaceable))
    if node.drainable:
        message = f"node {node.name} drains safely"
    else:
        message = f"node {node.name} cannot be drained safely: " + (", ".join(codes) or node.state)
    result = {"policy": "NODE_DRAINABLE", "message": message, "result": "pass" if node.drainable else "fail",
              "resources": [_resource("Node", "", node.name)], "properties": properties, "timestamp": stamp}
    if not node.drainable:
        result["severity"] = "high"
    return result


def _finding(finding, fail_on, stamp) -> dict:
    """A finding: fail when it gates at ``fail_on``, skip when outside the pool or ignored, else warn."""
    severity = finding.severity.value
    if finding.reason:
        outcome = "skip"
    elif fail_on != "none" and RANK.index(severity) >= RANK.index(fail_on):
        outcome = "fail"
    else:
        outcome = "warn"
    properties = {"objects": str(len(finding.objects)),
                  "resultID": finding.code + "/" + ",".join(_ref(o) for o in finding.objects)}
    if finding.reason:
        properties["reason"] = finding.reason
    return {"policy": finding.code, "message": finding.message, "result": outcome,
            "severity": SEVERITY[severity], "category": finding.objects[0].kind if finding.objects else "Cluster",
            "resources": [_resource(o.kind, o.namespace, o.name) for o in finding.objects],
            "properties": properties, "timestamp": stamp}


def _resource(kind, namespace, name) -> dict:
    ref = {"kind": kind, "name": name}
    version = _api_version(kind)
    if version:
        ref["apiVersion"] = version
    if namespace:
        ref["namespace"] = namespace
    return ref


def _api_version(kind):
    from kubectl_safety.model.kinds import TABLE

    for k in TABLE:
        if k.kind == kind:
            return k.api
    return {"Deployment": "apps/v1", "StatefulSet": "apps/v1", "ReplicaSet": "apps/v1", "DaemonSet": "apps/v1",
            "Job": "batch/v1", "CronJob": "batch/v1"}.get(kind)


def _ref(o) -> str:
    return f"{o.kind}/{o.namespace}/{o.name}" if o.namespace else f"{o.kind}/{o.name}"


def _timestamp(taken_at) -> dict:
    """The results' time (the snapshot's), as the CRDs' ``{seconds, nanos}``."""
    if not taken_at:
        return {"seconds": 0, "nanos": 0}
    when = parse_time(taken_at)
    return {"seconds": int(when.timestamp()), "nanos": 0}


def deliver(check, g, publish, report_api) -> None:
    """``check -o openreports`` and/or ``check --publish``: print the reports, or the check as ``-o``
    says and write the reports to the cluster (``--report-api``: auto picks openreports when served,
    else wgpolicy; both writes both)."""
    from kubectl_safety.cli.render import emit
    from kubectl_safety.cli.views.check import render_check

    apis = {"both": ["openreports", "wgpolicy"], "auto": ["openreports"]}.get(report_api, [report_api])
    if publish:
        from kubectl_safety.cli.session import Session
        from kubectl_safety.cluster.reports import none_served, publish as write, served

        connection = Session(g).connection("check")
        if report_api == "auto":
            found = served(connection, {k: APIS[k][0] for k in APIS})
            if not found:
                raise none_served([APIS[k][0] for k in APIS])
            apis = found[:1]
        objects = [o for api in apis for o in reports(check, api)]
        done = write(connection, objects, {APIS[a][0]: (APIS[a][3], APIS[a][4]) for a in apis}, f"{LABEL}={SOURCE}")
    if g.output == "openreports":
        emit({"apiVersion": "v1", "kind": "List", "items": [o for api in apis for o in reports(check, api)]}, "yaml")
    else:
        emit(check, g.output, render_check)
    if publish:
        import click

        from kubectl_safety.printable import for_terminal

        gone = f"; deleted {', '.join(done['deleted'])}" if done["deleted"] else ""
        click.echo(for_terminal(f"published {', '.join(done['applied'])}{gone}"), err=True)
