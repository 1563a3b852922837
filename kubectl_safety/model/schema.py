"""Shape checks for the fields the analyses read, so a malformed dump is an InputError naming
the field rather than a crash deep inside an analysis. Types only; values (quantities,
selectors) are checked where they are parsed."""

from kubectl_safety.errors import InputError

MAP, LIST, STR, INT, BOOL, INT_OR_STR = dict, list, str, "int", bool, "int-or-percent"
STR_MAP = "map of strings"
NNINT, INT32, POSINT, TIME = "non-negative int", "int32", "positive int", "timestamp"
INT64_RANGE, INT32_RANGE = (-(2 ** 63), 2 ** 63 - 1), (-(2 ** 31), 2 ** 31 - 1)
TAINT_EFFECT = frozenset(("NoSchedule", "PreferNoSchedule", "NoExecute"))
_RFC3339 = __import__("re").compile(r"\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])[Tt ]([01]\d|2[0-3]):[0-5]\d:[0-5]\d"
                                    r"(\.\d{1,9})?([Zz]|[+-]([01]\d|2[0-3]):[0-5]\d)")

SELECTOR = {"matchLabels": STR_MAP, "matchExpressions": [{"key": STR, "operator": STR, "values": [STR]}]}
REQUIREMENT = {"key": STR, "operator": STR, "values": [STR]}
NODE_TERM = {"matchExpressions": [REQUIREMENT], "matchFields": [REQUIREMENT]}
POD_TERM = {"labelSelector": SELECTOR, "namespaceSelector": SELECTOR, "namespaces": [STR], "topologyKey": STR,
            "matchLabelKeys": [STR], "mismatchLabelKeys": [STR]}
POD_AFFINITY = {"requiredDuringSchedulingIgnoredDuringExecution": [POD_TERM],
                "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": INT32, "podAffinityTerm": POD_TERM}]}
AFFINITY = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [NODE_TERM]},
                             "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": INT32,
                                                                                  "preference": NODE_TERM}]},
            "podAffinity": POD_AFFINITY, "podAntiAffinity": POD_AFFINITY}
PROBE = {"periodSeconds": INT32, "failureThreshold": INT32, "initialDelaySeconds": INT32, "timeoutSeconds": INT32,
         "successThreshold": INT32, "terminationGracePeriodSeconds": INT}
CONTAINER = {"name": STR, "resources": {"requests": MAP, "limits": MAP},
             "lifecycle": {"preStop": {"exec": {"command": [STR]}, "sleep": {"seconds": INT}, "httpGet": MAP}},
             "ports": [{"containerPort": INT32, "hostPort": INT32, "protocol": STR, "hostIP": STR, "name": STR}],
             "livenessProbe": PROBE, "startupProbe": PROBE, "readinessProbe": PROBE, "restartPolicy": STR}
VOLUME = {"name": STR, "emptyDir": MAP, "hostPath": MAP, "persistentVolumeClaim": {"claimName": STR},
          "ephemeral": MAP}
CONDITION = {"type": STR, "status": STR, "reason": STR, "message": STR, "lastTransitionTime": TIME,
             "lastHeartbeatTime": TIME, "lastProbeTime": TIME}
META = {"labels": STR_MAP, "annotations": STR_MAP, "ownerReferences": [{"kind": STR, "name": STR, "uid": STR,
                                                                         "controller": BOOL, "apiVersion": STR}],
        "finalizers": [STR], "deletionGracePeriodSeconds": NNINT, "namespace": STR, "uid": STR,
        "creationTimestamp": TIME, "deletionTimestamp": TIME, "generation": NNINT}
SPREAD = {"maxSkew": POSINT, "topologyKey": STR, "whenUnsatisfiable": frozenset(("DoNotSchedule", "ScheduleAnyway")),
          "labelSelector": SELECTOR, "minDomains": POSINT, "matchLabelKeys": [STR],
          "nodeAffinityPolicy": frozenset(("Honor", "Ignore")), "nodeTaintsPolicy": frozenset(("Honor", "Ignore"))}
