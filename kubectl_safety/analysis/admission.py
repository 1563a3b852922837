"""A pod create as the API server's default admission plugins judge it (pure).

``admit(pod, snapshot) -> Pod`` returns the pod as stored, or raises ``AdmissionRejected`` naming
the plugin, in the default order (after the API's defaulting of what the model does not default
itself: a ``hostNetwork`` pod's ports get their containerPort as hostPort):

- LimitRanger: a ``Container`` item's ``default`` limits and ``defaultRequest`` requests fill the
  containers that set none (the LimitRange as stored: ``max`` defaults ``default``, which
  defaults ``defaultRequest``, then ``min``); then ``min``/``max``/``maxLimitRequestRatio`` of
  ``Container`` and ``Pod`` items are enforced (a Pod item on the containers and sidecars, the
  init peak, and pod-level resources in their place).
- Priority: a pod that sets ``priority`` or ``preemptionPolicy`` to anything but its class's (or
  the global default's, or 0 and PreemptLowerPriority) is rejected; the value itself is what
  ``priority.resolve`` reports.
- RuntimeClass: an unknown class is rejected; its ``overhead.podFixed`` becomes the pod's overhead
  (a different one is rejected) and its scheduling nodeSelector (a conflicting key is rejected) and
  tolerations are merged in.
- The pod strategy's validation: no container requests more than its limit; pod-level resources
  (their requests defaulted by the API before admission) within their limits, at least the
  containers' aggregate requests, and no container's limit above them.
- ResourceQuota: every quota of the namespace whose ``status.hard`` names a resource the pod uses
  and whose scopes all match the pod (``quota_matches``): the pod's usage (``pods``,
  ``count/pods``, ``requests.*``/bare names, ``limits.*``) added to ``status.used`` must stay
  within ``status.hard``; a quota the controller has not computed yet (no ``status.hard``) limits
  nothing; a hard requests/limits entry needs every container to set that request/limit (unless
  the pod sets pod-level resources).
"""

from kubectl_safety.analysis.qos import compute_qos
from kubectl_safety.analysis.resources import pod_level_set, pod_requests
from kubectl_safety.model.constants import SYSTEM_CLASSES
from kubectl_safety.model.pods import POD_LEVEL_RESOURCES, Pod, aggregate_requests
from kubectl_safety.model.quantity import exact_resource_list, format_amount, rounded

COMPUTE = ("cpu", "memory", "ephemeral-storage")


class AdmissionRejected(Exception):
    """The API server would refuse the create (``plugin``: which admission plugin)."""

    def __init__(self, plugin, message):
        super().__init__(f"{plugin}: {message}")
        self.plugin = plugin


def admit(pod, snapshot) -> Pod:
    """The pod as the API server stores it after admission, or AdmissionRejected."""
    raw = {**pod.raw, "metadata": dict(pod.meta), "spec": dict(pod.spec)}
    raw["spec"]["containers"] = [dict(c) for c in raw["spec"].get("containers") or ()]
    _host_network_ports(raw["spec"])
    _pod_level_requests(raw)
    ranges = snapshot.limit_ranges_in(pod.namespace)
    for item in (i for r in ranges for i in r.limits):
        _limit_defaults(raw, _stored(item))
    _priority(raw, snapshot)
    _runtime_class(raw, snapshot)
    admitted = Pod(raw)
    _validate(admitted)
    for item in (i for r in ranges for i in r.limits):
        _limit_bounds(admitted, _stored(item))
    _quota(admitted, snapshot)
    return admitted


def _host_network_ports(spec):
    """The API's defaulting (``SetDefaults_PodSpec``): with ``hostNetwork`` a port's hostPort is its containerPort."""
    if not spec.get("hostNetwork"):
        return
    for key in ("initContainers", "containers"):
        if key in spec:
            spec[key] = [{**c, "ports": [{**p, "hostPort": p.get("hostPort") or p.get("containerPort")}
                                          for p in c.get("ports") or ()]} if c.get("ports") else c
                         for c in spec[key]]


def _pod_level_requests(raw):
    """The API's ``defaultPodRequests``, before admission: with pod-level limits, a missing pod-level
    cpu or memory request is the containers' aggregate request (as the pod was given, before
    LimitRanger's defaults), or the pod-level limit when no container requests it."""
    resources = raw["spec"].get("resources")
    if not resources or not resources.get("limits"):
        return
    defaulted = Pod(raw).pod_level[0]
    given = resources.get("requests") or {}
    added = {r: format_amount(r, v) for r, v in defaulted.items() if r not in given}
    if added:
        raw["spec"]["resources"] = {**resources, "requests": {**given, **added}}


