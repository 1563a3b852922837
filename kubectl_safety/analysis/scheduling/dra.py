"""The scheduler's DynamicResources Filter plugin (DRA with structured parameters): a pod's
ResourceClaims must be allocatable from the devices the node's ResourceSlices publish.

``dra_prefilter(pod, snapshot)`` resolves the pod's claims (PreFilter: a missing or deleting
claim, a template claim not created for the pod, a missing DeviceClass fail on every node) and
``dra_filter(pre, node, snapshot, state)`` is the per-node part: an allocated claim's node
selector must match; unallocated claims are allocated by an exhaustive search like upstream's
structured allocator (``Allocator``) over the devices no other claim holds.

Where the model differs from the running scheduler, on purpose (docs/deviations.md, "Devices"):
a pod's claim from a template that does not exist yet is the claim the resource claim controller
will create (a replacement's, or a manifest's), allocated afresh; a claim reserved only for pods
that are gone is deallocated (as the resource claim controller does); claims of pods placed on
a node by a plan take their devices there. A CEL selector outside ``device_cel``'s subset, and
devices with shared counters or multiple allocations, are taken not to match (conservative).
"""

from kubectl_safety.analysis.scheduling.device_cel import ERROR, Unsupported, device_view, evaluate
from kubectl_safety.analysis.scheduling.failure import Failure
from kubectl_safety.model.devices import ResourceClaim
from kubectl_safety.model.selectors import node_selector_term_matches, toleration_tolerates

PLUGIN = "DynamicResources"
RESERVED_FOR_MAX = 256  # ResourceClaimReservedForMaxSize
RESULTS_MAX = 32  # AllocationResultsMaxSize: devices per claim
MAX_STEPS = 200_000  # search steps per allocation before giving up (then: not judged, fails)
_PLANNING = "dra"  # this module's entry in ``snapshot.planning``


def named_claims(pod) -> set:
    """The ResourceClaims the pod names itself (``resourceClaimName``): pods may share them."""
    return {c["resourceClaimName"] for c in pod.resource_claims if c.get("resourceClaimName")}


def dra_known(snapshot) -> bool:
    """Whether the snapshot holds the resource.k8s.io objects (a dump without any, or a live read
    that could not read them all: pods' claims are not judged)."""
    return bool(snapshot.resource_claims or snapshot.resource_slices or snapshot.device_classes
                or snapshot.resource_claim_templates) and not snapshot.dra_unread


def _fail(message, resolvable=False, code="device-claim"):
    return Failure(PLUGIN, code, message, resolvable)


class _Pre:
    """What PreFilter resolves once per pod: its claims, which are allocated, which to allocate."""

    def __init__(self, pod):
        self.pod = pod
        self.failure = None
        self.claims = []  # ResourceClaim objects (a template's fresh claim included)
        self.allocate = []  # the claims to allocate (unallocated, deallocated or fresh)
        self.pinned = {}  # claim uid -> the node of a pod placed with it unallocated (it is allocated there)
        self.names = {}  # claim uid -> the pod's name for it (spec.resourceClaims[].name)


def dra_prefilter(pod, snapshot):
    """None (the plugin skips the pod) or a ``_Pre`` whose ``failure`` fails every node (computed
    once per pod object and snapshot)."""
    if not pod.resource_claims or not dra_known(snapshot):
        return None
    cache = snapshot.planning.setdefault(_PLANNING, {}).setdefault("pre", {})
    known = cache.get(id(pod))
    if known is None or known[0] is not pod:
        known = cache[id(pod)] = (pod, _resolve(pod, snapshot))
    return known[1]


