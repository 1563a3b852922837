"""Where replacements of drained pods can go: the scheduler's Filter plugins (``scheduling.filters``,
the same code as the preemption preview and rebalance), placement by placement (pure).

Used by the drain planner; see ``Capacity``. ``SharedBase`` lets many single-node plans (``check``)
share the per-cluster work.
"""


from kubectl_safety.analysis.scheduling.dra import named_claims
from kubectl_safety.analysis.scheduling.filters import filter_node, node_decides_alone, pod_failures, spread_rejects
from kubectl_safety.analysis.scheduling.kubelet import kubelet_rejects
from kubectl_safety.analysis.scheduling.node_state import NodeState, base_state, requests_of, share_node_states
from kubectl_safety.analysis.scheduling.plugins import fit_failures, node_failures, node_failures_key
from kubectl_safety.analysis.scheduling.pod_terms import anti_affinity_terms, required_terms
from kubectl_safety.analysis.scheduling.prefilter import prefilter_state, seed_prefilter
from kubectl_safety.analysis.scheduling.replacement import SHAPE_FIELDS, cordoned, replacement
from kubectl_safety.analysis.scheduling.score import ScoreCluster, image_census, nodes_to_find, score_nodes
from kubectl_safety.analysis.scheduling.volumes import claim_names
from kubectl_safety.analysis.topology import constraint_selector, is_hard
from kubectl_safety.model.cached import cached
from kubectl_safety.model.snapshot import ClusterSnapshot
from kubectl_safety.record import record

PER_NODE_REASONS = 20  # nodes listed by name in an unplaceable replacement's reasons


