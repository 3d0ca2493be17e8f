#!/usr/bin/env bash
# The engine container's entrypoint (readygate chart). It copies vLLM's output to $READYGATE_ENGINE_LOG, on a volume
# that readygate reads (restart paths, logged durations), and runs vLLM the way the release's mode says:
#   plain     vllm serve ARGS
#   preload   vllm preload MODEL PRELOAD_ARGS in the background, then vllm serve ARGS in a restart loop, as vLLM's
#             preload docs advise for Kubernetes: an engine crash restarts the engine, not the container, and the
#             daemon's cache survives it; the container ends when the daemon does
#   snapshot  vllm snapshot restore $READYGATE_SNAPSHOT_DIR; the restored server runs detached, and this script lives
#             as long as it does
# When $READYGATE_CONTAINER_FILE is set, the container writes a new start id there as it starts
# ({"container_start": "<id>", "started_at": "<time>"}): readygate tells an engine restarted in this container (the
# preload restart loop) from a restarted container by it.
# Arguments: the `vllm serve` arguments (the model first), then `::preload::` and the `vllm preload` arguments.
# No VLLM_* variable is set here: a snapshot's identity includes every VLLM_/CUDA_/NCCL_/TORCH_/TRITON_ variable.
set -uo pipefail

mode=${READYGATE_MODE:?}
engine_log=${READYGATE_ENGINE_LOG:?}
log_max_bytes=${READYGATE_LOG_MAX_BYTES:-52428800}

serve_args=()
preload_args=()
target=serve
for arg in "$@"; do
  if [[ $target == serve && $arg == "::preload::" ]]; then
    target=preload
  elif [[ $target == serve ]]; then
    serve_args+=("$arg")
  else
    preload_args+=("$arg")
  fi
done

