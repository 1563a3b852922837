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

log() { echo "prometheus/build.sh: $*" >&2; }
die() { log "error: $*"; exit 1; }

# build MODULE_DIR NAME PACKAGE LDFLAGS [TAGS]
build() {
	local dir=$1 name=$2 pkg=$3 ldflags=$4 tags=${5:-} start
	if [[ -x $BIN/$name ]]; then
		log "up to date: $name"
		return
	fi
	log "building $name from $pkg ..."
	start=$SECONDS
	(cd "$dir" && go build -trimpath -tags "$tags" -ldflags "-s -w $ldflags" -o "$BIN/.$name.tmp" "$pkg") ||
		die "go build failed for $name (see the go output above)"
	mv "$BIN/.$name.tmp" "$BIN/$name"
	log "built $name in $((SECONDS - start))s"
}

command -v go >/dev/null || die "go not found on PATH (need Go >= 1.26.7)"
grep -q "github.com/prometheus/prometheus $PROMETHEUS_VERSION" "$HERE/go.mod" || die "go.mod does not pin prometheus $PROMETHEUS_VERSION"
grep -q "github.com/prometheus/pushgateway $PUSHGATEWAY_VERSION" "$HERE/pushgateway/go.mod" || die "pushgateway/go.mod does not pin pushgateway $PUSHGATEWAY_VERSION"
mkdir -p "$BIN"

VERSION=github.com/prometheus/common/version
build "$HERE/pushgateway" pushgateway github.com/prometheus/pushgateway "-X $VERSION.Version=${PUSHGATEWAY_VERSION#v}"
# remove_all_sd: no service discovery (tests scrape static targets), a third fewer packages.
build "$HERE" prometheus github.com/prometheus/prometheus/cmd/prometheus "-X $VERSION.Version=3.16.0" remove_all_sd

echo "$BIN"