class Capacity:
    """Where replacements of leaving pods can go, judged by ``filter_node`` on the cluster as it is
    once the drained nodes are cordoned and the leaving pods are gone.

    Each placement scans nodes in name order for as many feasible ones as the scheduler looks for
    (``nodes_to_find``: all of them below 100 nodes), always also tries the drained nodes (a
    replacement that tolerates ``node.kubernetes.io/unschedulable`` may land back on a cordoned
    node: ``returns_to``), and takes the node the scheduler's Score stage ranks first
    (``score_nodes``). Of nodes tied for the highest score (the scheduler picks one at random) it
    takes the first by name that is not being drained, and names the others in ``tied``.
    Replacements placed earlier count: on their node through its ``NodeState`` (filters and scores),
    and cluster-wide (spread, affinity, ReadWriteOncePod) by rebuilding the snapshot before a pod
    whose cross-node filters one of them affects (``_affected``).
    """

    def __init__(self, snapshot, drained, leaving, shared=None):
        self.drained = set(drained)
        self.shared = shared
        self.source = snapshot  # the cluster as read: the controllers' templates
        self.from_pod = set()  # keys of pods whose controller's template is not in the snapshot
        self.pinned = {}  # pod key -> the nodeName its controller's template sets
        if shared is not None:  # the same cluster as shared.snapshot: its precomputation is reused
            self.base, self.nodes = shared.view(self.drained, set(leaving))
        else:
            nodes = [cordoned(n) if n.name in self.drained else n for n in snapshot.nodes]
            self.base = snapshot.replace(nodes=nodes, pods=[p for p in snapshot.pods if p.key not in leaving])
            self.nodes = sorted(self.base.nodes, key=lambda n: n.name)
        self.snapshot = self.base
        self.names = shared.names if shared is not None else [n.name for n in self.nodes]
        self.drained_nodes = [n for n, name in zip(self.nodes, self.names) if name in self.drained]
        self.states = {}  # node name -> NodeState relative to self.snapshot
        self.added = []  # replacements placed, in order
        self.unseen = []  # placed replacements self.snapshot lacks (their nodes' states have them)
        self.unseen_anti = False  # one of them has required anti-affinity
        self.placed = {}  # node -> replacements placed there
        self.returns_to = {}  # pod key -> the drained node its replacement may land on
        self.tied = {}  # pod key -> the other nodes that score as high as the chosen one
        self.why_not = {}  # pod key -> {node: first failure} for replacements that fit nowhere
        self.images = shared.images if shared is not None else image_census(self.base)
        self.scoring = self._scoring()
        self.wanted = nodes_to_find(len(self.nodes))
        self.not_listed = {}  # pod key -> how many more nodes failed than why_not lists
        self.static = shared.static if shared is not None else {}  # (node_failures_key, node) -> node_failures

    def state(self, node, name=None) -> NodeState:
        name = name or node.name
        state = self.states.get(name)
        if state is None:
            state = self.states[name] = NodeState.from_snapshot(node, self.snapshot)
        return state

    def _refresh(self, pod):
        """Rebuild the snapshot with every placed replacement when one placed since the last rebuild
        matters to ``pod``'s cross-node filters (spread, pod (anti-)affinity, ReadWriteOncePod)."""
        if self.unseen and self._affected(pod):
            self.snapshot = self.base.replace(pods=list(self.base.pods) + self.added)
            self.states = {}
            self.scoring = self._scoring()
            self.unseen = []
            self.unseen_anti = False

    def _affected(self, pod) -> bool:
        """Whether a pod placed since the last rebuild counts in ``pod``'s cross-node filters: a spread
        selector (even empty) or a required (anti-)affinity term of ``pod`` selects it, its own
        anti-affinity selects ``pod``, or both use the same claim (ReadWriteOncePod, or a ResourceClaim
        allocated where the first lands)."""
        affinity = pod.affinity
        if not (pod.topology_spread_constraints or claims_of(pod) or affinity.get("podAffinity")
                or affinity.get("podAntiAffinity")) and not self.unseen_anti:
            return False
        # an empty selector counts no pod, but a placed pod in a NodeState would move its count as
        # upstream's AddPod does (preemption's semantics): rebuild, so it counts as a bound pod
        selectors = [x for x in (constraint_selector(pod, c) for c in pod.topology_spread_constraints)
                     if x is not None]
        claims = claims_of(pod)
        terms = required_terms(pod, "podAffinity") + required_terms(pod, "podAntiAffinity")
        for placed in self.unseen:
            if placed.namespace == pod.namespace and (any(x.matches(placed.labels) for x in selectors)
                                                      or claims & claims_of(placed)):
                return True
            if any(t.matches(placed) for t in terms) or any(t.matches(pod) for t in anti_affinity_terms(placed)):
                return True
        return False

    def failures(self, pod, node, shape=None, name=None, quick=False) -> list:
        """``filter_node``'s failures, or only its first one (all this class reads). With a
        ``shape``, the plugins that read only the pod and the Node object (``node_failures``, which
        run first) are answered once per ``node_failures_key`` and node (for all plans with a
        shared base); when they fail, only they are returned. A ``local`` shape needs only
        ``fit_failures``, with a shared base the same for all plans on a node none of them changed.
        ``quick``: [None] when the pod does not fit for a reason found without the node's pods
        (``spread_rejects``), its first failure unknown."""
        name = name or node.name
        if shape is None or name in self.drained:
            return filter_node(pod, node, self.snapshot, self.states.get(name))  # None: the snapshot's, read only
        key = (shape.static, name)
        static = self.static.get(key)
        if static is None:
            static = self.static[key] = node_failures(pod, node)
        if quick and not static and not shape.local:
            state = self.states.get(name)
            if (state is None or not state.changed) and spread_rejects(pod, node, self.snapshot):
                return [None]
        shared = self.shared
        if shared is None:
            if not shape.local:
                return filter_node(pod, node, self.snapshot, self.states.get(name), static, first=True)
            if static:
                return static
            state = self.states.get(name)
            return fit_failures(pod, node, state if state is not None else base_state(node, self.snapshot), shape)
        if static:
            return static
        if not shape.local:
            return pod_failures(pod, node, self.snapshot, self.state(node, name))
        if name in self.placed:
            return fit_failures(pod, node, self.state(node, name), shape)
        found = shared.fit.get((shape.key, name))
        if found is None:
            found = shared.fit[(shape.key, name)] = fit_failures(pod, node, self.state(node, name), shape)
        return found

    def place(self, pod):
        """(node name, None) for the chosen node, or (None, scheduler-style summary) for ``pod``'s
        replacement; ``why_not[pod.key]`` then has each node's first failure."""
        new, from_template = replacement(pod, self.source)
        if not from_template and pod.controller_ref:
            self.from_pod.add(pod.key)
        if new.node_name:
            return self._bound(pod, new)
        self._refresh(new)
        shape = self.shared.shape(new, pod, self) if self.shared is not None else _shape(new, pod, self)
        feasible, reasons, unread = [], {}, []
        drained = self.drained
        for node, name in zip(self.nodes, self.names):
            if name in drained:
                continue
            failures = self.failures(new, node, shape, name, quick=True)
            if failures:
                if failures[0] is None:  # found quickly: its message only matters if no node fits
                    unread.append((node, name))
                    reasons[name] = None
                else:
                    reasons[name] = failures[0].message
                continue
            feasible.append(node)
            if len(feasible) >= self.wanted:
                break
        back = []
        for node in self.drained_nodes:
            failures = self.failures(new, node)
            if failures:
                reasons[node.name] = "being drained: " + failures[0].message
            else:
                back.append(node)
        if back:
            self.returns_to[pod.key] = back[0].name
        candidates = feasible + back
        if not candidates:
            for node, name in unread:
                reasons[name] = self.failures(new, node, shape, name)[0].message
            self.why_not[pod.key] = dict(sorted(reasons.items())[:PER_NODE_REASONS])
            self.not_listed[pod.key] = max(0, len(reasons) - PER_NODE_REASONS)
            return None, summary(reasons, len(self.nodes))
        best = score_nodes(new, candidates, self.scoring).best
        choice = next((name for name in best if name not in drained), best[0])
        self.tied[pod.key] = [name for name in best if name != choice]
        self._commit(new, next(n for n in candidates if n.name == choice))
        return choice, None

    def _bound(self, pod, new):
        """A replacement whose template sets ``nodeName``: no scheduler, the kubelet of that node
        admits it (a cordon does not stop it: ``kubelet_rejects``) or it fails."""
        name = new.node_name
        self.pinned[pod.key] = name
        node = next((n for n in self.nodes if n.name == name), None)
        failures = ["no such node"] if node is None else kubelet_rejects(new, node, self.snapshot,
                                                                         self.states.get(name))
        if failures:
            why = failures[0] if node is None else failures[0].message
            self.why_not[pod.key] = {name: f"its controller's template sets nodeName {name}: {why}"}
            self.not_listed[pod.key] = 0
            return None, f"its controller's template sets nodeName {name} (no scheduler), and {why}"
        if name in self.drained:
            self.returns_to[pod.key] = name
        self._commit(new, node)
        return name, None

    def returns_why(self, key, node) -> str:
        """Why the replacement of the pod ``key`` comes back to the drained ``node`` (after its subject)."""
        if key in self.pinned:
            return (f"is recreated from a template that sets nodeName {node}: its replacement skips the scheduler "
                    "and the kubelet admits it on the cordoned node")
        return f"tolerates node.kubernetes.io/unschedulable: its replacement can be scheduled back onto {node} (cordoned)"

    def place_all(self, pods) -> dict:
        """``place`` each pod in order, then again those left unplaceable that a later placement may
        let in (required pod affinity, topology spread), while a round places one: the scheduler
        retries a Pending pod when a pod is bound. {pod key: (node, None) or (None, summary)}."""
        result = {pod.key: self.place(pod) for pod in pods}
        waiting = [p for p in pods if result[p.key][0] is None and _may_fit_later(p)]
        while waiting:
            before = len(self.added)
            for pod in waiting:
                node, _ = self.place(pod)
                if node is not None:
                    result[pod.key] = (node, None)
                    self.why_not.pop(pod.key, None)
                    self.not_listed.pop(pod.key, None)
            if len(self.added) == before:
                break
            waiting = [p for p in waiting if result[p.key][0] is None]
        return result

    def _scoring(self) -> ScoreCluster:
        """What the Score stage reads: the pods on each node with the replacements placed so far
        (a node's ``NodeState`` when it has one); no reference back to ``self`` (no cycle)."""
        return ScoreCluster(self.snapshot, self.states, self.images)

    def _commit(self, new, node):
        placed = type(new)({**new.raw, "spec": {**new.spec, "nodeName": node.name}, "status": {"phase": "Running"}})
        self.state(node).add(placed)
        self.scoring.changed(node.name)
        self.added.append(placed)
        self.unseen.append(placed)
        self.unseen_anti = self.unseen_anti or bool(anti_affinity_terms(placed))
        self.placed.setdefault(node.name, []).append(new.key)

    def placed_on(self) -> dict:
        """{node: replacements placed on it}, by node name."""
        return {k: len(v) for k, v in sorted(self.placed.items())}


