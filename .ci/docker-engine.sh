#!/usr/bin/env bash
# Starts a Docker engine for the end-to-end tests unless one already answers: Debian's dockerd with the settings of
# shared/guides/offline-docker.md (vfs storage, no bridge, no iptables: every container uses host networking).
# Prints the PID of the dockerd it started, nothing if one was running already. Needs root and docker.io.
set -euo pipefail

if docker info >/dev/null 2>&1; then
  echo "docker engine: already running" >&2
  exit 0
fi
log="${READYGATE_DOCKERD_LOG:-/var/log/dockerd.log}"
# A dockerd that was killed (kill -9, a machine stopped) leaves its pid file behind, and a new one refuses to start
# ("pid file found"). Remove it when no process of that pid is a dockerd.
pidfile=/var/run/docker.pid
if [ -f "$pidfile" ]; then
  old="$(cat "$pidfile" 2>/dev/null || true)"
  if [ -z "$old" ] || ! grep -qs dockerd "/proc/$old/comm"; then
    echo "docker engine: removing the stale $pidfile (pid ${old:-none} is no dockerd)" >&2
    rm -f "$pidfile"
  fi
fi
dockerd --storage-driver=vfs --bridge=none --iptables=false --ip6tables=false >"$log" 2>&1 &
pid=$!
for _ in $(seq 1 120); do
  if docker info >/dev/null 2>&1; then
    echo "docker engine: dockerd started (pid $pid, log $log)" >&2
    echo "$pid"
    exit 0
  fi
  if ! kill -0 "$pid" 2>/dev/null; then
    break
  fi
  sleep 0.5
done
echo "docker engine: dockerd did not come up; last lines of $log:" >&2
tail -30 "$log" >&2
exit 1
