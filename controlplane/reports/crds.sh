#!/usr/bin/env bash
# Copy the report CRDs (OpenReports, wgpolicyk8s.io PolicyReport) from the modules pinned in go.mod into a
# versioned cache directory; prints that directory on its last line (stdout). Idempotent.
#
#   KUBECTL_SAFETY_CACHE  cache root (default: ~/.cache/kubectl-safety)
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CACHE=${KUBECTL_SAFETY_CACHE:-$HOME/.cache/kubectl-safety}
pinned() { awk -v m="$1" '$1 == m { print $2 }' "$HERE/go.mod"; }
REPORTS=$(pinned github.com/openreports/reports-api)
KYVERNO=$(pinned github.com/kyverno/kyverno)
OUT=$CACHE/report-crds_reports-api-${REPORTS}_kyverno-${KYVERNO}

if [[ ! -f $OUT/.complete ]]; then
	mkdir -p "$OUT"
	export GOTOOLCHAIN=local GOFLAGS=-mod=mod
	dir() { (cd "$HERE" && go mod download -json "$1@$2") | awk -F'"' '$2 == "Dir" { print $4 }'; }
	src=$(dir github.com/openreports/reports-api "$REPORTS")
	cp "$src"/config/crd/openreports.io_reports.yaml "$src"/config/crd/openreports.io_clusterreports.yaml "$OUT/"
	src=$(dir github.com/kyverno/kyverno "$KYVERNO")
	cp "$src"/config/crds/policyreport/wgpolicyk8s.io_policyreports.yaml \
		"$src"/config/crds/policyreport/wgpolicyk8s.io_clusterpolicyreports.yaml "$OUT/"
	chmod 644 "$OUT"/*.yaml
	touch "$OUT/.complete"
fi
echo "$OUT"