def _stored(item) -> dict:
    """``SetDefaults_LimitRangeItem``: a Container item's default from max, defaultRequest from default then min."""
    if item.get("type") != "Container":
        return item
    default = {**(item.get("max") or {}), **(item.get("default") or {})}
    request = {**(item.get("min") or {}), **default, **(item.get("defaultRequest") or {})}
    return {**item, "default": default, "defaultRequest": request}


def _limit_defaults(raw, item):
    if item.get("type") != "Container":
        return
    default, request = item.get("default") or {}, item.get("defaultRequest") or {}
    if not default and not request:
        return
    for key in ("containers", "initContainers"):
        out = []
        for c in raw["spec"].get(key) or ():
            resources = dict(c.get("resources") or {})
            limits, requests = dict(resources.get("limits") or {}), dict(resources.get("requests") or {})
            for name, value in default.items():
                limits.setdefault(name, value)
            for name, value in request.items():
                if name not in requests:  # the API's own defaulting already copied limits the pod set
                    requests[name] = (resources.get("limits") or {}).get(name, value)
            out.append({**c, "resources": {**resources, **({"limits": limits} if limits else {}),
                                            **({"requests": requests} if requests else {})}})
        if key in raw["spec"]:
            raw["spec"][key] = out


def _limit_bounds(pod, item):
    kind = item.get("type")
    if kind == "Container":
        for c in (*pod.containers, *pod.init_containers):
            _bounds(item, "Container", c.exact_requests, c.exact_limits)
    elif kind == "Pod":  # limitranger's podRequests/podLimits: containers and sidecars, the init peak, pod-level
        _bounds(item, "Pod", _pod_amounts(pod, "requests"), _pod_amounts(pod, "limits"))


def _pod_amounts(pod, part) -> dict:
    """Exact requests or limits of the pod: max(containers and sidecars, the init sequence's peak),
    then the pod-level cpu and memory (PodLevelResources) in their place."""
    of = (lambda c: c.exact_requests) if part == "requests" else (lambda c: c.exact_limits)
    total = aggregate_requests(pod.containers, pod.init_containers, requests=of)
    level = exact_resource_list((pod.spec.get("resources") or {}).get(part))
    total.update((r, v) for r, v in level.items() if r in POD_LEVEL_RESOURCES)
    return total


def _bounds(item, kind, requests, limits):
    for name, low in exact_resource_list(item.get("min")).items():
        if name not in requests:
            raise AdmissionRejected("LimitRanger", f"minimum {name} usage per {kind} is {item['min'][name]}.  "
                                                   "No request is specified")
        if requests[name] < low or (name in limits and limits[name] < low):
            raise AdmissionRejected("LimitRanger", f"minimum {name} usage per {kind} is {item['min'][name]}")
    for name, high in exact_resource_list(item.get("max")).items():
        if name not in limits:
            raise AdmissionRejected("LimitRanger", f"maximum {name} usage per {kind} is {item['max'][name]}.  "
                                                   "No limit is specified")
        if limits[name] > high or (name in requests and requests[name] > high):
            raise AdmissionRejected("LimitRanger", f"maximum {name} usage per {kind} is {item['max'][name]}")
    for name, ratio in (item.get("maxLimitRequestRatio") or {}).items():
        request, limit = requests.get(name, 0), limits.get(name, 0)
        if not request or not limit:
            raise AdmissionRejected("LimitRanger", f"{name} max limit to request ratio per {kind} is {ratio}, but no "
                                                   "request or limit is specified")
        if limit * 1000 > request * exact_resource_list({"x": ratio})["x"]:
            raise AdmissionRejected("LimitRanger", f"{name} max limit to request ratio per {kind} is {ratio}")


def _validate(pod):
    """The pod strategy's validation (after the mutating plugins) of what they may have changed:
    a container's request above its limit."""
    for i, c in enumerate(pod.containers):
        for name, request in c.exact_requests.items():
            if name in c.exact_limits and request > c.exact_limits[name]:
                raise AdmissionRejected("validation", f"spec.containers[{i}].resources.requests: Invalid value: "
                                                      f"must be less than or equal to {name} limit")
    for i, c in enumerate(pod.init_containers):
        for name, request in c.exact_requests.items():
            if name in c.exact_limits and request > c.exact_limits[name]:
                raise AdmissionRejected("validation", f"spec.initContainers[{i}].resources.requests: Invalid "
                                                      f"value: must be less than or equal to {name} limit")
    level = pod.spec.get("resources")
    if level:
        _validate_pod_level(pod, exact_resource_list(level.get("requests")), exact_resource_list(level.get("limits")))


