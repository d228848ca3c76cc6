#!/bin/sh
# Entry point of the gitpub worker image (Containerfile beside it): clone the blog into a
# fresh folder and run the worker there. The clone holds nothing the fleet needs, and goes
# with the container: every job lives in the shared store (docs/fleet.md).
#
#   GITPUB_REMOTE    the blog's clone URL, written the same way on every node (required)
#   GITPUB_STORE     the shared store's URL, unless the user config has `[store] url`
#   GITPUB_INTERVAL  seconds between the worker's passes (default 30)
#
# Arguments replace `--interval $GITPUB_INTERVAL`: `--until-idle` drains the queue and exits.
set -eu

if [ -z "${GITPUB_REMOTE:-}" ]; then
    echo "gitpub-worker: GITPUB_REMOTE is not set (the blog's clone URL, alike on every node)" >&2
    exit 1
fi
# On its own embedded store a throwaway clone would see no job, ever: refuse to idle there.
config="${XDG_CONFIG_HOME:-$HOME/.config}/gitpub/config.toml"
if [ -z "${GITPUB_STORE:-}" ] && ! grep -qs '^[[:space:]]*\[store\]' "$config"; then
    echo "gitpub-worker: no shared store: set GITPUB_STORE, or [store] url in $config" >&2
    exit 1
fi

clone=$(mktemp -d "${TMPDIR:-/tmp}/gitpub-worker.XXXXXX")
git clone --quiet -- "$GITPUB_REMOTE" "$clone"
cd "$clone"
if [ "$#" -eq 0 ]; then
    set -- --interval "${GITPUB_INTERVAL:-30}"
fi
exec git blogpub run "$@"