def _resolve(pod, snapshot):
    pre = _Pre(pod)
    statuses = pod.resource_claim_statuses
    for entry in pod.resource_claims:
        claim, owned = None, False
        if entry.get("resourceClaimName"):
            name = entry["resourceClaimName"]
        elif entry.get("resourceClaimTemplateName"):
            if entry.get("name") not in statuses:
                template = snapshot.resource_claim_template(pod.namespace, entry["resourceClaimTemplateName"])
                if template is None:
                    pre.failure = _fail(f'resourceclaimtemplate "{entry["resourceClaimTemplateName"]}" not found')
                    return pre
                claim = _fresh(pod, entry, template)
            else:
                name = statuses[entry["name"]]
                if name is None:
                    continue  # no claim needed (upstream skips it)
                owned = True
        else:
            pre.failure = _fail(f'pod claim "{entry.get("name")}": neither a claim nor a template')
            return pre
        if claim is None:
            claim = snapshot.resource_claim(pod.namespace, name)
            if claim is None:
                pre.failure = _fail(f'resourceclaim.resource.k8s.io "{name}" not found')
                return pre
            if claim.deletion_timestamp is not None:
                pre.failure = _fail(f'resourceclaim "{name}" is being deleted')
                return pre
            if owned and (claim.controller_ref or {}).get("uid") != pod.uid:
                pre.failure = _fail(f"ResourceClaim {claim.namespace}/{claim.name} was not created for pod "
                                    f"{pod.namespace}/{pod.name} (pod is not owner)")
                return pre
        pre.claims.append(claim)
        pre.names[claim.uid] = entry.get("name") or claim.name
    if not pre.claims:
        return None
    released = _released(snapshot)
    for claim in pre.claims:
        allocated = claim.allocation is not None and claim.uid not in released
        if allocated:
            reserved = any(r.get("uid") == pod.uid for r in claim.reserved_for) if pod.uid else False
            if len(claim.reserved_for) >= RESERVED_FOR_MAX and not reserved:
                pre.failure = _fail("resourceclaim in use")
                return pre
            continue
        holder = _holder(pod, claim, snapshot)
        if holder is not None:
            pre.pinned[claim.uid] = holder.node_name
            continue
        pre.allocate.append(claim)
        for request in claim.requests:
            alternatives = [request["exactly"]] if request.get("exactly") else request.get("firstAvailable") or []
            if not alternatives:
                pre.failure = _fail(f"resource claim {claim.namespace}/{claim.name}, request "
                                    f"{request.get('name')}: unknown request type")
                return pre
            for alt in alternatives:
                cls = alt.get("deviceClassName") or ""
                if snapshot.device_class(cls) is None:
                    label = request.get("name") if alt is request.get("exactly") else \
                        f"{request.get('name')}/{alt.get('name')}"
                    pre.failure = _fail(f"request {label}: device class {cls} does not exist")
                    return pre
    return pre


def _holder(pod, claim, snapshot):
    """Another pod bound to a node with ``claim`` (by name) while the claim has no allocation: a
    replacement a plan placed, whose claim is allocated on its node."""
    cache = snapshot.planning.setdefault(_PLANNING, {})
    holders = cache.get("holders")
    if holders is None:  # (namespace, claim name) -> bound pods naming it, indexed once per snapshot
        holders = cache["holders"] = {}
        for other in snapshot.pods:
            if other.node_name and not other.is_terminal and other.resource_claims:
                for name in named_claims(other):
                    holders.setdefault((other.namespace, name), []).append(other)
    return next((o for o in holders.get((pod.namespace, claim.name), ()) if o.key != pod.key), None)


def _fresh(pod, entry, template) -> ResourceClaim:
    """The claim the resource claim controller creates from ``template`` for ``pod`` (unallocated)."""
    return ResourceClaim({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                          "metadata": {"name": f"{pod.name}-{entry.get('name')}", "namespace": pod.namespace,
                                       "uid": f"new:{pod.namespace}/{pod.name}/{entry.get('name')}"},
                          "spec": template.claim_spec})


def _released(snapshot) -> frozenset:
    """Uids of allocated claims reserved only for pods the snapshot no longer has: the resource
    claim controller deallocates them (their devices are free, the claim is allocated anew)."""
    cache = snapshot.planning.setdefault(_PLANNING, {})
    if "released" not in cache:
        uids = {p.uid for p in snapshot.pods if p.uid}
        cache["released"] = frozenset(
            c.uid for c in snapshot.resource_claims
            if c.allocation is not None and c.reserved_for and snapshot.pods_complete_in(c.namespace)
            and all(r.get("resource") == "pods" and r.get("uid") not in uids for r in c.reserved_for))
    return cache["released"]


def _in_use(snapshot) -> frozenset:
    """(driver, pool, device) of every device an allocated claim holds (admin access holds none)."""
    cache = snapshot.planning.setdefault(_PLANNING, {})
    if "in_use" not in cache:
        released = _released(snapshot)
        cache["in_use"] = frozenset((d, p, n) for c in snapshot.resource_claims
                                    if c.allocation is not None and c.uid not in released
                                    for d, p, n, admin in c.allocated_devices if not admin)
    return cache["in_use"]