DEVICE_SELECTOR = {"cel": {"expression": STR}}
DEVICE_TOLERATION = {"key": STR, "operator": STR, "value": STR, "effect": STR}
DEVICE_REQUEST = {"name": STR, "deviceClassName": STR, "selectors": [DEVICE_SELECTOR], "allocationMode": STR,
                  "count": INT, "adminAccess": BOOL, "tolerations": [DEVICE_TOLERATION], "capacity": MAP}
CLAIM_SPEC = {"devices": {"requests": [{"name": STR, "exactly": DEVICE_REQUEST, "firstAvailable": [DEVICE_REQUEST]}],
                          "constraints": [{"requests": [STR], "matchAttribute": STR}]}}
SCHEMAS = {
    "Pod": {"metadata": META,
            "spec": {"containers": [CONTAINER], "initContainers": [CONTAINER], "volumes": [VOLUME],
                     "tolerations": [{"key": STR, "operator": frozenset(("Exists", "Equal", "")), "value": STR,
                                      "effect": TAINT_EFFECT | {""}, "tolerationSeconds": INT}],
                     "nodeSelector": STR_MAP, "affinity": AFFINITY,
                     "topologySpreadConstraints": [SPREAD], "priority": INT32, "priorityClassName": STR,
                     "preemptionPolicy": frozenset(("PreemptLowerPriority", "Never")),
                     "terminationGracePeriodSeconds": NNINT, "nodeName": STR,
                     "overhead": MAP, "resources": {"requests": MAP, "limits": MAP},
                     "resourceClaims": [{"name": STR, "resourceClaimName": STR, "resourceClaimTemplateName": STR}]},
            "status": {"phase": STR, "conditions": [CONDITION], "qosClass": STR, "nominatedNodeName": STR,
                       "startTime": TIME, "containerStatuses": [MAP], "initContainerStatuses": [MAP],
                       "resourceClaimStatuses": [{"name": STR, "resourceClaimName": STR}]}},
    "Node": {"metadata": META,
             "spec": {"taints": [{"key": STR, "value": STR, "effect": TAINT_EFFECT, "timeAdded": TIME}],
                      "unschedulable": BOOL},
             "status": {"allocatable": MAP, "capacity": MAP, "conditions": [CONDITION]}},
    "PodDisruptionBudget": {"metadata": META,
                            "spec": {"selector": SELECTOR, "minAvailable": INT_OR_STR, "maxUnavailable": INT_OR_STR,
                                     "unhealthyPodEvictionPolicy": frozenset(("IfHealthyBudget", "AlwaysAllow"))},
                            "status": {"disruptionsAllowed": NNINT, "currentHealthy": NNINT, "desiredHealthy": NNINT,
                                       "expectedPods": NNINT, "observedGeneration": NNINT, "disruptedPods": MAP}},
    "PriorityClass": {"metadata": META, "value": INT32, "globalDefault": BOOL,
                      "preemptionPolicy": frozenset(("PreemptLowerPriority", "Never"))},
    "PersistentVolumeClaim": {"metadata": META,
                              "spec": {"accessModes": [STR], "volumeName": STR, "storageClassName": STR,
                                       "resources": {"requests": MAP}},
                              "status": {"phase": STR}},
    "PersistentVolume": {"metadata": META,
                         "spec": {"accessModes": [STR], "storageClassName": STR, "capacity": MAP,
                                  "claimRef": MAP, "nodeAffinity": {"required": {"nodeSelectorTerms": [NODE_TERM]}}},
                         "status": {"phase": STR}},
    "StorageClass": {"metadata": META, "provisioner": STR, "volumeBindingMode": STR, "allowedTopologies": [MAP]},
    "CSINode": {"metadata": META, "spec": {"drivers": [{"name": STR, "allocatable": {"count": NNINT}}]}},
    "Lease": {"metadata": META, "spec": {"renewTime": TIME}},
    "VolumeAttachment": {"metadata": META, "spec": {"attacher": STR, "nodeName": STR,
                                                    "source": {"persistentVolumeName": STR}}},
    "DeviceClass": {"metadata": META, "spec": {"selectors": [DEVICE_SELECTOR]}},
    "ResourceClaim": {"metadata": META, "spec": CLAIM_SPEC,
                      "status": {"allocation": {"devices": {"results": [{
                          "request": STR, "driver": STR, "pool": STR, "device": STR, "adminAccess": BOOL}]},
                          "nodeSelector": {"nodeSelectorTerms": [NODE_TERM]}},
                          "reservedFor": [{"resource": STR, "name": STR, "uid": STR}]}},
    "ResourceClaimTemplate": {"metadata": META, "spec": {"spec": CLAIM_SPEC}},
    "ResourceSlice": {"metadata": META,
                      "spec": {"driver": STR, "pool": {"name": STR, "generation": INT, "resourceSliceCount": INT},
                               "nodeName": STR, "allNodes": BOOL, "perDeviceNodeSelection": BOOL,
                               "nodeSelector": {"nodeSelectorTerms": [NODE_TERM]}, "sharedCounters": LIST,
                               "devices": [{"name": STR, "attributes": MAP, "capacity": MAP, "nodeName": STR,
                                            "allNodes": BOOL, "nodeSelector": {"nodeSelectorTerms": [NODE_TERM]},
                                            "taints": [{"key": STR, "value": STR, "effect": STR}],
                                            "consumesCounters": LIST, "allowMultipleAllocations": BOOL,
                                            "bindingConditions": [STR]}]}},
}
EVENT_REF = {"kind": STR, "namespace": STR, "name": STR, "uid": STR}
EVENT_SOURCE = {"component": STR, "host": STR}
# core/v1 and events.k8s.io/v1 field names side by side (one kind, two versions)
SCHEMAS["Event"] = {"metadata": META, "regarding": EVENT_REF, "involvedObject": EVENT_REF, "related": EVENT_REF,
                    "reason": STR, "action": STR, "note": STR, "message": STR, "type": STR,
                    "reportingController": STR, "reportingComponent": STR, "reportingInstance": STR,
                    "deprecatedSource": EVENT_SOURCE, "source": EVENT_SOURCE, "eventTime": TIME,
                    "series": {"count": INT32, "lastObservedTime": TIME},
                    "deprecatedFirstTimestamp": TIME, "firstTimestamp": TIME,
                    "deprecatedLastTimestamp": TIME, "lastTimestamp": TIME, "deprecatedCount": INT32, "count": INT32}
