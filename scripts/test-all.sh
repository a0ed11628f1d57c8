#!/usr/bin/env bash
# The whole suite after setup: the static checks (`npm run check`: tsc, eslint,
# prettier, about 100 CPU-s) run beside vitest rather than before it, where they
# added their whole minute or two to the suite's wall time. They run niced: the
# suite is CPU-bound on 2 cores, and its first files (Chromium conversations,
# meetings) wait on real-time audio that a compiler at equal weight beside them
# delays; the checks fit anywhere in the suite's minutes. The exit code fails if
# either fails; the checks' output is printed after vitest's, whole.
set -uo pipefail
cd "$(dirname "$0")/.."

check_log="$(mktemp -t talkgate-check.XXXXXX)"
trap 'rm -f "$check_log"' EXIT
started=$SECONDS
( nice -n 10 npm run --silent check >"$check_log" 2>&1 ) &
check_pid=$!

npx vitest run "$@"
vitest_rc=$?

wait "$check_pid"
check_rc=$?
if [ "$check_rc" -ne 0 ]; then
  printf '\nstatic checks (npm run check) FAILED:\n'
  cat "$check_log"
else
  printf 'static checks (tsc, eslint, prettier): passed\n'
fi
printf 'suite wall time: %d s\n' "$((SECONDS - started))"
[ "$vitest_rc" -eq 0 ] && [ "$check_rc" -eq 0 ]
