"""The scheduler's Score stage for one pod over its feasible nodes, as the default profile runs it.

Each plugin scores every feasible node, normalizes its scores (as upstream: integer arithmetic,
the same rounding), is weighted and summed:

- TaintToleration (3): PreferNoSchedule taints the pod does not tolerate, fewer is better.
- NodeAffinity (2): the weights of the preferred node affinity terms the node matches.
- NodeResourcesFit (1): LeastAllocated on cpu and memory; a container without a request counts as
  100m cpu / 200Mi memory, on the node and for the pod.
- PodTopologySpread (2): ScheduleAnyway constraints only (DoNotSchedule filters, it does not score);
  a node without one of the constraints' keys scores 0.
- InterPodAffinity (2): the pod's preferred (anti-)affinity to the pods already placed, their
  preferred terms and required affinity (weight 1) toward the pod.
- NodeResourcesBalancedAllocation (1): how the node's cpu/memory balance changes, for a pod with
  requests.
- ImageLocality (1): the sizes of the pod's images the node already has, scaled by how many nodes
  have them.

``score_nodes(pod, nodes, snapshot)`` -> ``Scores``: per node the weighted plugin scores and the
total, and ``best`` (every node with the highest total: the scheduler picks one of them at random).
A planner that places pods one after another passes a ``ScoreCluster`` instead of the snapshot:
its own ``NodeState`` per node, what is read of it memoized per node until it says a node ``changed``.
``nodes_to_find`` is how many feasible nodes the scheduler looks for before it scores them.
System default spreading (the constraints it derives from a pod's Services and controllers) is
not applied: docs/deviations.md.
"""

import math

from kubectl_safety.analysis.scheduling.node_state import base_state, requests_of
from kubectl_safety.analysis.scheduling.pod_terms import Term
from kubectl_safety.analysis.topology import constraint_selector, node_eligible, normalized
from kubectl_safety.model.pods import Pod
from kubectl_safety.model.selectors import node_selector_term_matches, toleration_tolerates
from kubectl_safety.record import record

MAX = 100
WEIGHTS = {"TaintToleration": 3, "NodeAffinity": 2, "NodeResourcesFit": 1, "PodTopologySpread": 2,
           "InterPodAffinity": 2, "NodeResourcesBalancedAllocation": 1, "ImageLocality": 1}
DEFAULT_CPU = 100  # millicores charged for a container without a cpu request
DEFAULT_MEMORY = 200 * 1024 * 1024
HARD_AFFINITY_WEIGHT = 1  # InterPodAffinityArgs.hardPodAffinityWeight
HOSTNAME = "kubernetes.io/hostname"
MB = 1024 * 1024
MIN_FEASIBLE = 100  # minFeasibleNodesToFind
BASE_PERCENTAGE = 50  # basePercentageOfNodesToScore
_TERMS = "_score_affinity_terms"


@record(frozen=False, slots=False)
class Scores:
    table: dict  # node name -> {"total": int, "plugins": {plugin: weighted score}}
    best: list  # the names with the highest total, sorted

    @property
    def tied(self) -> bool:
        return len(self.best) > 1