WORKLOAD = {"metadata": META, "spec": {"replicas": NNINT, "selector": SELECTOR,
                                       "template": {"metadata": META, "spec": MAP}}}
HIGHEST_USER_PRIORITY = 1_000_000_000


def _rules(obj, kind) -> str:
    """What the API server's validation rejects across fields, or ''."""
    if kind == "PodDisruptionBudget":
        spec = obj.get("spec") or {}
        if spec.get("minAvailable") is not None and spec.get("maxUnavailable") is not None:
            return "'spec': minAvailable and maxUnavailable cannot both be set"
    if kind == "Pod":
        spec = obj.get("spec") or {}
        for field in ("containers", "initContainers"):
            for i, container in enumerate(spec.get(field) or ()):
                if not container.get("name"):
                    return f"'spec.{field}[{i}].name' is required"
    if kind == "PriorityClass":
        name = (obj.get("metadata") or {}).get("name") or ""
        value = obj.get("value")
        if isinstance(value, int) and value > HIGHEST_USER_PRIORITY and not name.startswith("system-"):
            return f"'value' must be at most {HIGHEST_USER_PRIORITY} (higher values are reserved for system- classes)"
    return ""


def _int(value, low, high) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high


def _type_ok(value, expected) -> bool:
    if isinstance(expected, frozenset):
        return isinstance(value, str) and value in expected
    if expected == INT:
        return _int(value, *INT64_RANGE)
    if expected == NNINT:
        return _int(value, 0, INT32_RANGE[1])
    if expected == POSINT:
        return _int(value, 1, INT32_RANGE[1])
    if expected == INT32:
        return _int(value, *INT32_RANGE)
    if expected == TIME:
        if hasattr(value, "tzinfo") and hasattr(value, "year"):  # a YAML timestamp
            return True
        return isinstance(value, str) and _RFC3339.fullmatch(value) is not None
    if expected == STR_MAP:
        return isinstance(value, dict) and all(isinstance(v, str) for v in value.values())
    if expected == INT_OR_STR:  # as a PDB's minAvailable/maxUnavailable: >= 0, at most 100%
        if isinstance(value, str):
            digits = value[:-1].lstrip("0")  # (never int() of thousands of digits)
            return value.endswith("%") and value[:-1].isdigit() and len(digits) <= 3 and int(digits or "0") <= 100
        return _int(value, 0, INT32_RANGE[1])
    return isinstance(value, expected)


