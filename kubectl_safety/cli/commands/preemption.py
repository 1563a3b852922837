"""``kubectl safety preemption``: preview which pods the scheduler would preempt, where, and why."""

import click

from kubectl_safety.cli.completers import complete_names
from kubectl_safety.cli.options import get_globals, global_options
from kubectl_safety.cli.render import emit, warn
from kubectl_safety.cli.session import Session
from kubectl_safety.errors import InputError, NotFoundError, UsageError

MAX_COPIES = 1000
EXIT = "\b\nJSON kind: PreemptionPreview (read-only: nothing is created, patched or deleted)"


VALIDATE = {"strict": "strict", "true": "strict", "warn": "warn", "ignore": "ignore", "false": "ignore"}


@click.command("preemption", epilog=EXIT)
@click.argument("pod", required=False, shell_complete=complete_names)
@click.option("-f", "--filename", metavar="FILE", type=click.Path(allow_dash=True, dir_okay=False),
              help="A manifest or a stream of them (YAML or JSON; - for stdin), such as helm template or kustomize "
                   "build prints: every Pod, Deployment, StatefulSet, ReplicaSet, Job and CronJob is previewed; "
                   "PriorityClasses in it are used; other objects are ignored (one summary line).")
@click.option("--replicas", type=click.IntRange(min=1, max=MAX_COPIES), default=None, metavar="N",
              help="Place N copies one after another, each consuming what it took (default: the workload's "
                   "replicas or parallelism; one workload only).")
@click.option("--kubernetes-version", metavar="VERSION",
              help="Validate the manifest against this version (default: the server's; offline 1.34).")
@click.option("--validate", "validate_mode", default="strict", show_default=True, metavar="strict|warn|ignore",
              type=click.Choice(sorted(VALIDATE), case_sensitive=False),
              help="As kubectl: strict fails on an invalid object, warn reports it and goes on, ignore skips "
                   "validation (true=strict, false=ignore). Without kubernetes-validate installed only the "
                   "basic structure is checked, and a line says so.")
@click.option("--accept-risk", "accept_risk", multiple=True, metavar="CODE[,CODE]",
              help="Exit 0 despite these risks (snapshot-incomplete: a kind the preview rests on is not in the "
                   "--snapshot files); repeatable.")
@global_options
def command(pod, filename, replicas, kubernetes_version, validate_mode, accept_risk):
    """Preview kube-scheduler preemption for a pending pod or a manifest.

    Shows whether the pod fits without preemption; if not, whether it may preempt, every
    candidate node with the victims the scheduler would choose (PDB-violating pods reprieved
    first, then the rest, most important first) ranked in the scheduler's order, the nodes
    excluded and why, and where the real scheduler's sampling or ties could choose otherwise.
    Each workload of a stream is previewed alone against the cluster as it is now (-o json:
    a List of PreemptionPreview).

    \b
    Usage: kubectl safety preemption (POD [-n NS] | pod/POD | -f FILE) [--replicas N] [--validate MODE] [-o FORMAT]
    Examples:
      kubectl safety preemption report-xyz -n jobs
      kubectl safety preemption -f deploy.yaml --replicas 3
      helm template ./chart | kubectl safety preemption -f - -o json | jq '.items[].victims'
      kustomize build overlays/prod | kubectl safety preemption -f - -o name
      kubectl safety preemption report-xyz -n jobs --snapshot cluster.yaml
    """
    from kubectl_safety.analysis.admission import AdmissionRejected, admit
    from kubectl_safety.cli.risks import accepted_risks
    from kubectl_safety.analysis.preemption import preview
    from kubectl_safety.analysis.priority import UnknownPriorityClass
    from kubectl_safety.cluster.dump import bulk_load
    from kubectl_safety.cluster.scopes import admission_scope, cluster_scope

    s = Session(get_globals())
    accepted = "SNAPSHOT_INCOMPLETE" in accepted_risks(accept_risk)
    if bool(pod) == bool(filename):
        raise UsageError("give either a POD name or -f FILE")
    if filename == "-" and "-" in s.g.snapshot:
        raise UsageError("-f - and --snapshot - cannot both read stdin")
    if pod and replicas is None:
        replicas = 1
    targets, classes = _read(filename, kubernetes_version, VALIDATE[validate_mode.lower()], s) if filename else ([], [])
    if replicas is not None and len(targets) > 1:
        raise UsageError(f"--replicas applies to one workload: {filename} has {len(targets)}")
    snap = s.snapshot(() if s.offline else cluster_scope() + (admission_scope() if filename else []), "preemption")
    snap = _with_classes(snap, classes)
    if pod:
        target = snap.pod(s.namespace, pod)
        if target is None:
            raise NotFoundError(f'pod "{pod}" not found in namespace "{s.namespace}"')
        targets = [(target, {"replicas": 1})]
    reports = []
    with bulk_load():  # the preview makes no cycles: collections would only rescan what it builds
        for target, info in targets:
            copies = replicas or min(max(1, info["replicas"]), MAX_COPIES)
            try:
                if filename:  # a manifest's pod is what admission makes of it
                    target = admit(target, snap)
                reports.append(preview(target, snap, s.now() or snap.taken_at, copies, info.get("statefulset")))
            except (UnknownPriorityClass, AdmissionRejected) as e:
                raise InputError(f"the API server would reject the pod: {e}") from None
    from kubectl_safety.cli.views.preemption import preemption_code, render, render_list

    if len(reports) == 1:
        emit(reports[0], s.g.output, render)
    else:
        emit({"kind": "List", "apiVersion": "v1", "items": reports}, s.g.output, render_list)
    return preemption_code(reports, accepted)


