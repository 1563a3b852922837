"""The pod a manifest would create: a Pod, or the pod template of a workload.

Pure: takes an already-read object dict. Requests defaulted from limits are handled by the
model (``Container``), priority by ``analysis/priority.resolve`` (admission).
"""

from kubectl_safety.model.pods import Pod

TEMPLATE_KINDS = ("Deployment", "StatefulSet", "ReplicaSet", "Job", "CronJob")
TEMPLATE_HASH = "pod-template-hash"
NEW_TEMPLATE_HASH = "preview"  # stands for ComputeHash of a template no running pod was made from


class UnsupportedManifest(Exception):
    """The manifest is not a Pod or a workload with a pod template (the CLI reports it)."""


def pod_from_manifest(obj: dict, namespace: str) -> tuple:
    """``(Pod, info)``: the pod and ``{kind, name, replicas}`` of the manifest it came from.

    ``namespace`` applies when the manifest has none. A workload's pod is named like its
    controller would name it (``NAME-0`` for a StatefulSet, ``NAME-preview`` otherwise); a
    Deployment's carries ``pod-template-hash`` (which ``matchLabelKeys`` spreads select by) with a
    value no existing pod has: the previewed template is taken to be a new revision.
    """
    kind = obj.get("kind")
    meta = obj.get("metadata") or {}
    name = meta.get("name") or meta.get("generateName", "").rstrip("-")
    ns = meta.get("namespace") or namespace
    if kind == "Pod":  # a create wipes the deletion fields (WipeObjectMetaSystemFields)
        kept = {k: v for k, v in meta.items() if k not in ("deletionTimestamp", "deletionGracePeriodSeconds")}
        raw = {"apiVersion": "v1", "kind": "Pod",
               "metadata": {**kept, "name": name or "preview", "namespace": ns},
               "spec": dict(obj.get("spec") or {}), "status": {"phase": "Pending"}}
        return Pod(raw), {"kind": kind, "name": name, "replicas": 1}
    if kind not in TEMPLATE_KINDS:
        raise UnsupportedManifest(f"cannot preview a {kind or 'manifest without kind'}: give a Pod, "
                         f"{', '.join(TEMPLATE_KINDS[:-1])} or {TEMPLATE_KINDS[-1]}")
    spec = obj.get("spec") or {}
    if kind == "CronJob":
        spec = (spec.get("jobTemplate") or {}).get("spec") or {}
    template = spec.get("template") or {}
    if not template.get("spec"):
        raise UnsupportedManifest(f"{kind} {name}: spec{'.jobTemplate.spec' if kind == 'CronJob' else ''}"
                         ".template.spec is missing")
    tmeta = template.get("metadata") or {}
    pod_name = f"{name}-0" if kind == "StatefulSet" else f"{name}-preview"
    raw = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": pod_name, "namespace": ns, "labels": dict(tmeta.get("labels") or {}),
                        "annotations": dict(tmeta.get("annotations") or {})},
           "spec": dict(template["spec"]), "status": {"phase": "Pending"}}
    if kind == "Deployment":  # the new ReplicaSet's template carries the hash (a new template: no pod has it yet)
        raw["metadata"]["labels"].setdefault(TEMPLATE_HASH, NEW_TEMPLATE_HASH)
    return Pod(raw), {"kind": kind, "name": name, "replicas": _replicas(kind, spec)}


def _replicas(kind, spec) -> int:
    """How many pods the controller starts: a Job (and a CronJob's) min(parallelism, completions),
    both defaulting to 1 (completions unset: parallelism); others ``replicas`` (default 1)."""
    if kind in ("Job", "CronJob"):
        parallelism = spec.get("parallelism")
        parallelism = 1 if parallelism is None else int(parallelism)
        completions = spec.get("completions")
        return parallelism if completions is None else min(parallelism, int(completions))
    replicas = spec.get("replicas")
    return 1 if replicas is None else int(replicas)