def _describe(expected) -> str:
    if isinstance(expected, frozenset):
        return "one of " + ", ".join(sorted(v or '""' for v in expected))
    return {STR_MAP: "a map of strings", dict: "a map", list: "a list", str: "a string", bool: "true or false",
            INT: "a 64-bit integer", NNINT: "a non-negative 32-bit integer", POSINT: "a positive 32-bit integer",
            INT32: "a 32-bit integer", TIME: "an RFC 3339 time with a time zone",
            INT_OR_STR: "a non-negative integer or a percentage up to 100%"}.get(
        expected, "a list" if isinstance(expected, list) else "a map")


def check(value, schema, path: str):
    """Raise InputError(path: ...) where ``value`` does not have the shape of ``schema``."""
    if value is None:
        return
    if isinstance(schema, dict):
        if not isinstance(value, dict):
            raise InputError(f"'{path}' must be a map")
        for key, sub in schema.items():
            if key in value:
                check(value[key], sub, f"{path}.{key}" if path else key)
    elif isinstance(schema, list):
        if not isinstance(value, list):
            raise InputError(f"'{path}' must be a list")
        for i, item in enumerate(value):
            if item is None and isinstance(schema[0], dict):
                raise InputError(f"'{path}[{i}]' must be a map, got None")
            check(item, schema[0], f"{path}[{i}]")
    elif not _type_ok(value, schema):
        shown = repr(value) if not isinstance(value, (dict, list)) else type(value).__name__
        raise InputError(f"'{path}' must be {_describe(schema)}, got {shown[:80]}")


def _compile(schema):
    """``check`` as a yes/no predicate that builds no paths (about twice as fast on valid objects)."""
    if isinstance(schema, dict):
        plain = [(key, sub) for key, sub in schema.items() if isinstance(sub, type)]
        nested = [(key, _compile(sub)) for key, sub in schema.items() if not isinstance(sub, type)]

        def ok(value):
            if value is None:
                return True
            if not isinstance(value, dict):
                return False
            for key, expected in plain:
                v = value.get(key)
                if v is not None and not isinstance(v, expected):
                    return False
            for key, sub in nested:
                v = value.get(key)
                if v is not None and not sub(v):
                    return False
            return True
        return ok
    if isinstance(schema, list):
        item = _compile(schema[0])
        if isinstance(schema[0], dict):  # a null object in a list is no object
            return lambda value: value is None or (isinstance(value, list) and all(v is not None and item(v)
                                                                                   for v in value))
        return lambda value: value is None or (isinstance(value, list) and all(item(v) for v in value))
    if isinstance(schema, type):
        return lambda value: value is None or isinstance(value, schema)
    if schema == TIME:  # the most frequent checked value: the regex alone on the common path
        match = _RFC3339.fullmatch
        return lambda value: value is None or (type(value) is str and match(value) is not None) or _type_ok(value, TIME)
    return lambda value: value is None or _type_ok(value, schema)


_COMPILED = {}


def check_shape(obj: dict, kind: str, workload: bool, typed: bool = False):
    """``typed``: the object's types were checked while decoding (``model/typed.py``): rules only."""
    schema = SCHEMAS.get(kind) or (WORKLOAD if workload else None)
    if schema is None:
        return
    if typed:
        problem = _rules(obj, kind)
        if problem:
            raise InputError(problem)
        return
    key = kind if kind in SCHEMAS else "workload"
    if key not in _COMPILED:
        _COMPILED[key] = _compile(schema)
    if not _COMPILED[key](obj):  # the fast check found a problem: the full walk names it
        check(obj, schema, "")
    problem = _rules(obj, kind)
    if problem:
        raise InputError(problem)
