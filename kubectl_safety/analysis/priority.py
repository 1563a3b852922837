"""Effective priority and preemption policy, resolved as the Priority admission plugin does."""

from kubectl_safety.model.constants import SYSTEM_CLASSES, SYSTEM_CRITICAL

USER_MAX = 1_000_000_000


class UnknownPriorityClass(Exception):
    """The pod names a class the cluster does not have: admission would reject it."""


def global_default(snapshot):
    """The class admission uses for a pod without one (``ClusterSnapshot.global_default_class``)."""
    return snapshot.global_default_class


def resolve(pod, snapshot) -> dict:
    """{value, className, source, preemptionPolicy, classMissing}.

    An admitted pod carries ``spec.priority``; that value wins (source ``spec.priority``), and
    the class is reported for context. A template or manifest is resolved from its class, the
    global default class, or 0, exactly as admission would. Raises UnknownPriorityClass
    only for unadmitted pods naming a missing class.
    """
    name = pod.priority_class_name
    cls = snapshot.priority_class(name) if name else None
    builtin = SYSTEM_CLASSES.get(name)
    missing = bool(name) and cls is None and builtin is None
    if pod.priority is not None:
        source, value = "spec.priority", pod.priority
        if not name:
            source = "spec.priority (no class)"
    elif name:
        if missing:
            raise UnknownPriorityClass(f'no PriorityClass with name {name} was found')
        value, source = (cls.value if cls else builtin), "priorityClassName"
    elif global_default(snapshot) is not None:
        cls = global_default(snapshot)
        name, value, source = cls.name, cls.value, "globalDefault"
    else:
        value, source = 0, "default (no class, no global default)"
    policy = pod.preemption_policy or (cls.preemption_policy if cls else "PreemptLowerPriority")
    return {"value": value, "className": name or None, "source": source,
            "preemptionPolicy": policy, "classMissing": missing,
            "systemCritical": value >= SYSTEM_CRITICAL}


def effective_value(pod, snapshot) -> int:
    """The priority a pod has or would get at admission; unknown classes count as 0."""
    if pod.priority is not None:
        return pod.priority
    try:
        return resolve(pod, snapshot)["value"]
    except UnknownPriorityClass:
        return 0
