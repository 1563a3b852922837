#!/usr/bin/env bash
# Build Prometheus and the Pushgateway (tests only) into a cache named after their versions; a binary
# already there is kept. Each has its own module (this directory, pushgateway/): in one build list the
# Pushgateway gets Prometheus's newer prometheus/common and panics on every push. Prints the bin dir on
# its last line (stdout).
#
#   KUBECTL_SAFETY_CACHE  cache root (default: ~/.cache/kubectl-safety)
set -euo pipefail

PROMETHEUS_VERSION=v0.316.0 # Prometheus 3.16.0
PUSHGATEWAY_VERSION=v1.11.1

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CACHE=${KUBECTL_SAFETY_CACHE:-$HOME/.cache/kubectl-safety}
BIN=$CACHE/prometheus-${PROMETHEUS_VERSION}_pushgateway-${PUSHGATEWAY_VERSION}/bin

export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS="${GOFLAGS:-} -mod=readonly -buildvcs=false"

LOG_NAME=prometheus/build.sh
# shellcheck source=controlplane/lib.sh
. "$HERE/../lib.sh"

command -v go >/dev/null || die "go not found on PATH (need Go >= 1.26.7)"
grep -q "github.com/prometheus/prometheus $PROMETHEUS_VERSION" "$HERE/go.mod" || die "go.mod does not pin prometheus $PROMETHEUS_VERSION"
grep -q "github.com/prometheus/pushgateway $PUSHGATEWAY_VERSION" "$HERE/pushgateway/go.mod" || die "pushgateway/go.mod does not pin pushgateway $PUSHGATEWAY_VERSION"
mkdir -p "$BIN"

VERSION=github.com/prometheus/common/version
build "$HERE/pushgateway" "-X $VERSION.Version=${PUSHGATEWAY_VERSION#v}" pushgateway=github.com/prometheus/pushgateway
# remove_all_sd: no service discovery (tests scrape static targets), a third fewer packages.
TAGS=remove_all_sd build "$HERE" "-X $VERSION.Version=3.16.0" prometheus=github.com/prometheus/prometheus/cmd/prometheus

echo "$BIN"