def nodes_to_find(total) -> int:
    """``numFeasibleNodesToFind`` with the default percentageOfNodesToScore (adaptive): every node
    below 100, else 50% less 1% per 125 nodes (at least 5%), and never fewer than 100."""
    if total < MIN_FEASIBLE:
        return total
    percentage = max(BASE_PERCENTAGE - total // 125, 5)
    return max(total * percentage // 100, MIN_FEASIBLE)


def score_nodes(pod, nodes, cluster) -> Scores:
    """The Score stage for ``pod`` over ``nodes`` (feasible, in any order) on ``cluster`` (a snapshot
    or a ``ScoreCluster``)."""
    nodes = list(nodes)
    view = cluster if isinstance(cluster, ScoreCluster) else ScoreCluster(cluster)
    raw = {}
    for name, plugin in _PLUGINS:
        scores = plugin(pod, nodes, view)
        if scores is not None:  # None: the plugin's PreScore skipped it
            raw[name] = scores
    table = {}
    for node in nodes:
        plugins = {name: scores[node.name] * WEIGHTS[name] for name, scores in raw.items()}
        table[node.name] = {"total": sum(plugins.values()), "plugins": plugins}
    top = max((v["total"] for v in table.values()), default=None)
    return Scores(table, sorted(n for n, v in table.items() if v["total"] == top))


class ScoreCluster:
    """The cluster as the plugins read it, per node: ``placed``, the pods the scheduler's cache holds
    (never terminal ones), and their summed requests, read from the node's ``NodeState``;
    cluster-wide, the placed pods whose affinity scores others (``affinity_groups``) and all placed
    pods by namespace (``namespace_groups``); and the image census. ``states`` (name -> NodeState)
    are the nodes whose pods differ from the snapshot's (a planner's placements); what is read of a
    node is kept until ``changed(name)``."""

    def __init__(self, snapshot, states=None, images=None):
        self.snapshot, self.nodes = snapshot, snapshot.nodes
        self._states = {} if states is None else states
        self._images = images
        self._placed, self._requested = {}, {}
        self._affine = self._namespaces = None  # _Groups, built on first use
        self._raw = {}  # (plugin, what it reads of the pod) -> {node: raw score}
        self._nonzero = {}  # id(requests_of(pod)) -> (those requests, the pod's nonzero requests)

    def changed(self, name):
        self._placed.pop(name, None)
        self._requested.pop(name, None)
        for scores in self._raw.values():
            scores.pop(name, None)
        for groups in (self._affine, self._namespaces):
            if groups is not None:
                groups.changed(name)

    def placed(self, name) -> list:
        found = self._placed.get(name)
        if found is None:
            state = self._states.get(name)
            found = self._placed[name] = (list(state.pods.values()) if state is not None else
                                          [p for p in self.snapshot.pods_on(name) if not p.is_terminal])
        return found

    def _state(self, name):
        state = self._states.get(name)
        return state if state is not None else base_state(self.snapshot.node(name), self.snapshot)

    def requested(self, name, nonzero) -> tuple:
        """(cpu, memory) the node's pods request; ``nonzero``: with NonMissingContainerRequests."""
        if not nonzero:
            requested = self._state(name).requested
            return requested.get("cpu", 0), requested.get("memory", 0)
        found = self._requested.get(name)
        if found is None:
            cpu = memory = 0
            for p in self.placed(name):
                n = self.nonzero_requests(p)
                cpu += n.get("cpu", 0)
                memory += n.get("memory", 0)
            found = self._requested[name] = cpu, memory
        return found

    def nonzero_requests(self, pod) -> dict:
        """``_nonzero_requests(pod)``, once per requests dict: pods alike share theirs
        (``requests_of``), and so the same containers' requests."""
        requests = requests_of(pod)
        found = self._nonzero.get(id(requests))
        if found is None:  # the requests are kept beside: their id stays theirs
            found = self._nonzero[id(requests)] = (requests, _nonzero_requests(pod))
        return found[1]

    def raw_scores(self, plugin, key) -> dict:
        """{node: raw score} of ``plugin`` for pods of which it reads ``key`` (a node's score goes
        when the node changes): the caller fills it."""
        found = self._raw.get((plugin, key))
        if found is None:
            found = self._raw[(plugin, key)] = {}
        return found

    def affinity_groups(self) -> dict:
        """The placed pods with pod (anti-)affinity, by what ``scoring_terms`` reads of them (alike
        pods have alike terms): {content: {node: [pods]}}."""
        if self._affine is None:
            self._affine = _Groups(self.nodes)
        return self._affine.current(self._affinity_items)

    def namespace_groups(self) -> dict:
        """Every placed pod by namespace: {namespace: {node: [pods]}}."""
        if self._namespaces is None:
            self._namespaces = _Groups(self.nodes)
        return self._namespaces.current(lambda name: [(p.namespace, p) for p in self.placed(name)])

    def _affinity_items(self, name) -> list:
        out = []
        for p in self.placed(name):
            affinity = p.affinity
            if affinity and (affinity.get("podAffinity") or affinity.get("podAntiAffinity")):
                terms = repr((affinity.get("podAffinity"), affinity.get("podAntiAffinity")))
                # match(Mismatch)LabelKeys read the pod's labels; repr is faithful for parsed JSON
                labels = frozenset(p.labels.items()) if "LabelKeys" in terms else None
                out.append(((p.namespace, terms, labels), p))
        return out

    @property
    def images(self):
        if self._images is None:
            self._images = image_census(self.snapshot)
        return self._images


class _Groups:
    """Items of every node grouped by a key, {key: {node: [items]}}, kept current node by node:
    ``changed(name)`` takes the node's items out, ``current(items_of)`` puts them back as they are
    then (``items_of``: name -> [(key, item)], not kept: no reference back to its owner)."""

    def __init__(self, nodes):
        self.groups, self.keys = {}, {}  # node name -> the keys of its items
        self.stale = dict.fromkeys(n.name for n in nodes)

    def changed(self, name):
        groups = self.groups
        for key in self.keys.pop(name, ()):
            per_node = groups[key]
            del per_node[name]
            if not per_node:
                del groups[key]
        self.stale[name] = None

    def current(self, items_of) -> dict:
        groups = self.groups
        for name in self.stale:
            keys = self.keys[name] = set()
            for key, item in items_of(name):
                per_node = groups.get(key)
                if per_node is None:
                    per_node = groups[key] = {}
                items = per_node.get(name)
                if items is None:
                    items = per_node[name] = []
                    keys.add(key)
                items.append(item)
        self.stale.clear()
        return groups


def image_census(snapshot) -> tuple:
    """({node name: {image name: size}}, {image name: nodes having it}, node count): what
    ImageLocality reads of every node; a cordon or a drain does not change it."""
    per_node = {n.name: _images(n) for n in snapshot.nodes}
    spread = {}
    for images in per_node.values():
        for name in images:
            spread[name] = spread.get(name, 0) + 1
    return per_node, spread, len(snapshot.nodes)


def _default_normalize(scores, reverse) -> dict:
    top = max(scores.values(), default=0)
    if top == 0:
        return {n: MAX if reverse else 0 for n in scores}
    return {n: (MAX - MAX * s // top) if reverse else MAX * s // top for n, s in scores.items()}


def _taint_toleration(pod, nodes, view):
    tolerations = [t for t in pod.tolerations if not t.get("effect") or t.get("effect") == "PreferNoSchedule"]
    counts = {n.name: sum(1 for t in n.taints if t.get("effect") == "PreferNoSchedule"
                          and not any(toleration_tolerates(x, t) for x in tolerations)) for n in nodes}
    return _default_normalize(counts, reverse=True)


def _node_affinity(pod, nodes, view):
    terms = ((pod.affinity.get("nodeAffinity") or {}).get("preferredDuringSchedulingIgnoredDuringExecution") or [])
    if not terms:
        return None
    sums = {n.name: sum(int(t.get("weight") or 0) for t in terms
                        if node_selector_term_matches(t.get("preference") or {}, n)) for n in nodes}
    return _default_normalize(sums, reverse=False)


def _with_default_requests(pod) -> Pod:
    """``pod`` with 100m cpu / 200Mi memory in each container that requests none (NonMissingContainerRequests)."""
    spec = dict(pod.spec)
    for key in ("containers", "initContainers"):
        out = []
        for c in spec.get(key) or ():
            requests = dict((c.get("resources") or {}).get("requests") or {})
            requests.setdefault("cpu", f"{DEFAULT_CPU}m")
            requests.setdefault("memory", str(DEFAULT_MEMORY))
            out.append({**c, "resources": {**(c.get("resources") or {}), "requests": requests}})
        if key in spec:
            spec[key] = out
    return Pod({**pod.raw, "spec": spec})


def _nonzero_requests(pod) -> dict:
    """``requests_of(_with_default_requests(pod))`` (``ScoreCluster.nonzero_requests`` keeps it)."""
    spec = pod.spec
    complete = all("cpu" in requests and "memory" in requests for key in ("containers", "initContainers")
                   for c in spec.get(key) or () for requests in (_requests(c),))
    # every container requests both: the defaults change nothing
    return requests_of(pod if complete else _with_default_requests(pod))


def _requests(container) -> dict:
    return (container.get("resources") or {}).get("requests") or {}


def _allocatable(node) -> tuple:
    alloc = node.allocatable
    return alloc.get("cpu", 0), alloc.get("memory", 0)


def _resources_fit(pod, nodes, view):
    want = view.nonzero_requests(pod)
    wanted = (want.get("cpu", 0), want.get("memory", 0))
    known = view.raw_scores("NodeResourcesFit", wanted)
    out = {}
    for n in nodes:
        score = known.get(n.name)
        if score is None:
            total = weights = 0
            for have, cap, asked in zip(view.requested(n.name, True), _allocatable(n), wanted):
                if not cap:
                    continue
                used = have + asked
                total += 0 if used > cap else (cap - used) * MAX // cap
                weights += 1
            score = known[n.name] = total // weights if weights else 0
        out[n.name] = score
    return out


def _balance(requested, allocatable) -> int:
    fractions = [min(r / a, 1.0) for r, a in zip(requested, allocatable) if a]
    std = abs(fractions[0] - fractions[1]) / 2 if len(fractions) == 2 else 0.0
    return int((1 - std) * MAX)


def _balanced_allocation(pod, nodes, view):
    want = requests_of(pod)
    asked = (want.get("cpu", 0), want.get("memory", 0))
    if not any(asked):
        return None  # a BestEffort pod: PreScore skips the plugin
    known = view.raw_scores("NodeResourcesBalancedAllocation", asked)
    out = {}
    for n in nodes:
        score = known.get(n.name)
        if score is None:
            have, cap = view.requested(n.name, False), _allocatable(n)
            with_pod = _balance([h + a for h, a in zip(have, asked)], cap)
            score = known[n.name] = MAX // 2 + (MAX // 2 + with_pod - _balance(have, cap)) // 2
        out[n.name] = score
    return out


def _spread(pod, nodes, view):
    soft = [c for c in pod.topology_spread_constraints or () if c.get("whenUnsatisfiable") == "ScheduleAnyway"]
    if not soft:
        return None
    constraints = [(normalized(c), constraint_selector(pod, c)) for c in soft]
    keys = [c["topologyKey"] for c, _ in constraints]
    ignored = {n.name for n in nodes if any(k not in n.labels for k in keys)}
    counts = [{} for _ in constraints]  # per constraint: domain -> matching pods (the feasible nodes' domains)
    for n in nodes:
        if n.name in ignored:
            continue
        for i, (c, _) in enumerate(constraints):
            if c["topologyKey"] != HOSTNAME:
                counts[i].setdefault(n.labels[c["topologyKey"]], 0)
    weights = []
    for i, (c, _) in enumerate(constraints):
        size = len(nodes) - len(ignored) if c["topologyKey"] == HOSTNAME else len(counts[i])
        weights.append(math.log(size + 2))
    in_namespace = view.namespace_groups().get(pod.namespace, {})  # the pods a selector may count, by node
    for name, others in in_namespace.items():
        node = view.snapshot.node(name)
        if any(k not in node.labels for k in keys):
            continue
        for i, (c, selector) in enumerate(constraints):
            if not node_eligible(pod, node, c, ()):
                continue
            domain = node.labels[c["topologyKey"]]
            if domain in counts[i]:
                counts[i][domain] += _matching(others, selector, pod.namespace)
    raw = {}
    for n in nodes:
        if n.name in ignored:
            continue
        score = 0.0
        for i, (c, selector) in enumerate(constraints):
            value = n.labels.get(c["topologyKey"])
            if value is None:
                continue
            if c["topologyKey"] == HOSTNAME:
                count = _matching(in_namespace.get(n.name, ()), selector, pod.namespace)
            else:
                count = counts[i][value]
            score += count * weights[i] + (c["maxSkew"] - 1)
        raw[n.name] = _round_half_away(score)
    low, high = min(raw.values(), default=0), max(raw.values(), default=0)
    out = {}
    for n in nodes:
        if n.name in ignored:
            out[n.name] = 0
        elif high == 0:
            out[n.name] = MAX
        else:
            out[n.name] = MAX * (high + low - raw[n.name]) // high
    return out


def _round_half_away(x) -> int:
    """Go's math.Round: halves away from zero."""
    return int(math.floor(x + 0.5)) if x >= 0 else -int(math.floor(-x + 0.5))


def _matching(pods, selector, namespace) -> int:
    """``countPodsMatchSelector``: same namespace, not terminating, labels match (nil/empty: none)."""
    if selector is None or selector.is_empty:
        return 0
    return sum(1 for p in pods if p.namespace == namespace and not p.is_terminating and selector.matches(p.labels))


def _weighted_terms(pod, kind, incoming) -> list:
    raw = (pod.affinity.get(kind) or {}).get("preferredDuringSchedulingIgnoredDuringExecution") or []
    return [(int(t.get("weight") or 0), Term.parse(t.get("podAffinityTerm") or {}, pod, incoming)) for t in raw]


def _required(pod) -> list:
    raw = (pod.affinity.get("podAffinity") or {}).get("requiredDuringSchedulingIgnoredDuringExecution") or []
    return [Term.parse(t, pod, False) for t in raw]


def scoring_terms(pod) -> list:
    """How an existing pod's affinity scores an incoming pod: (term, weight, sign) for its required
    pod affinity (``HARD_AFFINITY_WEIGHT``), preferred affinity (+1) and preferred anti-affinity (-1),
    parsed once per Pod object."""
    found = pod.__dict__.get(_TERMS)
    if found is None:
        found = []
        if pod.affinity:
            found += [(t, HARD_AFFINITY_WEIGHT, 1) for t in _required(pod)]
            found += [(t, w, 1) for w, t in _weighted_terms(pod, "podAffinity", False)]
            found += [(t, w, -1) for w, t in _weighted_terms(pod, "podAntiAffinity", False)]
        pod.__dict__[_TERMS] = found
    return found


def _inter_pod_affinity(pod, nodes, view):
    mine = [(w, t, 1) for w, t in _weighted_terms(pod, "podAffinity", True)]
    mine += [(w, t, -1) for w, t in _weighted_terms(pod, "podAntiAffinity", True)]
    topology = {}  # key -> value -> score
    node = view.snapshot.node

    def add(term, name, amount):
        value = node(name).labels.get(term.key)
        if value is not None:
            per_key = topology.setdefault(term.key, {})
            per_key[value] = per_key.get(value, 0) + amount

    if mine:  # the pod's preferred terms against the placed pods of the namespaces they select
        groups = view.namespace_groups()
        for weight, term, sign in mine:
            for namespace in (term.namespaces if term.namespace_selector is None else list(groups)):
                for name, others in groups.get(namespace, {}).items():
                    matched = sum(1 for other in others if term.matches(other))
                    if matched:
                        add(term, name, weight * sign * matched)
    for per_node in view.affinity_groups().values():  # the placed pods' terms toward the pod
        alike = next(iter(per_node.values()))[0]
        for term, weight, sign in scoring_terms(alike):
            if term.matches(pod):
                for name, others in per_node.items():
                    add(term, name, weight * sign * len(others))
    if not topology:
        return None  # nothing matched anywhere: PreScore skips the plugin
    raw = {n.name: sum(values.get(n.labels[key], 0) for key, values in topology.items() if key in n.labels)
           for n in nodes}
    low, high = min(raw.values()), max(raw.values())
    return {n: int(MAX * ((s - low) / (high - low))) if high > low else 0 for n, s in raw.items()}


def normalized_image(name) -> str:
    """``normalizedImageName``: a pod's image without a tag gets ``:latest`` (node image names are
    matched as the kubelet reports them)."""
    return name + ":latest" if name.rfind(":") <= name.rfind("/") else name


def _images(node) -> dict:
    out = {}
    for image in ((node.raw.get("status") or {}).get("images") or ()):
        for name in image.get("names") or ():
            out[name] = int(image.get("sizeBytes") or 0)  # as the kubelet reports it: not normalized
    return out


def _image_locality(pod, nodes, view):
    per_node, spread, total = view.images
    wanted = [normalized_image(c.get("image") or "") for key in ("initContainers", "containers")
              for c in pod.spec.get(key) or ()]
    low, high = 23 * MB, 1000 * MB * len(wanted)
    out = {}
    for n in nodes:
        images = per_node.get(n.name) or _images(n)
        found = sum(int(images[w] * (spread.get(w, 1) / total)) for w in wanted if w in images)
        found = min(max(found, low), high)
        out[n.name] = MAX * (found - low) // (high - low) if high > low else 0
    return out


_PLUGINS = (("TaintToleration", _taint_toleration), ("NodeAffinity", _node_affinity),
            ("NodeResourcesFit", _resources_fit), ("PodTopologySpread", _spread),
            ("InterPodAffinity", _inter_pod_affinity), ("NodeResourcesBalancedAllocation", _balanced_allocation),
            ("ImageLocality", _image_locality))
