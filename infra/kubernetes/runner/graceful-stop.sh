#!/bin/bash
# graceful-stop.sh: an entrypoint for the official GitHub Actions runner image (actions/runner,
# images/Dockerfile) that lets a busy runner finish its job when its pod is stopped.
#
# Kubernetes stops a pod by sending SIGTERM to each container's first process, then SIGKILL
# terminationGracePeriodSeconds later. The image's own run.sh (RUNNER_MANUALLY_TRAP_SIG=1) turns
# SIGTERM into an immediate SIGINT to the listener and its worker, so a running job fails with "The
# runner has received a shutdown signal". This script runs the runner's start command as its child
# instead, and on SIGTERM (or SIGINT):
#   - no job running (no Runner.Worker process): SIGINT to Runner.Listener, then exit as soon as the
#     listener has exited;
#   - a job running: wait for every Runner.Worker to exit, up to RUNNER_GRACEFUL_STOP_TIMEOUT
#     seconds, checking again and again for the whole wait, so a worker that starts meanwhile is
#     waited for too; then SIGINT to the worker's process group and to the listener, and exit once
#     the listener has exited;
#   - no listener at all (the runner has not started one yet, or it is gone): no job can be running,
#     so stop the start command and exit at once.
# It exits with the runner's own exit status. It never de-registers the runner: with a JIT config
# (what ARC's scale sets use) there is no registration token, and the ephemeral registration ends
# with the listener.
#
# Settings, from the environment:
#   RUNNER_ENTRYPOINT             the runner's start command, run with this script's arguments
#                                 (default /home/runner/run.sh)
#   RUNNER_GRACEFUL_STOP_TIMEOUT  whole seconds to wait for a running job (default 15, as in ARC's
#                                 legacy runner images); keep the pod's terminationGracePeriodSeconds
#                                 above it (README.md in this folder explains the margin)
#   RUNNER_ALIVE_FILE             optional: a file created before the runner starts and removed when
#                                 this script exits, for a dind container's preStop hook to wait on
#                                 (clusters without native sidecars)
#
# Only bash, procps (pgrep) and coreutils (date, sleep, env, rm): all in the runner image. Processes are
# found by exact name among this script's own descendants, read from /proc, so nothing outside the
# runner's process tree is ever signalled. Process ids are kept in arrays and a tool is never called
# with an empty argument (the seed thread's `ps -p` with an empty pid and its unquoted
# `[ -n $listener_process_id ]`, which is always true).

# shellcheck disable=SC2317  # the stop handler and its helpers are reached through `trap`, which shellcheck cannot follow
set -uo pipefail

readonly LISTENER='Runner.Listener'
readonly WORKER='Runner.Worker'
readonly POLL_SECONDS=0.2
# After the last worker exits, watch this long for another before stopping the listener: a listener
# that is handed a job starts its worker a moment later.
readonly SETTLE_MS=1000
# How long the start command gets to exit once the listener has exited, then after a SIGTERM.
readonly ENTRYPOINT_EXIT_MS=2000
readonly HEARTBEAT_MS=30000
readonly DEFAULT_TIMEOUT=15

runner_pid=''
runner_status=''
stopping=0
own_pgid=''
now=0
found=()
stat_name=''
stat_state=''
stat_ppid=''
stat_pgrp=''
declare -A signalled_groups=()
declare -A signalled_listeners=()

log() {
  printf '%s graceful-stop: %s\n' "$(date -u '+%Y-%m-%dT%H:%M:%S.%3NZ')" "$*" >&2
}

