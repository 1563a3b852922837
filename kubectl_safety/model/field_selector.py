"""Pod field selectors as the API server reads them (``spec.nodeName=NODE,status.phase!=Running``)."""

POD_FIELDS = {  # the pod fields the API server selects on, and where they are in the object
    "metadata.name": ("metadata", "name"), "metadata.namespace": ("metadata", "namespace"),
    "spec.nodeName": ("spec", "nodeName"), "spec.restartPolicy": ("spec", "restartPolicy"),
    "spec.schedulerName": ("spec", "schedulerName"), "spec.serviceAccountName": ("spec", "serviceAccountName"),
    "spec.hostNetwork": ("spec", "hostNetwork"), "status.phase": ("status", "phase"),
    "status.podIP": ("status", "podIP"), "status.nominatedNodeName": ("status", "nominatedNodeName"),
}


class FieldSelectorError(ValueError):
    """A field selector the API server would refuse."""


def parse(text) -> list:
    """[(field, wanted, equal)] of ``text``; every term must hold."""
    terms = []
    for term in (t.strip() for t in str(text).split(",")):
        if not term:
            continue
        for op, equal in (("!=", False), ("==", True), ("=", True)):
            field, found, value = term.partition(op)
            if found:
                break
        else:
            raise FieldSelectorError(f"invalid selector: {term!r}: expected FIELD=VALUE or FIELD!=VALUE")
        field = field.strip()
        if field not in POD_FIELDS:
            raise FieldSelectorError(f'field label not supported: "{field}" (pods: {", ".join(POD_FIELDS)})')
        terms.append((field, value.strip(), equal))
    if not terms:
        raise FieldSelectorError("empty field selector")
    return terms


def matches(terms, raw) -> bool:
    """Whether the pod object ``raw`` has every field as ``terms`` want it."""
    for field, wanted, equal in terms:
        part, key = POD_FIELDS[field]
        value = (raw.get(part) or {}).get(key)
        shown = "" if value is None else str(value).lower() if isinstance(value, bool) else str(value)
        if (shown == wanted) != equal:
            return False
    return True
