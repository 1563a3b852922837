"""The pod a manifest would create: a Pod, or the pod template of a workload.

Pure: takes an already-read object dict. Requests defaulted from limits are handled by the
model (``Container``), priority by ``analysis/priority.resolve`` (admission).
"""

from kubectl_safety.analysis.scheduling.replacement import stateful_volumes
from kubectl_safety.model.pods import Pod
from kubectl_safety.model.selectors import match_labels
from kubectl_safety.model.storage import PersistentVolumeClaim

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
    info = {"kind": kind, "name": name, "replicas": _replicas(kind, spec)}
    if kind == "StatefulSet" and spec.get("volumeClaimTemplates"):
        info["statefulset"] = {**obj, "metadata": {**meta, "name": name, "namespace": ns}}
    return Pod(raw), info


DEFAULT_CLASS = ("storageclass.kubernetes.io/is-default-class", "storageclass.beta.kubernetes.io/is-default-class")


def stateful_pod(pod, statefulset, ordinal, snapshot) -> tuple:
    """``(pod, snapshot)``: the StatefulSet's pod of ``ordinal`` as its controller makes it
    (``newStatefulSetPod``: named ``<set>-<ordinal>``, each claim template's volume naming the claim
    ``<template>-<set>-<ordinal>``), and the snapshot with the claims the controller creates first
    where they do not exist (``createPersistentVolumeClaims``: the template's spec, the selector's
    labels added to the template's, the default StorageClass set by admission when the template names none)."""
    meta = statefulset["metadata"]
    name, namespace = f"{meta['name']}-{ordinal}", meta["namespace"]
    spec = {**pod.spec, "volumes": stateful_volumes(pod.spec.get("volumes") or [], statefulset, name)}
    made = Pod({**pod.raw, "metadata": {**pod.meta, "name": name}, "spec": spec})
    labels = match_labels((statefulset.get("spec") or {}).get("selector"))
    labels = labels if isinstance(labels, dict) else {}
    default = _default_class(snapshot)
    created = []
    for template in statefulset["spec"]["volumeClaimTemplates"]:
        claim = f"{(template.get('metadata') or {}).get('name')}-{meta['name']}-{ordinal}"
        if snapshot.pvc(namespace, claim) is not None:
            continue
        claim_spec = dict(template.get("spec") or {})
        if "storageClassName" not in claim_spec and default is not None:
            claim_spec["storageClassName"] = default
        tlabels = (template.get("metadata") or {}).get("labels") or {}
        created.append(PersistentVolumeClaim({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                                              "metadata": {"name": claim, "namespace": namespace,
                                                           "labels": {**tlabels, **labels}},
                                              "spec": claim_spec, "status": {"phase": "Pending"}}))
    return made, (snapshot.replace(pvcs=list(snapshot.pvcs) + created) if created else snapshot)


def _default_class(snapshot):
    """The DefaultStorageClass admission plugin's choice: of the classes marked default, the newest."""
    marked = [c for c in snapshot.storage_classes
              if any((c.meta.get("annotations") or {}).get(k) == "true" for k in DEFAULT_CLASS)]
    if not marked:
        return None
    return max(marked, key=lambda c: (c.meta.get("creationTimestamp") or "", c.name)).name


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