# Sets `now` to the current time in milliseconds.
clock() {
  if [[ -n "${EPOCHREALTIME:-}" ]]; then
    local micros="${EPOCHREALTIME//[!0-9]/}"
    now=$((10#$micros / 1000))
  else
    now=$((SECONDS * 1000))
  fi
}

# Reads name, state, parent and process group of pid $1 from /proc; fails when it is gone.
read_stat() {
  local line rest
  { read -r line <"/proc/$1/stat"; } 2>/dev/null || return 1
  # The name (field 2) is in parentheses and may hold spaces and parentheses itself.
  stat_name="${line#*(}"
  stat_name="${stat_name%)*}"
  rest="${line##*) }"
  read -r stat_state stat_ppid stat_pgrp _ <<<"$rest"
}

# Succeeds when pid $1 is named exactly $2, alive (not a zombie) and descends from this script.
is_own_live_process() {
  local pid="$1" name="$2" depth
  read_stat "$pid" || return 1
  [[ "$stat_name" == "$name" && "$stat_state" != 'Z' ]] || return 1
  for ((depth = 0; depth < 64; depth++)); do
    [[ "$stat_ppid" == "$$" ]] && return 0
    [[ "$stat_ppid" -gt 1 ]] || return 1
    read_stat "$stat_ppid" || return 1
  done
  return 1
}

# Fills `found` with the pids of this script's live descendants named exactly $1.
find_processes() {
  local name="$1" pid listing
  local -a candidates=()
  found=()
  # pgrep takes a pattern of at most 15 characters, so the dot is left unescaped and each match
  # is checked by exact name. A command substitution, as a process substitution would change $!.
  listing="$(pgrep -x -- "$name")"
  mapfile -t candidates <<<"$listing"
  for pid in "${candidates[@]}"; do
    if [[ -n "$pid" ]] && is_own_live_process "$pid" "$name"; then
      found+=("$pid")
    fi
  done
}

runner_alive() {
  [[ -n "$runner_pid" ]] && read_stat "$runner_pid" && [[ "$stat_state" != 'Z' ]]
}

# Sends SIGINT to the process group of each pid given (the runner image starts the worker in the
# listener's group, with the job's step processes), or to the process alone when it shares this
# script's group. Records each group signalled in `signalled_groups`.
interrupt_groups_of() {
  local pid
  for pid in "$@"; do
    read_stat "$pid" || continue
    if [[ "$stat_pgrp" -gt 1 && "$stat_pgrp" != "$own_pgid" ]]; then
      if [[ -z "${signalled_groups[$stat_pgrp]:-}" ]]; then
        log "SIGINT to process group $stat_pgrp of $WORKER $pid"
        kill -s INT -- "-$stat_pgrp" 2>/dev/null || log "process group $stat_pgrp had already gone"
        signalled_groups[$stat_pgrp]=1
      fi
    else
      log "SIGINT to $WORKER $pid (it shares this script's process group)"
      kill -s INT -- "$pid" 2>/dev/null || log "$WORKER $pid had already gone"
    fi
  done
}

# Sends SIGINT to each listener given that has not had it yet, by itself or with a worker's
# process group.
interrupt_listeners() {
  local pid
  for pid in "$@"; do
    [[ -z "${signalled_listeners[$pid]:-}" ]] || continue
    signalled_listeners[$pid]=1
    if read_stat "$pid" && [[ -n "${signalled_groups[$stat_pgrp]:-}" ]]; then
      log "$LISTENER $pid already had SIGINT with process group $stat_pgrp"
      continue
    fi
    log "SIGINT to $LISTENER $pid"
    kill -s INT -- "$pid" 2>/dev/null || log "$LISTENER $pid had already gone"
  done
}

# Waits, for as long as it takes, until no listener is left; a listener that appears meanwhile (a
# start command that restarts it) gets SIGINT too. The pod's SIGKILL bounds this wait.
wait_for_listeners_to_exit() {
  local next_heartbeat
  clock
  next_heartbeat=$((now + HEARTBEAT_MS))
  while :; do
    find_processes "$LISTENER"
    ((${#found[@]} > 0)) || break
    interrupt_listeners "${found[@]}"
    clock
    if ((now >= next_heartbeat)); then
      log "still waiting for $LISTENER ${found[*]} to exit"
      next_heartbeat=$((now + HEARTBEAT_MS))
    fi
    sleep "$POLL_SECONDS"
  done
  log "$LISTENER has exited"
}

# Waits up to $1 ms for the start command to exit; fails if it is still running.
wait_for_entrypoint() {
  local until
  clock
  until=$((now + $1))
  while runner_alive; do
    clock
    ((now < until)) || return 1
    sleep "$POLL_SECONDS"
  done
  return 0
}

# Exits with the start command's status, once it has exited.
exit_with_runner_status() {
  if [[ -z "$runner_status" ]]; then
    wait "$runner_pid"
    runner_status=$?
  fi
  log "$RUNNER_ENTRYPOINT exited with status $runner_status; exiting with it"
  exit "$runner_status"
}

# Exits with the start command's status, giving it a moment to exit and a SIGTERM if it lingers.
finish() {
  if ! wait_for_entrypoint "$ENTRYPOINT_EXIT_MS"; then
    log "$RUNNER_ENTRYPOINT ($runner_pid) is still running: SIGTERM to its process group"
    kill -s TERM -- "-$runner_pid" 2>/dev/null || kill -s TERM -- "$runner_pid" 2>/dev/null
    if ! wait_for_entrypoint "$ENTRYPOINT_EXIT_MS"; then
      log "$RUNNER_ENTRYPOINT ($runner_pid) did not exit; exiting with 143 and leaving it to the container's end"
      exit 143
    fi
  fi
  exit_with_runner_status
}

stop_without_listener() {
  log "no $LISTENER process, so no job can be running: stopping $RUNNER_ENTRYPOINT and exiting now"
  if runner_alive; then
    kill -s TERM -- "-$runner_pid" 2>/dev/null || kill -s TERM -- "$runner_pid" 2>/dev/null
    if ! wait_for_entrypoint "$ENTRYPOINT_EXIT_MS"; then
      log "$RUNNER_ENTRYPOINT ($runner_pid) is still running; exiting with 143"
      exit 143
    fi
  fi
  exit_with_runner_status
}

# Waits for running jobs until $1 (ms), $2 seconds after the stop signal; any worker seen during
# the wait counts.
wait_for_workers() {
  local deadline="$1" timeout_s="$2" quiet_since='' next_heartbeat seen=' ' pid
  local -a workers=("${found[@]}")
  clock
  next_heartbeat=$((now + HEARTBEAT_MS))
  log "a job is running ($WORKER ${workers[*]}): waiting up to ${timeout_s}s for it to finish"
  while :; do
    find_processes "$WORKER"
    workers=("${found[@]}")
    clock
    if ((${#workers[@]} > 0)); then
      quiet_since=''
      for pid in "${workers[@]}"; do
        if [[ "$seen" != *" $pid "* ]]; then
          [[ "$seen" == ' ' ]] || log "$WORKER $pid started during the wait: waiting for it too"
          seen+="$pid "
        fi
      done
    else
      if [[ -z "$quiet_since" ]]; then
        quiet_since="$now"
        log "no $WORKER left: watching ${SETTLE_MS}ms for another job before stopping the listener"
      fi
      if ((now - quiet_since >= SETTLE_MS)); then
        log "the job has finished"
        return 0
      fi
      find_processes "$LISTENER"
      if ((${#found[@]} == 0)); then
        log "the job has finished and $LISTENER has exited by itself"
        return 0
      fi
    fi
    if ((now >= deadline)); then
      if ((${#workers[@]} > 0)); then
        log "RUNNER_GRACEFUL_STOP_TIMEOUT (${timeout_s}s) reached with $WORKER ${workers[*]} still running: cancelling the job"
        interrupt_groups_of "${workers[@]}"
      fi
      return 0
    fi
    if ((now >= next_heartbeat)); then
      log "still waiting for $WORKER ${workers[*]:-(none right now)}: $(((deadline - now) / 1000))s left"
      next_heartbeat=$((now + HEARTBEAT_MS))
    fi
    sleep "$POLL_SECONDS"
  done
}

on_stop_signal() {
  local signal="$1"
  if ((stopping)); then
    log "SIG$signal again: already stopping"
    return
  fi
  stopping=1
  clock
  local deadline=$((now + timeout * 1000))
  log "SIG$signal received"
  # A signal between the fork and the assignment of runner_pid: $! already names the runner.
  [[ -n "$runner_pid" ]] || runner_pid="${!:-}"
  if [[ -z "$runner_pid" ]]; then
    log "the runner has not been started: not starting it; exiting"
    exit 143
  fi

  find_processes "$WORKER"
  local -a workers=("${found[@]}")
  find_processes "$LISTENER"
  if ((${#workers[@]} == 0 && ${#found[@]} == 0)); then
    stop_without_listener
  fi

  if ((${#workers[@]} > 0)); then
    found=("${workers[@]}")
    wait_for_workers "$deadline" "$timeout"
  else
    log "no job running"
  fi
  wait_for_listeners_to_exit
  finish
}

remove_alive_file() {
  if [[ -n "${RUNNER_ALIVE_FILE:-}" ]]; then
    rm -f -- "$RUNNER_ALIVE_FILE"
  fi
}

# Set the traps first, so a SIGTERM that arrives while the script is starting is not lost.
trap 'on_stop_signal TERM' TERM
trap 'on_stop_signal INT' INT
trap remove_alive_file EXIT

RUNNER_ENTRYPOINT="${RUNNER_ENTRYPOINT:-/home/runner/run.sh}"
timeout="${RUNNER_GRACEFUL_STOP_TIMEOUT:-$DEFAULT_TIMEOUT}"
if [[ ! "$timeout" =~ ^[0-9]{1,7}$ ]]; then
  log "RUNNER_GRACEFUL_STOP_TIMEOUT must be a whole number of seconds (at most 7 digits), got '$timeout'; not starting the runner"
  exit 64
fi
timeout=$((10#$timeout))
if ! command -v pgrep >/dev/null 2>&1; then
  log "pgrep (procps) is not installed, so running jobs could not be found; not starting the runner"
  exit 127
fi
if [[ ! -x "$RUNNER_ENTRYPOINT" ]]; then
  log "RUNNER_ENTRYPOINT '$RUNNER_ENTRYPOINT' is not an executable file; not starting the runner"
  exit 127
fi
read_stat "$$" && own_pgid="$stat_pgrp"
if [[ -n "${RUNNER_ALIVE_FILE:-}" ]]; then
  : >"$RUNNER_ALIVE_FILE" || log "cannot create RUNNER_ALIVE_FILE '$RUNNER_ALIVE_FILE'"
fi

# A signal ignored when this script started (say, by a shell that ran it in the background) stays
# ignored in its children, and the runner's own SIGINT handling could never run: coreutils'
# `env --default-signal` (8.31 and later, as in the runner image) restores every signal. A path
# with "=" in it would read as a variable to env, so such a path is started directly.
launcher=()
if [[ "$RUNNER_ENTRYPOINT" != *=* ]] && env --default-signal true 2>/dev/null; then
  launcher=(env --default-signal)
fi

log "starting $RUNNER_ENTRYPOINT (graceful stop timeout ${timeout}s)"
# Job control gives the runner its own process group, apart from this script's. Without it, bash
# would also start the runner with SIGINT ignored.
set -m
"${launcher[@]}" "$RUNNER_ENTRYPOINT" "$@" &
runner_pid=$!
set +m

# `wait` returns here only when the runner has exited by itself: the stop handler always exits.
wait "$runner_pid"
runner_status=$?
stopping=1
log "$RUNNER_ENTRYPOINT exited with status $runner_status"
exit "$runner_status"
