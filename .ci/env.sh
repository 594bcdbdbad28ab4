# Shared settings for the .ci scripts (sourced, not run).
# Build outputs live outside the clone by default so CI and fresh clones reuse them.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/clues-lab/target}"
# The browser bundle's name; set for every build so the leptos crate is never rebuilt over it.
export LEPTOS_OUTPUT_NAME=clues-lab
export PATH="$HOME/.cargo/bin:$PATH"
# The toolchain rust-toolchain.toml pins. These machines carry one toolchain, installed as
# `stable`, and cannot download another: when that one is the pinned version, rustup is told
# its name (a link, as `rustup toolchain link` makes); when it is not, the build says so and
# uses stable rather than trying a download that cannot succeed.
pin_toolchain() {
  local want home host stable
  want="$(sed -n 's/^channel = "\(.*\)"/\1/p' "$ROOT/rust-toolchain.toml")"
  home="${RUSTUP_HOME:-$HOME/.rustup}"
  host="$(rustc +stable -vV 2>/dev/null | sed -n 's/^host: //p')" || return 0
  [ -e "$home/toolchains/$want-$host" ] && return 0
  stable="$(rustc +stable --version 2>/dev/null | cut -d' ' -f2)"
  if [ "$stable" = "$want" ]; then
    ln -s "$home/toolchains/stable-$host" "$home/toolchains/$want-$host"
  else
    echo "warning: rust-toolchain.toml pins $want but this machine has $stable; building with stable" >&2
    export RUSTUP_TOOLCHAIN=stable
  fi
}
pin_toolchain
# One site folder per profile, so the tests' debug build never replaces the release site.
site_dir() { printf '%s/site-%s' "$CARGO_TARGET_DIR" "$1"; }
# The model track's Python environment (ONNX Runtime, the MiniLM encoder; made by .ci/setup).
# The binary finds libonnxruntime.so and the encoder there unless ORT_DYLIB_PATH /
# CLUES_ENCODER_ONNX / CLUES_ENCODER_TOKENIZER say otherwise.
export CLUES_VENV="${CLUES_VENV:-$HOME/.cache/clues-lab/venv}"
log() { printf '\n== %s [%s]\n' "$*" "$(date +%H:%M:%S)"; }
# A throwaway PostgreSQL cluster in directory $1 (created; trust authentication, role `clues`,
# no fsync: test data only), on a free local port; prints its server URL. As root, the server
# runs as the `postgres` user, which refuses to run as root. `pg_stop DIR` ends it.
pg_bin() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1; }
pg_start() {
  local dir="$1" bin port as=()
  bin="$(pg_bin)"
  port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
  mkdir -p "$dir"
  if [ "$(id -u)" = 0 ]; then chown postgres "$dir"; as=(runuser -u postgres --); fi
  "${as[@]}" "$bin/initdb" -D "$dir/data" -A trust -U clues --no-sync >"$dir/initdb.log" 2>&1
  "${as[@]}" "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w start -o \
    "-p $port -k $dir -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c max_connections=300" >/dev/null
  printf 'postgres://clues@127.0.0.1:%s' "$port"
}
pg_stop() {
  local as=()
  [ "$(id -u)" = 0 ] && as=(runuser -u postgres --)
  "${as[@]}" "$(pg_bin)/pg_ctl" -D "$1/data" -m immediate stop >/dev/null 2>&1 || true
  rm -rf "$1"
}
