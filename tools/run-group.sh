# shellcheck shell=bash disable=SC2034 # RUN_GROUP_PID is read by the caller
# tools/run-group.sh - sourced by tools/gpu-check.sh: run_group SECONDS
# command... runs the command in a POSIX session (and process group) of its
# own and, when it passes SECONDS, sends SIGTERM to the whole group, then
# SIGKILL 5 s later. RUN_GROUP_PID holds the running group's id, for a
# caller's signal handler. `timeout` signals only its child, so the ranks of a
# timed-out mpirun could outlive it and keep the GPUs for the next step;
# here nothing of the step survives it. The exit status is the command's
# (124 when the time ran out, like timeout).
run_group() {
  local tmo=$1 pid watchdog rc flag
  shift
  flag=$(mktemp)
  rm -f "$flag"
  setsid "$@" &
  pid=$!
  RUN_GROUP_PID=$pid
  (
    sleep "$tmo"
    : >"$flag"
    kill -TERM -- -"$pid" 2>/dev/null
    sleep 5
    kill -KILL -- -"$pid" 2>/dev/null
  ) </dev/null >/dev/null 2>&1 &
  # (its own descriptors: a sleep that outlives it must not hold the
  # caller's pipe open, or a reader of the command's output waits for it)
  watchdog=$!
  wait "$pid"
  rc=$?
  kill "$watchdog" 2>/dev/null
  wait "$watchdog" 2>/dev/null
  # Whatever of the group outlived its leader goes too.
  kill -KILL -- -"$pid" 2>/dev/null
  RUN_GROUP_PID=""
  if [ -e "$flag" ]; then
    rm -f "$flag"
    echo "run_group: '$*' ran past $tmo s: its process group was killed" >&2
    return 124
  fi
  return "$rc"
}
