#!/usr/bin/env bash
# In-context learning throughput: `clues-lab icl --concurrency N` for N = 1, 2, 4, 8 on a
# 64-item SST-2-shaped task (k = 10 shots of short reviews), against
#   1. a scripted completions server that answers each call after a fixed delay (DELAY_MS,
#      default 100) on a thread of its own: the client's ceiling, N / delay;
#   2. llama-cpp-python's server (the set-up's Python environment) on the tiny random llama
#      GGUF the tests write (server/tests/common/tiny_gguf.py);
#   3. where LLAMA_SERVER names llama.cpp's own `llama-server` binary, that server with
#      `--parallel 8` slots on the same GGUF.
# Prints items per second per server and N (the median of three rounds). Usage: bash server/bench/icl.sh; PROFILE=debug
# uses the debug build (the client's share of the time is small either way).
source "$(dirname "${BASH_SOURCE[0]}")/../../.ci/env.sh"
cd "$ROOT"
PROFILE="${PROFILE:-release}"; DELAY_MS="${DELAY_MS:-100}"
source "$ROOT/server/bench/common.sh"
BIN="$(bench_binary)"
WORK="$(mktemp -d)"; PIDS=()
trap 'for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done; rm -rf "$WORK"' EXIT
DB="sqlite://$WORK/icl.db"
sst_task "$WORK/data" 12 500 564
"$BIN" --database "$DB" import clues "$WORK/data" >/dev/null
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
wait_up() { until curl -sf "$1/models" >/dev/null 2>&1; do sleep 0.3; done; }
# Three icl runs per N (alternating over N), each under a system of its own; prints the
# median items per second and the three.
measure() {
  local name="$1" endpoint="$2" round n t0 t1
  declare -A secs=()
  for round in 1 2 3; do
    for n in 1 2 4 8; do
      t0="$(date +%s.%N)"
      "$BIN" --database "$DB" icl --endpoint "$endpoint" --model tiny --task SST-2 --k 10 --split 1 \
        --max-tokens 8 --concurrency "$n" --system "$name c$n r$round" >/dev/null 2>"$WORK/icl.err" \
        || { cat "$WORK/icl.err" >&2; exit 1; }
      t1="$(date +%s.%N)"
      secs[$n]+="$(python3 -c "print($t1 - $t0)") "
    done
  done
  for n in 1 2 4 8; do
    python3 -c "
import statistics, sys
s = [float(x) for x in sys.argv[1].split()]
print(f'$name\tconcurrency $n\t{64 / statistics.median(s):.1f} items/s (median of 3; ' + ', '.join(f'{64 / x:.1f}' for x in s) + ')')
" "${secs[$n]}"
  done
}

PORT="$(free_port)"
python3 - "$PORT" "$DELAY_MS" <<'PY' &
import json, sys, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
delay = int(sys.argv[2]) / 1000
class H(BaseHTTPRequestHandler):
    def log_message(self, *a): pass
    def reply(self, body):
        data = json.dumps(body).encode()
        self.send_response(200); self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data))); self.end_headers(); self.wfile.write(data)
    def do_GET(self): self.reply({"data": [{"id": "tiny"}]})
    def do_POST(self):
        self.rfile.read(int(self.headers["content-length"]))
        time.sleep(delay)
        self.reply({"choices": [{"text": " positive"}]})
# A backlog for every call in flight (socketserver's default of 5 drops the rest for a second).
ThreadingHTTPServer.request_queue_size = 64
ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
PY
PIDS+=($!)
wait_up "http://127.0.0.1:$PORT/v1"
echo "== scripted server, $DELAY_MS ms a call"
measure "scripted ${DELAY_MS}ms" "http://127.0.0.1:$PORT/v1"

PY_VENV="$CLUES_VENV/bin/python"
if "$PY_VENV" -c "import llama_cpp.server, gguf" 2>/dev/null; then
  "$PY_VENV" server/tests/common/tiny_gguf.py "$WORK/tiny.gguf"
  PORT="$(free_port)"
  "$PY_VENV" -m llama_cpp.server --model "$WORK/tiny.gguf" --port "$PORT" --n_ctx 4096 \
    --model_alias tiny >/dev/null 2>"$WORK/llama.log" &
  PIDS+=($!)
  wait_up "http://127.0.0.1:$PORT/v1"
  echo "== llama-cpp-python's server (no parallel slots), tiny random llama"
  measure "llama-cpp-python" "http://127.0.0.1:$PORT/v1"
  if [ -n "${LLAMA_SERVER:-}" ]; then
    PORT="$(free_port)"
    "$LLAMA_SERVER" -m "$WORK/tiny.gguf" --port "$PORT" --parallel 8 -c 32768 --alias tiny \
      >/dev/null 2>"$WORK/llama-server.log" &
    PIDS+=($!)
    wait_up "http://127.0.0.1:$PORT/v1"
    echo "== llama.cpp's llama-server --parallel 8, tiny random llama"
    measure "llama-server" "http://127.0.0.1:$PORT/v1"
  else
    echo "(LLAMA_SERVER unset: llama.cpp's own server with parallel slots not measured)"
  fi
else
  echo "SKIPPED the llama.cpp servers: no llama-cpp-python and gguf in $CLUES_VENV (bash .ci/setup)"
fi
