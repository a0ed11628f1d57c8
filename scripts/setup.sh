#!/usr/bin/env bash
# Installs what talkgate needs beyond Node: Debian packages (speech engines,
# test recordings, ffmpeg/sox, Chromium for meeting bots, Redis), the npm
# dependencies, and a running Redis for the test suite. Idempotent and quiet
# when everything is already there, so `npm start` and `npm test` can call it.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf 'setup: %s\n' "$*"; }

# --- Debian packages ---------------------------------------------------------
DEB_PACKAGES=(espeak-ng pocketsphinx pocketsphinx-en-us pocketsphinx-testdata python3-pocketsphinx ffmpeg sox chromium xvfb xauth redis-server libspeexdsp-dev libwebrtc-audio-processing-dev)
missing=()
for pkg in "${DEB_PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$pkg")
  fi
done
if [ ${#missing[@]} -gt 0 ]; then
  say "installing Debian packages: ${missing[*]}"
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
      say "not root and no sudo: install these packages, then run again: ${missing[*]}" >&2
      exit 1
    fi
  fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  say "Debian packages installed"
fi

# --- npm dependencies ----------------------------------------------------------
# npm ci when node_modules is missing or older than the lockfile, or when the
# Opus binding does not load (an install run with --ignore-scripts or cut short
# leaves node_modules looking current, and the meeting bot tests then time
# out; found so, 2026-11-24). npm ci runs no install script here; the two that
# package.json's allowScripts approves for npm 11 run after it: esbuild's, and
# @discordjs/opus's build of libopus from source with node-gyp (its download of
# a prebuilt binary cannot work here). onnxruntime-node's (the Silero VAD's
# runtime) is refused there and not run: it would fetch CUDA libraries from
# outside the npm registry, and the CPU build we use is inside its npm tarball.
# The Opus build is most of npm ci's time (53 of 85 s on a 2-core EPYC), so its
# result is kept per machine, keyed by the package's version and the Node ABI,
# under $TALKGATE_BUILD_CACHE (default ~/.cache/talkgate): a second clone or
# worktree, and each CI run after the first, restores it instead of compiling
# libopus again. The restored binding must load, or it is built afresh.
OPUS_DIR=node_modules/@discordjs/opus
opus_loads() { node -e 'require("@discordjs/opus")' >/dev/null 2>&1; }
opus_cache() {
  local version abi
  version="$(node -p 'require("./node_modules/@discordjs/opus/package.json").version')"
  abi="$(node -p 'process.versions.modules + "-" + process.platform + "-" + process.arch')"
  printf '%s/opus-%s-node%s.tar' "${TALKGATE_BUILD_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/talkgate}" "$version" "$abi"
}
if [ ! -d node_modules ] || [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ] ||
  ! opus_loads; then
  say "installing npm dependencies (npm ci)"
  # --prefer-offline: a package already in npm's cache is taken from it without asking the registry whether it
  # changed (the lockfile pins each by integrity); one missing is fetched as before. 37 -> 30 s with a warm cache.
  PUPPETEER_SKIP_DOWNLOAD=1 npm ci --ignore-scripts --no-audit --no-fund --loglevel=error --prefer-offline
  # The install scripts allowScripts approves, but Opus's: esbuild's checks its binary.
  npm rebuild esbuild --loglevel=error >/dev/null
  cache="$(opus_cache)"
  if [ -f "$cache" ] && tar -xf "$cache" -C "$OPUS_DIR" 2>/dev/null && opus_loads; then
    say "the Opus binding restored from $cache"
  else
    say "building the Opus binding (libopus from source, about half a minute; kept in $cache)"
    rm -rf "$OPUS_DIR/prebuild"
    # node-gyp compiles libopus's ~200 files one at a time unless JOBS says otherwise: on 2 cores, 50 -> 36 s.
    JOBS="${JOBS:-max}" npm rebuild @discordjs/opus --loglevel=error >/dev/null
    opus_loads || { say "the Opus binding does not load after its build" >&2; exit 1; }
    mkdir -p "$(dirname "$cache")" && tar -cf "$cache.$$" -C "$OPUS_DIR" prebuild && mv "$cache.$$" "$cache" ||
      say "could not keep the Opus binding in $cache (it is built; the next setup builds it again)"
  fi
  say "npm dependencies installed"
fi

# --- the project's own native bindings (node-gyp, against the machine's Node headers) --
# native/speexdsp: the echo canceller (Debian's libspeexdsp). native/malloc-trim: glibc's malloc_trim, which
# gives the memory freed after a burst of calls back to the kernel (src/ops/native-memory.ts). native/webrtc-aec:
# WebRTC's echo canceller (Debian's webrtc-audio-processing), the echo benches' peer; the server never loads it.
# Built with the node-gyp that ships inside npm; rebuilt when a source is newer than the addon.
build_addon() { # dir, name of the .node, what it is
  local dir="$1" addon="$1/build/Release/$2.node" what="$3"
  local stale=0 source
  [ -f "$addon" ] || stale=1
  for source in "$dir"/*.c "$dir"/*.cc "$dir/binding.gyp"; do [ -f "$source" ] && [ "$source" -nt "$addon" ] && stale=1; done
  [ "$stale" = 1 ] || return 0
  say "building $what ($dir)"
  local NODE_GYP
  NODE_GYP="$(npm root -g)/npm/node_modules/node-gyp/bin/node-gyp.js"
  if [ ! -f "$NODE_GYP" ]; then say "node-gyp not found at $NODE_GYP (it ships inside npm)" >&2; exit 1; fi
  local NODEDIR_ARG=()
  for prefix in /usr /usr/local; do
    if [ -f "$prefix/include/node/node_api.h" ]; then NODEDIR_ARG=(--nodedir="$prefix"); break; fi
  done
  (cd "$dir" && node "$NODE_GYP" rebuild "${NODEDIR_ARG[@]}" --loglevel=error >/dev/null)
  say "$what built"
}
build_addon native/speexdsp speexdsp "the echo canceller binding"
build_addon native/malloc-trim malloc_trim "the malloc_trim binding"
build_addon native/webrtc-aec webrtc_aec "the echo benches' peer, WebRTC's echo canceller"

# --- Redis (for the cluster tests; the server itself runs without it) ----------
if ! redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1; then
  say "no Redis answers on 127.0.0.1:6379: starting one (no persistence)"
  mkdir -p /tmp/talkgate-redis
  redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no \
    --dir /tmp/talkgate-redis --logfile /tmp/talkgate-redis/redis.log
  for _ in $(seq 1 50); do
    redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1 && break
    sleep 0.1
  done
  redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1 || { say "Redis did not start; see /tmp/talkgate-redis/redis.log" >&2; exit 1; }
fi