def _validate_pod_level(pod, requests, limits):
    """``validatePodResources``: pod-level requests within pod-level limits and at least the
    containers' aggregate requests; no container's limit above the pod-level one."""
    for name, request in requests.items():
        if name in limits and request > limits[name]:
            raise AdmissionRejected("validation", f"spec.resources.requests: Invalid value: must be less than or "
                                                  f"equal to {name} limit")
    aggregate = aggregate_requests(pod.containers, pod.init_containers, requests=lambda c: c.exact_requests)
    for name, total in aggregate.items():
        if name in requests and total > requests[name]:
            raise AdmissionRejected("validation", f"spec.resources.requests[{name}]: Invalid value: must be greater "
                                                  "than or equal to aggregate container requests")
    for i, c in enumerate(pod.containers):
        for name, limit in c.exact_limits.items():
            if name in limits and limit > limits[name]:
                raise AdmissionRejected("validation", f"spec.resources.containers[{i}][{name}].limits: Invalid value: "
                                                      "must be less than or equal to pod limits")


def _priority(raw, snapshot):
    spec = raw["spec"]
    name = spec.get("priorityClassName")
    cls = snapshot.priority_class(name) if name else snapshot.global_default_class
    if name and cls is None and name not in SYSTEM_CLASSES:
        raise AdmissionRejected("Priority", f"no PriorityClass with name {name} was found")
    value = cls.value if cls is not None else SYSTEM_CLASSES.get(name, 0)
    policy = cls.preemption_policy if cls is not None else "PreemptLowerPriority"
    if spec.get("priority") is not None and spec["priority"] != value:
        raise AdmissionRejected("Priority", f"the integer value of priority ({spec['priority']}) must not be provided "
                                            f"in pod spec; priority admission controller computed {value} from the "
                                            "given PriorityClass name")
    if spec.get("preemptionPolicy") and spec["preemptionPolicy"] != policy:
        raise AdmissionRejected("Priority", f"the string value of PreemptionPolicy ({spec['preemptionPolicy']}) must "
                                            f"not be provided in pod spec; priority admission controller computed "
                                            f"{policy} from the given PriorityClass name")
    # the value and policy themselves are left to priority.resolve, which reads them as admission sets them


def _runtime_class(raw, snapshot):
    spec = raw["spec"]
    name = spec.get("runtimeClassName")
    if not name:
        if spec.get("overhead"):
            raise AdmissionRejected("RuntimeClass", "pod rejected: Pod Overhead set without corresponding RuntimeClass "
                                                    "defined Overhead")
        return
    cls = snapshot.runtime_class(name)
    if cls is None:
        raise AdmissionRejected("RuntimeClass", f'pod rejected: RuntimeClass "{name}" not found')
    if cls.overhead:
        if spec.get("overhead") and exact_resource_list(spec["overhead"]) != exact_resource_list(cls.overhead):
            raise AdmissionRejected("RuntimeClass", "pod rejected: Pod's Overhead doesn't match RuntimeClass's "
                                                    "defined Overhead")
        spec["overhead"] = dict(cls.overhead)
    elif spec.get("overhead"):
        raise AdmissionRejected("RuntimeClass", "pod rejected: Pod Overhead set without corresponding RuntimeClass "
                                                "defined Overhead")
    selector = (cls.scheduling.get("nodeSelector") or {})
    merged = dict(spec.get("nodeSelector") or {})
    for key, value in selector.items():
        if key in merged and merged[key] != value:
            raise AdmissionRejected("RuntimeClass", f"conflict: runtimeClass.scheduling.nodeSelector[{key}] = {value}; "
                                                    f"pod.spec.nodeSelector[{key}] = {merged[key]}")
        merged[key] = value
    if merged:
        spec["nodeSelector"] = merged
    extra = [t for t in cls.scheduling.get("tolerations") or () if t not in (spec.get("tolerations") or [])]
    if extra:
        spec["tolerations"] = list(spec.get("tolerations") or []) + extra


def quota_usage(pod) -> dict:
    """What the pod charges a quota: its count and its requests and limits (overhead included)."""
    requests, limits = pod_requests(pod), _pod_amounts(pod, "limits")
    for name, value in exact_resource_list(pod.spec.get("overhead")).items():  # PodLimits: to the limits set
        if limits.get(name):
            limits[name] += value
    limits = rounded(limits)
    usage = {"pods": 1, "count/pods": 1}
    for name, value in requests.items():
        usage[f"requests.{name}"] = value
        if name in COMPUTE:
            usage[name] = value
    for name, value in limits.items():
        usage[f"limits.{name}"] = value
    return usage


