#!/usr/bin/env bash
# The whole suite after setup: the static checks (`npm run check`: tsc, eslint,
# prettier) run beside vitest rather than before it. They take one core for two
# to three minutes, while vitest's first files (the longest, mostly waiting on
# real-time audio, Chromium and child processes) leave CPU idle; run one after
# the other they added their whole time to the suite's. The exit code fails if
# either fails; the checks' output is printed after vitest's, whole.
set -uo pipefail
cd "$(dirname "$0")/.."

check_log="$(mktemp -t talkgate-check.XXXXXX)"
trap 'rm -f "$check_log"' EXIT
started=$SECONDS
( npm run --silent check >"$check_log" 2>&1 ) &
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
