"""Inter-pod (anti-)affinity: required terms resolved against their pod (upstream
``fwk.AffinityTerm``), the scheduled pods' anti-affinity bucketed per snapshot, and InterPodAffinity's
Filter over the PreFilter counts."""


from kubectl_safety.analysis.scheduling.cache import planning_cache
from kubectl_safety.analysis.scheduling.failure import Failure
from kubectl_safety.model.selectors import LabelSelector
from kubectl_safety.record import record


NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"


def namespace_labels(name) -> dict:
    """The labels a namespaceSelector sees: the snapshot keeps namespace names, not their labels,
    but the API server gives every namespace the immutable ``kubernetes.io/metadata.name`` label
    (selectors on other namespace labels: docs/deviations.md)."""
    return {NAMESPACE_NAME_LABEL: name}


@record(slots=False)
class Term:
    """A pod (anti-)affinity term, resolved against its owner pod (upstream ``fwk.AffinityTerm``)."""

    key: str
    namespaces: frozenset  # ``namespaces``, or the owner's namespace when neither field is set
    namespace_selector: object  # LabelSelector over namespace labels; None matches nothing
    selector: object  # LabelSelector; None matches nothing
    incoming: bool = True  # a term of the pod being scheduled (see ``matches``)

    @classmethod
    def parse(cls, raw, owner, incoming=True):
        selector = LabelSelector.parse(raw.get("labelSelector"))
        if selector is not None:  # the API server's merge on create (a no-op for a stored pod)
            reqs = list(selector.requirements)
            for k in raw.get("matchLabelKeys") or []:
                if k in owner.labels:
                    reqs.append((k, "In", frozenset([owner.labels[k]])))
            for k in raw.get("mismatchLabelKeys") or []:
                if k in owner.labels:
                    reqs.append((k, "NotIn", frozenset([owner.labels[k]])))
            selector = LabelSelector(reqs)
        listed = frozenset(raw.get("namespaces") or [])
        ns_selector = raw.get("namespaceSelector")
        if not listed and ns_selector is None:
            listed = frozenset([owner.namespace])
        return cls(raw.get("topologyKey") or "", listed, LabelSelector.parse(ns_selector), selector, incoming)

    def matches(self, pod) -> bool:
        """``AffinityTerm.Matches``: the pod's namespace is listed or selected, and its labels match.

        An existing pod's term judges the incoming pod's namespace labels. The incoming pod's own
        terms are first given the namespaces their namespaceSelector selects
        (``mergeAffinityTermNamespacesIfNotEmpty``), but upstream resets the selector to Nothing
        on a copy of the term, so the selector stays and is then matched against no labels at
        all: a selector that empty labels satisfy (``{}``, ``NotIn``, ``DoesNotExist``) selects
        every namespace."""
        if self.selector is None:
            return False
        sel = self.namespace_selector
        if not (pod.namespace in self.namespaces or (sel is not None and (
                sel.matches(namespace_labels(pod.namespace)) or (self.incoming and sel.matches({}))))):
            return False
        return self.selector.matches(pod.labels)


_TERMS = "_required_terms"  # {(kind, incoming): terms}, on the Pod object (``required_terms``)


def required_terms(pod, kind, incoming=True) -> tuple:
    """``kind`` is "podAffinity" or "podAntiAffinity"; the required terms, parsed. ``incoming``:
    terms of the pod being scheduled; False for an existing pod's anti-affinity judging it."""
    raw = (pod.affinity.get(kind) or {}).get("requiredDuringSchedulingIgnoredDuringExecution")
    if not raw:
        return ()
    parsed = pod.__dict__.get(_TERMS)  # kept on the Pod, like its requests: a check asks for them often
    if parsed is None:
        parsed = pod.__dict__[_TERMS] = {}
    terms = parsed.get((kind, incoming))
    if terms is None:
        terms = parsed[(kind, incoming)] = tuple(Term.parse(t, pod, incoming) for t in raw)
    return terms


def anti_affinity_terms(pod) -> tuple:
    """The pod's required anti-affinity terms as an existing pod's (judging incoming pods), parsed
    once per Pod object (``required_terms``)."""
    return required_terms(pod, "podAntiAffinity", incoming=False)


def existing_anti_terms(snapshot, namespace) -> list:
    """The required anti-affinity terms of scheduled pods that may select a pod of ``namespace``
    (those listing it, and those with a namespaceSelector), bucketed once per snapshot."""
    entry = planning_cache(snapshot)
    if "anti_by_namespace" not in entry:
        buckets = entry["anti_by_namespace"] = {}
        for _, _, terms in existing_anti_affinity(snapshot):
            for t in terms:
                for ns in (t.namespaces if t.namespace_selector is None else (None,)):
                    buckets.setdefault(ns, []).append(t)
    buckets = entry["anti_by_namespace"]
    return buckets.get(namespace, []) + buckets.get(None, [])


def existing_anti_affinity(snapshot) -> list:
    """(pod, node, required anti-affinity terms) for every scheduled pod that has some."""
    entry = planning_cache(snapshot)
    if entry["anti"] is None:
        found = []
        for p in snapshot.pods:
            if p.node_name and not p.is_terminal and (p.affinity.get("podAntiAffinity") or {}).get(
                    "requiredDuringSchedulingIgnoredDuringExecution"):
                node = snapshot.node(p.node_name)
                if node is not None:
                    found.append((p, node, anti_affinity_terms(p)))
        entry["anti"] = found
    return entry["anti"]


def _lookup(base, delta, index, pair) -> int:
    return base.get(pair, 0) + (delta.pairs[index].get(pair, 0) if delta else 0)


def inter_pod_affinity_filter(pre, node, delta):
    if pre.affinity_skipped:
        return []
    if pre.affinity:
        if any(t.key not in node.labels for t in pre.affinity):
            return [Failure("InterPodAffinity", "pod-affinity",
                            "node(s) didn't match pod affinity rules (missing topology label)", False)]
        exists = all(_lookup(pre.affinity_counts, delta, 0, (t.key, node.labels[t.key])) > 0
                     for t in pre.affinity)
        if not exists:
            total = sum(pre.affinity_counts.values()) + (sum(delta.pairs[0].values()) if delta else 0)
            if not (total == 0 and all(t.matches(pre.pod) for t in pre.affinity)):
                return [Failure("InterPodAffinity", "pod-affinity", "node(s) didn't match pod affinity rules", False)]
    for t in pre.anti:
        if t.key in node.labels and _lookup(pre.anti_counts, delta, 1, (t.key, node.labels[t.key])) > 0:
            return [Failure("InterPodAffinity", "pod-anti-affinity",
                            f"node(s) didn't match pod anti-affinity rules ({t.key}={node.labels[t.key]})", True)]
    if pre.existing_anti or (delta and delta.pairs[2]):
        for k, v in node.labels.items():
            if _lookup(pre.existing_anti, delta, 2, (k, v)) > 0:
                return [Failure("InterPodAffinity", "existing-anti-affinity",
                                f"node(s) didn't satisfy existing pods anti-affinity rules ({k}={v})", True)]
    return []
