#!/usr/bin/env bash
# Installs wasm-bindgen-cli at Cargo.lock's version (the bundles' wasm-bindgen must match it)
# unless it is there already. `.ci/setup` runs it; `.ci/start` runs it beside the build and
# `.ci/build` waits for it only where a bundle needs it (CLUES_WBG_DONE names the file that
# holds its exit status once it ends).
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$ROOT"
WBG_VERSION="$(grep -A1 '^name = "wasm-bindgen"$' Cargo.lock | sed -n 's/^version = "\(.*\)"/\1/p')"
log "wasm-bindgen-cli $WBG_VERSION"
if [ "$(wasm-bindgen --version 2>/dev/null | awk '{print $2}')" != "$WBG_VERSION" ]; then
  # A target directory of its own: the builds beside it never wait on its lock.
  cargo install wasm-bindgen-cli --version "$WBG_VERSION" --target-dir "$CARGO_TARGET_DIR/wasm-bindgen-cli"
fi