say() { printf '%s readygate-entrypoint: %s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$*"; }

# This container's start id, written (atomically) before anything starts.
container_file=${READYGATE_CONTAINER_FILE:-}
if [[ -n $container_file ]]; then
  container_id=$(cat /proc/sys/kernel/random/uuid)
  printf '{"container_start": "%s", "started_at": "%s"}\n' "$container_id" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
    >"$container_file.tmp" && mv -f "$container_file.tmp" "$container_file"
fi

# Copies standard input to standard output and to file $1, renamed to $1.1 once it outgrows $2 bytes.
copy_to() {
  local file=$1 max=$2 lines=0 line
  while IFS= read -r line || [[ -n $line ]]; do
    printf '%s\n' "$line"
    printf '%s\n' "$line" >>"$file"
    if ((++lines % 200 == 0)) && (($(stat -c %s "$file" 2>/dev/null || echo 0) > max)); then
      mv -f "$file" "$file.1"
    fi
  done
}

# Starts "$@" in the background with its output copied to file $1 (rotated at $2 bytes) and to standard output: $started
# is its pid. The copy is this shell's own child, not the command's, so that drain can wait for it.
copiers=()
start_copied() {
  local file=$1 max=$2 out
  shift 2
  exec {out}> >(copy_to "$file" "$max")
  copiers+=("$!")
  "$@" >&"$out" 2>&1 &
  started=$!
  exec {out}>&-
}

# Waits, 5 s at most, for the copies to reach their files: the last lines a command wrote are often why it stopped, and
# this script may end before its copy has read them.
drain() {
  local pid tries=0
  for pid in "${copiers[@]}"; do
    while alive "$pid" && ((tries++ < 100)); do sleep 0.05; done
  done
}

# Whatever this script started in the background (the mirror loop, a wait, the daemon) ends with it, once what the
# commands wrote is in the logs.
trap 'drain; kill $(jobs -p) 2>/dev/null' EXIT

child=""
stopping=""
on_term() {
  stopping=1
  if [[ -n $child ]]; then kill -TERM "$child" 2>/dev/null; fi
}
trap on_term TERM INT

# Waits for $child and sets $status to its exit status; a trapped signal interrupts `wait`, so it waits again while
# the child lives.
wait_child() {
  while :; do
    wait "$child"
    status=$?
    kill -0 "$child" 2>/dev/null || break
  done
}

serve() {
  start_copied "$engine_log" "$log_max_bytes" vllm serve "${serve_args[@]}"
  child=$started
  wait_child
}

run_plain() {
  serve
  exit "$status"
}

# Whether process $1 runs: kill -0 also succeeds on a child that exited and was not reaped yet (a zombie).
alive() {
  local stat
  read -r stat 2>/dev/null <"/proc/$1/stat" || return 1
  stat=${stat##*) }
  [[ ${stat%% *} != Z ]]
}

daemon_serves() {
  python3 -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=1)' \
    "http://127.0.0.1:${READYGATE_DAEMON_HEALTH_PORT:?}/health" >/dev/null 2>&1
}

run_preload() {
  local daemon_log=${READYGATE_DAEMON_LOG:?} daemon
  start_copied "$daemon_log" "$log_max_bytes" vllm preload "${serve_args[0]}" "${preload_args[@]}" \
    --weight-cache-socket-dir "${READYGATE_SOCKET_DIR:?}" \
    --weight-cache-health-port "$READYGATE_DAEMON_HEALTH_PORT"
  daemon=$started
  # The engine starts once the daemon serves: an engine started while the daemon still loads falls back to disk and
  # keeps its own copy of the weights (vLLM's cold-start ordering hazard).
  until daemon_serves; do
    if ! alive "$daemon"; then
      wait "$daemon"
      status=$?
      say "the preload daemon exited with status $status before it served"
      exit "$status"
    fi
    if [[ -n $stopping ]]; then
      kill -TERM "$daemon"
      wait "$daemon"
      exit 0
    fi
    sleep 1
  done
  while [[ -z $stopping ]]; do
    serve
    [[ -n $stopping ]] && break
    if ! alive "$daemon"; then
      say "the preload daemon is gone: ending the container so that both start again"
      exit 1
    fi
    say "the engine exited with status $status; starting it again in ${READYGATE_RESTART_DELAY_SECONDS:-5}s"
    sleep "${READYGATE_RESTART_DELAY_SECONDS:-5}" &
    child=$!
    wait_child
  done
  # The engine is stopped first: in zero_copy mode its weights are the daemon's memory.
  child=$daemon
  kill -TERM "$daemon" 2>/dev/null
  wait_child
  exit 0
}

# readygate runs as another user and cannot read the snapshot directory (0700, its files 0600): the files it reads
# are copied, with their times, to a directory it can read.
mirror_snapshot() {
  local dir=${READYGATE_SNAPSHOT_DIR:?} view=${READYGATE_SNAPSHOT_VIEW:?} file
  for file in manifest.json release.json; do
    if [[ -f $dir/$file && ( ! -f $view/$file || $dir/$file -nt $view/$file ) ]]; then
      cp -p "$dir/$file" "$view/.$file" && chmod 0644 "$view/.$file" && mv -f "$view/.$file" "$view/$file"
    fi
  done
}

run_snapshot() {
  local dir=${READYGATE_SNAPSHOT_DIR:?} mirror restored
  (while :; do mirror_snapshot; sleep 0.5; done) &
  mirror=$!
  start_copied "$engine_log" "$log_max_bytes" \
    vllm snapshot restore "$dir" --host 0.0.0.0 --port "${READYGATE_ENGINE_PORT:?}"
  child=$started
  wait_child
  if ((status != 0)); then
    kill "$mirror" 2>/dev/null
    if [[ -n $stopping ]]; then exit 0; fi
    if [[ ${READYGATE_SNAPSHOT_FALLBACK:-false} == true ]]; then
      say "snapshot restore failed (status $status): starting the engine with vllm serve"
      run_plain
    fi
    say "snapshot restore failed (status $status)"
    exit "$status"
  fi
  restored=$(cat "$dir/restored.pid" 2>/dev/null)
  if [[ -z $restored ]]; then
    say "snapshot restore succeeded but left no restored.pid"
    exit 1
  fi
  say "restored server runs as pid $restored"
  child=$restored
  while [[ -z $stopping ]] && alive "$restored"; do
    sleep 2 &
    wait $! 2>/dev/null
  done
  if [[ -n $stopping ]]; then
    while alive "$restored"; do sleep 0.2; done
    exit 0
  fi
  say "the restored server exited"
  exit 1
}

case $mode in
  plain) run_plain ;;
  preload) run_preload ;;
  snapshot) run_snapshot ;;
  *)
    say "unknown mode: $mode"
    exit 2
    ;;
esac
