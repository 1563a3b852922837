#!/usr/bin/env bash
# Drain a node pool one node at a time with kubectl-safety; stop at the first node that is not safe.
#
# Usage: examples/drain-pool.sh SELECTOR [extra `kubectl safety drain` flags...]
#   examples/drain-pool.sh cloud.google.com/gke-nodepool=blue
#   KUBE_CONTEXT=prod PAUSE=120 examples/drain-pool.sh pool=blue --delete-emptydir-data
#
# For each node: a dry run first (exit 3 = blocked: stop before touching it), then the real drain
# (bounded by TIMEOUT; it evicts within the PodDisruptionBudgets and waits until pods are gone),
# then PAUSE seconds so replacements settle before the next node. Drained nodes stay cordoned.
# Environment: KUBE_CONTEXT (kubeconfig context), TIMEOUT (per node, default 15m), PAUSE (default 60).
# Exit codes: 0 every node drained; 3 a node is blocked or the drain was refused (that node and
# the rest are untouched); 4 a node is partially drained (timeout: it stays cordoned; run again);
# anything else: the error of kubectl / kubectl safety.
set -uo pipefail

selector=${1:?usage: drain-pool.sh SELECTOR [kubectl safety drain flags...]}
shift
context=(${KUBE_CONTEXT:+--context "$KUBE_CONTEXT"})
timeout=${TIMEOUT:-15m}
pause=${PAUSE:-60}

nodes=$(kubectl get nodes -l "$selector" "${context[@]}" \
    -o jsonpath='{range .items[*]}{.metadata.name}{"\n"}{end}') || exit 1
if [ -z "$nodes" ]; then
    echo "no node matches $selector" >&2
    exit 1
fi

for node in $nodes; do
    echo "== $node: plan" >&2
    kubectl safety drain "$node" --dry-run --ignore-daemonsets "${context[@]}" "$@"
    rc=$?
    if [ "$rc" -eq 3 ]; then
        echo "== $node: blocked; stopping (nothing evicted on $node or later nodes)" >&2
        exit 3
    elif [ "$rc" -ne 0 ]; then
        exit "$rc"
    fi

    echo "== $node: draining" >&2
    kubectl safety drain "$node" --ignore-daemonsets --timeout "$timeout" --yes "${context[@]}" "$@"
    rc=$?
    case $rc in
        0) echo "== $node: drained" >&2 ;;
        3) echo "== $node: refused (the cluster changed since the plan); stopping" >&2; exit 3 ;;
        4) echo "== $node: partially drained (stays cordoned); run again to resume" >&2; exit 4 ;;
        *) exit "$rc" ;;
    esac
    sleep "$pause"
done
echo "all nodes matching $selector drained (still cordoned)" >&2