def _quota(pod, snapshot):
    usage = None
    default = snapshot.global_default_class
    class_name = pod.spec.get("priorityClassName") or (default.name if default is not None else "")
    for quota, hard, used in charging_quotas(pod, snapshot, class_name):
        usage = usage if usage is not None else quota_usage(pod)
        unknown = sorted(n for n in hard if n in usage and n not in used)
        if unknown:
            raise AdmissionRejected("ResourceQuota", f"status unknown for quota: {quota.name}, resources: "
                                                     + ",".join(unknown))
        missing = [] if pod_level_set(pod) else _unset(pod, hard)  # with pod-level resources none is needed
        if missing:
            raise AdmissionRejected("ResourceQuota", f"failed quota: {quota.name}: must specify "
                                                     + ",".join(sorted(missing)))
        over = exceeded(hard, used, usage)
        if over:
            raise AdmissionRejected("ResourceQuota", f"exceeded quota: {quota.name}, requested: "
                                                     + ",".join(f"{n}={usage[n]}" for n in over))


def charging_quotas(pod, snapshot, class_name):
    """(quota, hard, used) of each quota of the pod's namespace that charges it: its scopes match
    (``quota_matches``) and its status.hard is computed (admission judges status.hard only: a quota
    not computed yet limits nothing)."""
    for quota in snapshot.resource_quotas_in(pod.namespace):
        if quota_matches(quota, pod, class_name) and quota.status.get("hard"):
            yield quota, _amounts(quota.status.get("hard")), _amounts(quota.status.get("used"))


def exceeded(hard, used, usage, count=1) -> list:
    """The resources of a quota (``hard``, ``used``) that ``count`` more pods charging ``usage`` exceed."""
    return [n for n in sorted(hard) if n in usage and used.get(n, 0) + count * usage[n] > hard[n]]


def quota_matches(quota, pod, class_name) -> bool:
    """The pod evaluator's ``Matches`` on its scopes: every scope of the quota (``spec.scopes``, each
    as Exists, and ``spec.scopeSelector``'s expressions) matches the pod. ``class_name``: the
    priorityClassName admission stores (the global default's name when the pod names none)."""
    selectors = [{"scopeName": s, "operator": "Exists"} for s in quota.spec.get("scopes") or ()]
    selectors += list((quota.spec.get("scopeSelector") or {}).get("matchExpressions") or ())
    return all(_scope_matches(s, pod, class_name) for s in selectors)


def _scope_matches(selector, pod, class_name) -> bool:
    """``podMatchesScopeFunc``; a PriorityClass expression is a label selector on {PriorityClass: name}."""
    scope, operator = selector.get("scopeName"), selector.get("operator")
    if scope in ("Terminating", "NotTerminating"):
        deadline = pod.spec.get("activeDeadlineSeconds")
        return (deadline is not None and deadline >= 0) == (scope == "Terminating")
    if scope in ("BestEffort", "NotBestEffort"):
        return (compute_qos(pod) == "BestEffort") == (scope == "BestEffort")
    if scope == "PriorityClass":
        if operator == "Exists":
            return bool(class_name)
        if operator == "DoesNotExist":
            return not class_name
        if operator == "In":
            return bool(class_name) and class_name in (selector.get("values") or ())
        if operator == "NotIn":
            return not class_name or class_name not in (selector.get("values") or ())
        return False
    if scope == "CrossNamespacePodAffinity":
        affinity = pod.spec.get("affinity") or {}
        terms = []
        for kind in ("podAffinity", "podAntiAffinity"):
            rules = affinity.get(kind) or {}
            terms += rules.get("requiredDuringSchedulingIgnoredDuringExecution") or []
            preferred = rules.get("preferredDuringSchedulingIgnoredDuringExecution") or []
            terms += [w.get("podAffinityTerm") or {} for w in preferred]
        return any(t.get("namespaces") or t.get("namespaceSelector") is not None for t in terms)
    return False


def _unset(pod, hard) -> list:
    """The pod evaluator's ``Constraints``: hard cpu/memory requests or limits some container does not set."""
    missing = [n for n in hard if n.startswith(("requests.", "limits.")) and n.split(".", 1)[1] in COMPUTE[:2]
               and not _all_set(pod, *n.split(".", 1))]
    return missing + [n for n in hard if n in COMPUTE[:2] and not _all_set(pod, "requests", n)]


def _amounts(raw) -> dict:
    """A quota's resource list in the scheduler's units (``requests.cpu`` counts millicores, as ``cpu``)."""
    return {name: rounded(exact_resource_list({name.split(".", 1)[-1]: value}))[name.split(".", 1)[-1]]
            for name, value in (raw or {}).items()}


def _all_set(pod, part, name) -> bool:
    """Every container (init containers too) sets ``part`` (requests or limits) for ``name``."""
    for c in (*pod.containers, *pod.init_containers):
        if name not in (c.exact_requests if part == "requests" else c.exact_limits):
            return False
    return True
