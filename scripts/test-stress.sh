#!/usr/bin/env bash
# Run test files again and again while every core is kept busy, to bring out races that load exposes
# (issue 37). Usage: npm run test:stress -- [--runs N] FILE... (FILE: a test's source path, test/x/y.test.ts, or
# its compiled dist/test/x/y.test.js). Builds first (npm run test:stress does), then runs each file N times
# (default 20) in a row under `stress-ng --cpu NPROC` (Debian's stress-ng; a busy loop per core where it is
# missing). Stops at the first failing run and prints its output; exits 0 only when every run passed.
set -euo pipefail
cd "$(dirname "$0")/.."

runs=20
files=()
while (($#)); do
  case "$1" in
  --runs)
    runs="${2:?--runs needs a number}"
    shift 2
    ;;
  --runs=*)
    runs="${1#--runs=}"
    shift
    ;;
  -h | --help)
    sed -n '2,6p' "$0" | sed 's/^# \{0,1\}//'
    exit 0
    ;;
  *)
    files+=("$1")
    shift
    ;;
  esac
done
if ! [[ "$runs" =~ ^[1-9][0-9]{0,3}$ ]]; then
  echo "test-stress: --runs '$runs' is not a number from 1 to 9999: give e.g. --runs 20" >&2
  exit 2
fi
if ((${#files[@]} == 0)); then
  echo "test-stress: no test file given: name one, e.g. npm run test:stress -- test/runner/log-segments.test.ts" >&2
  exit 2
fi
compiled=()
for f in "${files[@]}"; do
  js="$f"
  case "$f" in
  test/*.ts) js="dist/${f%.ts}.js" ;;
  esac
  if [[ ! -f "$js" ]]; then
    echo "test-stress: no compiled test '$js' for '$f': give a file under test/ (built by npm run build)" >&2
    exit 2
  fi
  compiled+=("$js")
done

cores=$(nproc)
load_pids=()
stop_load() {
  for pid in "${load_pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${load_pids[@]}"; do wait "$pid" 2>/dev/null || true; done
}
trap stop_load EXIT
if command -v stress-ng >/dev/null; then
  stress-ng --cpu "$cores" --quiet &
  load_pids+=($!)
  load="stress-ng --cpu $cores"
else
  for ((i = 0; i < cores; i++)); do
    node -e 'for (;;);' &
    load_pids+=($!)
  done
  load="$cores busy loops (no stress-ng: apt-get install stress-ng)"
fi

log=$(mktemp)
for js in "${compiled[@]}"; do
  for ((run = 1; run <= runs; run++)); do
    start=$(date +%s)
    if ! node --test --test-concurrency=1 "$js" >"$log" 2>&1; then
      cat "$log"
      echo "test-stress: $js failed on run $run of $runs under $load" >&2
      rm -f "$log"
      exit 1
    fi
    echo "test-stress: $js run $run/$runs passed under $load ($(($(date +%s) - start)) s)"
  done
done
rm -f "$log"
echo "test-stress: ${#compiled[@]} file(s) x $runs runs passed under $load"
