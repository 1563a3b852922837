"""Shape checks for the fields the analyses read, so a malformed dump is an InputError naming
the field rather than a crash deep inside an analysis. Types only; values (quantities,
selectors) are checked where they are parsed."""

from kubectl_safety.errors import InputError

MAP, LIST, STR, INT, BOOL, INT_OR_STR = dict, list, str, "int", bool, "int-or-percent"
STR_MAP = "map of strings"

CONTAINER = {"name": STR, "resources": {"requests": MAP, "limits": MAP}, "lifecycle": {"preStop": MAP},
             "ports": [MAP], "livenessProbe": MAP, "startupProbe": MAP, "readinessProbe": MAP,
             "restartPolicy": STR}
CONDITION = {"type": STR, "status": STR, "reason": STR, "message": STR}
META = {"labels": STR_MAP, "annotations": STR_MAP, "ownerReferences": [MAP], "finalizers": LIST,
        "deletionGracePeriodSeconds": INT, "namespace": STR, "uid": STR}
SCHEMAS = {
    "Pod": {"metadata": META,
            "spec": {"containers": [CONTAINER], "initContainers": [CONTAINER], "volumes": [MAP],
                     "tolerations": [{"key": STR, "operator": STR, "value": STR, "effect": STR}], "nodeSelector": STR_MAP, "affinity": MAP,
                     "topologySpreadConstraints": [MAP], "priority": INT, "priorityClassName": STR,
                     "preemptionPolicy": STR, "terminationGracePeriodSeconds": INT, "nodeName": STR,
                     "overhead": MAP, "resources": {"requests": MAP, "limits": MAP}},
            "status": {"phase": STR, "conditions": [CONDITION], "qosClass": STR, "nominatedNodeName": STR}},
    "Node": {"metadata": META,
             "spec": {"taints": [{"key": STR, "value": STR, "effect": STR}], "unschedulable": BOOL},
             "status": {"allocatable": MAP, "capacity": MAP, "conditions": [CONDITION]}},
    "PodDisruptionBudget": {"metadata": META,
                            "spec": {"selector": MAP, "minAvailable": INT_OR_STR, "maxUnavailable": INT_OR_STR,
                                     "unhealthyPodEvictionPolicy": STR},
                            "status": {"disruptionsAllowed": INT, "currentHealthy": INT, "desiredHealthy": INT,
                                       "expectedPods": INT, "observedGeneration": INT, "disruptedPods": MAP}},
    "PriorityClass": {"metadata": META, "value": INT, "globalDefault": BOOL, "preemptionPolicy": STR},
    "PersistentVolumeClaim": {"metadata": META,
                              "spec": {"accessModes": [STR], "volumeName": STR, "storageClassName": STR,
                                       "resources": {"requests": MAP}},
                              "status": {"phase": STR}},
    "PersistentVolume": {"metadata": META,
                         "spec": {"accessModes": [STR], "storageClassName": STR, "capacity": MAP,
                                  "claimRef": MAP, "nodeAffinity": {"required": {"nodeSelectorTerms": [MAP]}}},
                         "status": {"phase": STR}},
    "StorageClass": {"metadata": META, "provisioner": STR, "volumeBindingMode": STR, "allowedTopologies": [MAP]},
}
WORKLOAD = {"metadata": META, "spec": {"replicas": INT, "selector": MAP, "template": MAP}}


def _type_ok(value, expected) -> bool:
    if expected == INT:
        return isinstance(value, int) and not isinstance(value, bool)
    if expected == STR_MAP:
        return isinstance(value, dict) and all(isinstance(v, str) for v in value.values())
    if expected == INT_OR_STR:
        if isinstance(value, str):
            return value.endswith("%") and value[:-1].isdigit()
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, expected)


def _describe(expected) -> str:
    return {STR_MAP: "a map of strings", dict: "a map", list: "a list", str: "a string", bool: "true or false", INT: "an integer",
            INT_OR_STR: "an integer or a percentage"}.get(expected, "a list" if isinstance(expected, list) else "a map")


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
            check(item, schema[0], f"{path}[{i}]")
    elif not _type_ok(value, schema):
        raise InputError(f"'{path}' must be {_describe(schema)}, got {value!r}"[:200])


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
        return lambda value: value is None or (isinstance(value, list) and all(item(v) for v in value))
    if isinstance(schema, type):
        return lambda value: value is None or isinstance(value, schema)
    return lambda value: value is None or _type_ok(value, schema)


_COMPILED = {}


def check_shape(obj: dict, kind: str, workload: bool):
    schema = SCHEMAS.get(kind) or (WORKLOAD if workload else None)
    if schema is None:
        return
    key = kind if kind in SCHEMAS else "workload"
    if key not in _COMPILED:
        _COMPILED[key] = _compile(schema)
    if not _COMPILED[key](obj):  # the fast check found a problem: the full walk names it
        check(obj, schema, "")
