# Sourced by controlplane/build.sh and controlplane/prometheus/build.sh: logging and the one build step.
# The sourcing script sets LOG_NAME (its log lines' prefix) and BIN (where binaries go) first.

CONTROLPLANE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

log() { echo "$LOG_NAME: $*" >&2; }
die() { log "error: $*"; exit 1; }

# build MODULE_DIR LDFLAGS NAME=PACKAGE... : build the NAMEs missing from $BIN from the wrapper module in
# MODULE_DIR (build tags from $TAGS). Logs "built NAME in Ns" or "up to date: NAME" for each
# (controlplane/buildlog.py reads them back).
build() {
	local dir=$1 ldflags=$2 spec name pkg start module; shift 2
	module=controlplane/${dir#"$CONTROLPLANE"/}
	for spec in "$@"; do
		name=${spec%%=*} pkg=${spec#*=}
		if [[ -x $BIN/$name ]]; then
			log "up to date: $name"
			continue
		fi
		log "building $name from $pkg (module $module) ..."
		start=$SECONDS
		(cd "$dir" && go build -trimpath -tags "${TAGS:-}" -ldflags "-s -w $ldflags" -o "$BIN/.$name.tmp" "$pkg") ||
			die "go build failed for $name (module $module; see the go output above)"
		mv "$BIN/.$name.tmp" "$BIN/$name"
		log "built $name in $((SECONDS - start))s"
	done
}