def dra_filter(pre, node, snapshot, state) -> list:
    """The plugin's Filter on ``node`` (``pre`` from ``dra_prefilter``, not failed)."""
    unavailable = False
    for claim in pre.claims:
        if claim.uid in pre.pinned:
            unavailable = unavailable or pre.pinned[claim.uid] != node.name
            continue
        if claim in pre.allocate:
            continue
        selector = (claim.allocation or {}).get("nodeSelector")
        if selector is not None and not any(node_selector_term_matches(t, node)
                                            for t in selector.get("nodeSelectorTerms") or []):
            unavailable = True
    if pre.allocate:
        placed = set()  # devices the pods a plan placed here take first
        for other in _placed_here(pre.pod, node, snapshot, state):
            result = Allocator(node, snapshot, placed).allocate(other)
            if result.devices:
                placed.update(result.devices)
        result = Allocator(node, snapshot, placed).allocate(pre.allocate)
        if result.error:
            return [_fail(result.error)]
        if result.devices is None:
            names = ", ".join(pre.names.get(c.uid, c.name) for c in pre.allocate)
            why = f"cannot allocate all claims ({names}: the node's free devices do not satisfy them"
            why += f"; not judged: {result.unjudged})" if result.unjudged else ")"
            return [_fail(why, code="device-unavailable")]
    if unavailable:
        return [_fail("resourceclaim not available on the node", code="device-claim-elsewhere")]
    return []


def _placed_here(pod, node, snapshot, state) -> list:
    """The claims to allocate of the other pods on the node that have no allocation yet: pods a
    plan placed there (a replacement's fresh claims), in order."""
    out, seen = [], set()
    pods = state.pods.values() if state is not None else snapshot.pods_on(node.name)
    for other in pods:
        if other.key == pod.key or not other.resource_claims:
            continue
        pre = dra_prefilter(other, snapshot)
        if pre is not None and pre.failure is None:
            claims = [c for c in pre.allocate if c.uid not in seen]
            seen.update(c.uid for c in claims)
            if claims:
                out.append(claims)
    return out


class Result:
    __slots__ = ("devices", "error", "unjudged")

    def __init__(self, devices=None, error="", unjudged=""):
        self.devices, self.error, self.unjudged = devices, error, unjudged


