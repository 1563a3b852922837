#!/usr/bin/env bash
# The build scripts/test-all runs beside the tests, in stages (controlplane.cluster.BUILD_STAGES): the control
# plane, then (niced: they yield the CPU to the integration tests beside them) the engines' oracles, then
# Prometheus and the Pushgateway. Each stage's exit code goes to $KUBECTL_SAFETY_BUILD_STATUS.STAGE when it ends,
# the chain's to $KUBECTL_SAFETY_BUILD_STATUS when it ends (a failed stage ends it); every output to
# $KUBECTL_SAFETY_BUILD_LOG; "start EPOCH", then "STAGE EPOCH EXIT" per stage, to $KUBECTL_SAFETY_BUILD_STATUS.times
# (controlplane/buildlog.py reads them back).
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
STATUS=$KUBECTL_SAFETY_BUILD_STATUS

# put FILE TEXT: write a status file at once (tests poll for it)
put() { echo "$2" >"$1.tmp" && mv "$1.tmp" "$1"; }

# stage NAME COMMAND...: one build stage
stage() {
	local name=$1 rc=0
	shift
	"$@" >>"$KUBECTL_SAFETY_BUILD_LOG" 2>&1 || rc=$?
	echo "$name $(date +%s) $rc" >>"$STATUS.times"
	put "$STATUS.$name" "$rc"
	return "$rc"
}

echo "start $(date +%s)" >"$STATUS.times"
rc=0
stage controlplane bash "$HERE/build.sh" &&
	stage engines nice -n 10 bash "$HERE/build.sh" --engines &&
	stage prometheus nice -n 10 bash "$HERE/prometheus/build.sh" || rc=$?
put "$STATUS" "$rc"
exit "$rc"