def _may_fit_later(pod) -> bool:
    """Whether more pods elsewhere can make ``pod`` fit: a required pod affinity term they satisfy,
    or a spread constraint whose smallest domain they fill (resources, anti-affinity, taints only
    get worse)."""
    return bool(required_terms(pod, "podAffinity") or any(
        is_hard(c) for c in pod.topology_spread_constraints))


def claims_of(pod) -> set:
    """The PersistentVolumeClaims and ResourceClaims the pod names (pods naming the same one interact)."""
    return set(claim_names(pod)) | {("resource", name) for name in named_claims(pod)}


def summary(reasons, total) -> str:
    """The scheduler's "0/N nodes are available: 2 Insufficient cpu, 1 ..." line."""
    counts = {}
    for why in reasons.values():
        short = why.split(" (")[0] if not why.startswith("being drained") else "being drained"
        counts[short] = counts.get(short, 0) + 1
    parts = ", ".join(f"{c} {w}" for w, c in sorted(counts.items(), key=lambda x: (-x[1], x[0])))
    return f"0/{total} nodes are available: {parts or 'no nodes'}"


class SharedBase:
    """What every single-node plan of one snapshot shares: the nodes in name order, each node's
    scheduler state and the pods with required anti-affinity, computed once. ``view(drained,
    leaving)`` is then the cluster as ``Capacity`` sees it for those nodes, built from the parent's
    indexes and node states, patched for the drained nodes: nothing per pod (``_DrainedView``)."""

    def __init__(self, snapshot):
        self.snapshot = snapshot
        self.nodes = sorted(snapshot.nodes, key=lambda n: n.name)
        self.names = [n.name for n in self.nodes]
        self.in_order = {name: i for i, name in enumerate(self.names)}
        self.in_snapshot = {n.name: i for i, n in enumerate(snapshot.nodes)}
        self.static = {}  # (node_failures_key, node name) -> node_failures
        self.fit = {}  # (local shape key, node name) -> fit_failures on the node as it is
        self.prefilters = {}  # shape key -> the replacement's PreFilter state on the whole snapshot
        self.images = image_census(snapshot)  # what ImageLocality reads: the same in every view

    def shape(self, new, pod, capacity):
        """The ``_Shape`` of ``new``, the replacement of ``pod`` (same requests and host ports); seeds
        its PreFilter state on ``capacity``'s view."""
        shape = _shape(new, pod, capacity, self.snapshot)
        claims = bool(claim_names(new)) and self.snapshot.storage_known
        if not shape.local and not claims and capacity.snapshot is capacity.base:
            self._seed(new, shape.key, capacity)
        return shape

    def _seed(self, new, key, capacity):
        """Put the view's PreFilter state of ``new`` in place: the whole snapshot's (computed once per
        shape) minus the pods gone from the drained nodes (the scheduler's RemovePod), so that a
        plan does not recount the cluster (``seed_prefilter``)."""
        base = self.prefilters.get(key)
        if base is None:
            base = self.prefilters[key] = prefilter_state(new, self.snapshot)
        seed_prefilter(new, capacity.base, base, capacity.base.removed)

    def view(self, drained, leaving) -> tuple:
        """(snapshot without ``leaving`` pod keys and with ``drained`` cordoned, its nodes by name);
        O(drained): the parent's node states are shared, not copied (``share_node_states``)."""
        parent = self.snapshot
        nodes, in_order, changed = list(parent.nodes), list(self.nodes), {}
        for name in drained:
            if name in self.in_snapshot:
                node = changed[name] = cordoned(parent.nodes[self.in_snapshot[name]])
                nodes[self.in_snapshot[name]] = node
                in_order[self.in_order[name]] = node
        view = _DrainedView(parent, nodes, changed, leaving)
        view.removed = [(parent.node(name), node, [p for p in parent.pods_on(name) if p.key in leaving
                                                   and not p.is_terminal])
                        for name, node in changed.items()]
        share_node_states(parent, view, drained, [p for _, _, gone in view.removed for p in gone])
        return view, in_order