class Allocator:
    """Allocate claims on one node from its pools, devices already taken excluded (upstream's
    exhaustive depth-first search: every request's devices in every order, the first full solution)."""

    def __init__(self, node, snapshot, placed):
        """``placed``: devices taken besides those of the snapshot's allocated claims."""
        self.node, self.snapshot, self.used, self.placed = node, snapshot, _in_use(snapshot), placed
        self.unjudged = ""
        self.steps = 0
        self.pools = _pools(node, snapshot)

    def allocate(self, claims) -> Result:
        """``Result.devices``: the devices chosen (a list, possibly empty), or None if none fit."""
        slots = []  # per claim, per request: (claim, request, alternatives)
        for claim in claims:
            total = 0
            for request in claim.requests:
                alternatives = [(request["exactly"], request.get("name") or "")] if request.get("exactly") else \
                    [(sub, f"{request.get('name')}/{sub.get('name')}") for sub in request.get("firstAvailable") or []]
                prepared = []
                for alt, name in alternatives:
                    prepared_alt = self._candidates(alt, claim)
                    if isinstance(prepared_alt, str):
                        return Result(error=prepared_alt)
                    prepared.append((alt, name, request.get("name") or "", prepared_alt))
                slots.append((claim, prepared))
                if (request.get("exactly") or {}).get("allocationMode", "ExactCount") == "ExactCount":
                    total += int((request.get("exactly") or {}).get("count") or 1)
            if total > RESULTS_MAX:
                return Result(error=f"claim {claim.namespace}/{claim.name}: number of requested devices {total} "
                                    f"exceeds the claim limit of {RESULTS_MAX}")
        chosen, taken = [], set()
        try:
            found = self._search(slots, 0, chosen, taken, {})
        except _CelError as e:
            return Result(error=str(e))
        if found is None:
            return Result(unjudged=self.unjudged or "search too long")
        return Result(devices=[d for d, admin in chosen if not admin] if found else None, unjudged=self.unjudged)

    def _candidates(self, alt, claim):
        """(mode, count, admin, candidates, match) of one request, or an error message: candidates
        are every device of the node's complete pools in upstream's order, ``match(i, device)``
        evaluates the selectors (memoized) when the search reaches a device, as upstream does."""
        cls = self.snapshot.device_class(alt.get("deviceClassName") or "")
        if cls is None:
            return f"request {alt.get('name')}: device class {alt.get('deviceClassName')} does not exist"
        selectors = [s.get("cel", {}).get("expression") for s in cls.selectors] + \
                    [s.get("cel", {}).get("expression") for s in alt.get("selectors") or []]
        mode = alt.get("allocationMode") or "ExactCount"
        out = []
        for (driver, pool_name), pool in self.pools:
            if pool is None:  # incomplete
                if mode == "All":
                    return (f"claim {claim.namespace}/{claim.name}: asks for all devices, but resource pool "
                            f"{driver}/{pool_name} is currently being updated")
                continue
            out.extend(((driver, pool_name, device.get("name") or ""), device, not _untolerated(device, alt))
                       for device in pool)
        memo = {}

        def match(ident, device):
            if ident not in memo:
                memo[ident] = self._matches(device, ident[0], selectors, claim)
            if isinstance(memo[ident], str):
                raise _CelError(memo[ident])
            return memo[ident]

        if mode == "All":  # upstream collects them all first (errors included)
            try:
                out = [c for c in out if match(c[0], c[1])]
            except _CelError as e:
                return str(e)
        return (mode, int(alt.get("count") or 1), bool(alt.get("adminAccess")), out, match)

    def _matches(self, device, driver, selectors, claim):
        if device.get("consumesCounters") or device.get("allowMultipleAllocations"):
            self.unjudged = "devices with shared counters or multiple allocations"
            return False
        view = device_view(device, driver)
        for expression in selectors:
            try:
                result = evaluate(expression, view)
            except Unsupported as e:
                self.unjudged = f"selector {expression!r} not evaluated ({e})"
                return False
            if result is ERROR:
                return f"claim {claim.namespace}/{claim.name}: selector {expression!r}: CEL runtime error"
            if not result:
                return False
        return True

    def _search(self, slots, index, chosen, taken, constraint_values):
        """True when slots[index:] can be allocated (``chosen`` then holds the devices), False
        when not, None when the search took too long; raises ``_CelError``."""
        if index == len(slots):
            return True
        claim, prepared = slots[index]
        for alt, name, parent, (mode, count, admin, candidates, match) in prepared:
            constraints = [c for c in claim.constraints
                           if not c.get("requests") or parent in c["requests"] or name in c["requests"]]
            if mode == "All":
                free = [(i, d) for i, d, usable in candidates
                        if usable and (admin or (i not in self.used and i not in self.placed and i not in taken))]
                if not candidates or len(free) < len(candidates):
                    continue
                found = self._pick(slots, index, chosen, taken, constraints, constraint_values, free, count, admin,
                                   [free], claim, match)
            else:
                free = [(i, d, usable) for i, d, usable in candidates
                        if admin or (i not in self.used and i not in self.placed and i not in taken)]
                if len(free) < count:
                    continue
                found = self._pick(slots, index, chosen, taken, constraints, constraint_values, free, count, admin,
                                   None, claim, match)
            if found is None or found:
                return found
        return False

    def _pick(self, slots, index, chosen, taken, constraints, values, free, count, admin, picks, claim, match,
              start=0):
        self.steps += 1
        if self.steps > MAX_STEPS:
            return None
        if picks is not None:  # All: exactly these
            saved = dict(values)
            for i, d in picks[0]:
                if not _fits_constraints(d, i, constraints, values, claim):
                    values.clear()
                    values.update(saved)
                    return False
                _bind_constraints(d, i, constraints, values, claim)
            for i, d in picks[0]:
                chosen.append((i, admin))
                if not admin:
                    taken.add(i)
            found = self._search(slots, index + 1, chosen, taken, values)
            if found:
                return found
            del chosen[len(chosen) - len(picks[0]):]
            if not admin:
                taken.difference_update(i for i, _ in picks[0])
            values.clear()
            values.update(saved)
            return found
        if count == 0:
            return self._search(slots, index + 1, chosen, taken, values)
        for k in range(start, len(free)):
            i, d, usable = free[k]
            if (i in taken and not admin) or not match(i, d) or not usable:
                continue
            if not _fits_constraints(d, i, constraints, values, claim):
                continue
            saved = dict(values)
            _bind_constraints(d, i, constraints, values, claim)
            chosen.append((i, admin))
            if not admin:
                taken.add(i)
            found = self._pick(slots, index, chosen, taken, constraints, values, free, count - 1, admin, None,
                               claim, match, k + 1)
            if found is None or found:
                return found
            chosen.pop()
            taken.discard(i)
            values.clear()
            values.update(saved)
        return False