def _read(filename, kubernetes_version, mode, s):
    """([(Pod, info)], [PriorityClass dicts]) from the manifest stream, validated as ``mode`` says."""
    from kubectl_safety.analysis.manifest import TEMPLATE_KINDS, UnsupportedManifest, pod_from_manifest
    from kubectl_safety.cluster.manifest_io import read_manifest

    objects = read_manifest(filename)
    check = _validator(mode, kubernetes_version, s)
    targets, classes, ignored = [], [], {}
    for i, obj in enumerate(objects):
        origin = filename if len(objects) == 1 else f"{filename} object {i + 1}"
        kind = obj.get("kind")
        if kind == "PriorityClass" or kind == "Pod" or kind in TEMPLATE_KINDS:
            if not check(obj, origin):
                continue
            if kind == "PriorityClass":
                classes.append(obj)
                continue
            try:
                targets.append(pod_from_manifest(obj, s.namespace))
            except UnsupportedManifest as e:
                raise InputError(f"{origin}: {e}") from None
        else:
            ignored[kind or "(no kind)"] = ignored.get(kind or "(no kind)", 0) + 1
    if ignored:
        total = sum(ignored.values())
        warn(f"{filename}: ignored {total} object(s) that create no pods: "
             + ", ".join(f"{n} {k}" for k, n in sorted(ignored.items())))
    if not targets:
        raise InputError(f"{filename}: expected a Pod, Deployment, StatefulSet, ReplicaSet, Job or CronJob, found 0")
    return targets, classes


def _validator(mode, kubernetes_version, s):
    """``check(obj, origin) -> bool``: kubernetes-validate when installed, else a basic structural check."""
    import importlib.util

    from kubectl_safety.cluster import manifest_io

    if mode == "ignore":
        return lambda obj, origin: True
    if importlib.util.find_spec("kubernetes_validate") is None:
        warn("kubernetes-validate is not installed: checking only apiVersion, kind, metadata.name and containers "
             f"(--validate={mode}); install it for full schema validation")
        return lambda obj, origin: _verdict(mode, origin, lambda: _basic(obj, origin))
    if kubernetes_version:
        version = manifest_io.supported_version(kubernetes_version, True)
    elif not s.offline:
        version = manifest_io.supported_version(s.connection("preemption").server_version(), False)
    else:
        version = manifest_io.supported_version(None, False)
    return lambda obj, origin: _verdict(mode, origin, lambda: manifest_io.validate(obj, version, origin))


def _verdict(mode, origin, run) -> bool:
    """strict: an invalid object is an error; warn: a warning line, and it is still previewed."""
    try:
        run()
    except InputError as e:
        if mode == "strict":
            raise
        warn(f"{e} (--validate=warn: previewed anyway)")
    return True


def _basic(obj, origin):
    """What a preview needs without the API schema: apiVersion, kind, a name, containers with names."""
    for key in ("apiVersion", "kind"):
        if not isinstance(obj.get(key), str) or not obj.get(key):
            raise InputError(f"{origin}: {key} is missing")
    meta = obj.get("metadata")
    if not isinstance(meta, dict) or not (meta.get("name") or meta.get("generateName")):
        raise InputError(f"{origin}: metadata.name is missing")
    if obj["kind"] == "PriorityClass":
        if not isinstance(obj.get("value"), int):
            raise InputError(f"{origin}: invalid PriorityClass: field value: must be an integer")
        return
    spec = obj.get("spec") if obj["kind"] == "Pod" else _template_spec(obj)
    containers = (spec or {}).get("containers") if isinstance(spec, dict) else None
    if not isinstance(containers, list) or not containers or not all(isinstance(c, dict) and c.get("name") for c in containers):
        raise InputError(f"{origin}: invalid {obj['kind']}: containers must be a non-empty list of named containers")


def _template_spec(obj):
    spec = obj.get("spec") or {}
    if obj.get("kind") == "CronJob":
        spec = ((spec.get("jobTemplate") or {}).get("spec")) or {}
    return (spec.get("template") or {}).get("spec") if isinstance(spec, dict) else None


def _with_classes(snap, classes):
    """The snapshot with the manifest's PriorityClasses added (replacing same-named ones)."""
    if not classes:
        return snap
    from kubectl_safety.model.policy import PriorityClass

    names = {(c.get("metadata") or {}).get("name") for c in classes}
    kept = [c for c in snap.priority_classes if c.name not in names]
    return snap.replace(priority_classes=kept + [PriorityClass(c) for c in classes])