def _shape(new, pod, capacity, snapshot=None):
    """The ``_Shape`` of ``new``, the replacement of ``pod``, for ``capacity`` (judged on
    ``snapshot``: the capacity's own by default)."""
    requests, ports = requests_of(new), new.host_ports
    # repr is faithful for parsed JSON: equal keys mean equal content (equal content written in
    # another key order only misses the memo)
    key = repr((new.namespace, new.labels, [new.spec.get(k) for k in SHAPE_FIELDS], requests, ports,
                claim_names(new)))
    local = node_decides_alone(new, snapshot or capacity.snapshot) \
        and not any(t.matches(new) for placed in capacity.added for t in anti_affinity_terms(placed))
    return _Shape(key, node_failures_key(new), local, requests, ports)


@record(slots=False)
class _Shape:
    """A replacement as the filters see it: ``key`` is its namespace, labels and spec, ``static``
    what ``node_failures`` reads of it; ``local`` when nothing but its node decides its fit (no
    spread, pod (anti-)affinity, claims, and no other pod's required anti-affinity selects it)."""

    key: str
    static: str  # node_failures_key
    local: bool  # only its node decides (else its PreFilter state is seeded per plan)
    requests: dict  # what fit_failures reads
    ports: list


class _DrainedView(ClusterSnapshot):
    """``parent`` with the pods of ``leaving`` (on the ``drained`` nodes: name -> the node as it is
    in ``nodes``) gone and ``nodes`` instead of its nodes; the pod indexes are the parent's, patched for the drained nodes and read lazily
    for the namespaces they touch; ``pods`` is built only if asked for."""

    def __init__(self, parent, nodes, drained, leaving):
        super().__init__(**{**parent.fields(), "nodes": nodes, "pods": ()})
        del self.__dict__["pods"]  # the lazy property below
        self._parent, self._leaving = parent, leaving
        self.removed = []  # (node before, node after, pods gone) per drained node (SharedBase.view)
        self.share_indexes(parent, ("nodes", "pods"))
        self.__dict__["_nodes_by_name"] = _Patched(parent._nodes_by_name, drained)
        self.__dict__["_pods_by_node"] = _Patched(parent._pods_by_node, {
            name: [p for p in parent.pods_on(name) if p.key not in leaving] for name in drained})
        self.__dict__["_pods_by_key"] = _Without(parent._pods_by_key, leaving)
        self.__dict__["_pods_by_namespace"] = _NamespacesWithout(parent._pods_by_namespace, leaving,
                                                                 {namespace for namespace, _ in leaving})

    @cached
    def pods(self):
        return tuple(p for p in self._parent.pods if p.key not in self._leaving)


class _Patched:
    """A read-only mapping: ``changes`` over ``index`` (``get`` only, as the snapshot uses it)."""

    def __init__(self, index, changes):
        self.index, self.changes = index, changes

    def get(self, key, default=None):
        return self.changes[key] if key in self.changes else self.index.get(key, default)


class _Without:
    """A read-only ``{pod key: pod}`` minus some keys (``get`` only, as the snapshot uses it)."""

    def __init__(self, index, leaving):
        self.index, self.leaving = index, leaving

    def get(self, key, default=None):
        return default if key in self.leaving else self.index.get(key, default)


class _NamespacesWithout:
    """``{namespace: pods}`` minus the leaving pods, filtered on first use of a touched namespace."""

    def __init__(self, index, leaving, touched):
        self.index, self.leaving, self.touched, self.cache = index, leaving, touched, {}

    def get(self, namespace, default=None):
        if namespace not in self.touched:
            return self.index.get(namespace, default)
        if namespace not in self.cache:
            self.cache[namespace] = [p for p in self.index.get(namespace, ()) if p.key not in self.leaving]
        return self.cache[namespace]