class _CelError(Exception):
    """A selector's CEL runtime error on a device the search reached: the allocation fails."""


def _untolerated(device, request) -> bool:
    """Whether the device has a NoSchedule/NoExecute taint the request does not tolerate."""
    return any(t.get("effect") in ("NoSchedule", "NoExecute")
               and not any(toleration_tolerates(tol, t) for tol in request.get("tolerations") or [])
               for t in device.get("taints") or [])


def _attribute(device, driver, name):
    attrs = device.get("attributes") or {}
    if name in attrs:
        return attrs[name]
    domain, _, ident = name.rpartition("/")
    if domain == driver and ident in attrs:
        return attrs[ident]
    return None


def _fits_constraints(device, ident, constraints, values, claim) -> bool:
    for n, c in enumerate(constraints):
        name = c.get("matchAttribute")
        if not name:
            continue
        value = _attribute(device, ident[0], name)
        if value is None:
            return False
        key = (claim.uid, n)
        if key in values and values[key] != repr(sorted(value.items()) if isinstance(value, dict) else value):
            return False
    return True


def _bind_constraints(device, ident, constraints, values, claim):
    for n, c in enumerate(constraints):
        name = c.get("matchAttribute")
        if name:
            value = _attribute(device, ident[0], name)
            values.setdefault((claim.uid, n), repr(sorted(value.items()) if isinstance(value, dict) else value))


def _slice_on(node, spec) -> bool:
    if spec.get("nodeName"):
        return spec["nodeName"] == node.name
    if spec.get("allNodes"):
        return True
    selector = spec.get("nodeSelector")
    if selector is not None:
        return any(node_selector_term_matches(t, node) for t in selector.get("nodeSelectorTerms") or [])
    return False


def _pools(node, snapshot) -> list:
    """[((driver, pool), devices or None if incomplete)] the node may use, by driver and pool name:
    the newest generation of each pool, complete when all its slices are there."""
    cache = snapshot.planning.setdefault(_PLANNING, {})
    if "slices" not in cache:  # once per snapshot: slices by node name, and those for several nodes
        newest, counts, size = {}, {}, {}
        for s in snapshot.resource_slices:
            key = (s.driver, s.pool.get("name") or "")
            newest[key] = max(newest.get(key, 0), int(s.pool.get("generation") or 0))
        by_node, others = {}, []
        for s in sorted(snapshot.resource_slices, key=lambda s: s.name):
            key = (s.driver, s.pool.get("name") or "")
            if int(s.pool.get("generation") or 0) != newest[key]:
                continue  # an older generation: replaced
            counts[key] = counts.get(key, 0) + 1
            size[key] = int(s.pool.get("resourceSliceCount") or 0)
            name = s.spec.get("nodeName")
            (by_node.setdefault(name, []) if name else others).append((key, s))
        cache["slices"] = (by_node, others, {k: counts[k] == size[k] for k in counts})
        cache["pools"] = {}
    by_node, others, complete = cache["slices"]
    pools = cache["pools"]
    if node.name in pools and pools[node.name][0] is node:
        return pools[node.name][1]
    found = {}
    for key, s in sorted(by_node.get(node.name, []) + others, key=lambda item: item[1].name):
        if s.spec.get("perDeviceNodeSelection"):
            devices = [d for d in s.devices if _slice_on(node, d)]
        elif _slice_on(node, s.spec):
            devices = list(s.devices)
        else:
            continue
        if devices:
            found.setdefault(key, []).extend(devices)
    out = [(key, found[key] if complete[key] else None) for key in sorted(found)]
    pools[node.name] = (node, out)
    return out
