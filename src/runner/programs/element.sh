#!/bin/bash
# drover's element runner in bash: what a Slurm array element runs instead of `drover runner` (starting Node costs
# ~0.1-0.3 CPU-second per element, which makes a one-task element several times dearer than in a plain
# `sbatch --array`, and 10 packed elements dearer than their 1000 tasks). It runs an element's group of tasks with
# N slots (per-slot GPUs, per-task logs and variables, each task in its own process group), reads drover's cancel
# requests every 2 s, and on the scheduler's SIGTERM stops its tasks, writing the same records (format version 1)
# as drover's runner. A packed element hands over to the Python element runner (element.py) when the node has
# Python; bash before 5.1 (no `wait -n -p`) hands over to `drover runner`. Launches it cannot serve (retries,
# per-task time limits, per-task variables) run `drover runner` (src/backends/slurm/element-script.ts decides).
#
# Usage: `source element.sh runner LAUNCH_FILE --group KEY` (the Slurm wrapper: one bash per element, not two), or
# `bash element.sh runner LAUNCH_FILE --group KEY`. Its settings are in the file beside it named like it with
# `.settings` instead of `.sh`: NUL-terminated NAME=VALUE entries (src/runner/program-settings.ts); DROVER_S_*
# entries are settings, the others variables for the tasks.
# shellcheck disable=SC2317 # `return N 2>/dev/null || exit N`: the wrapper sources this file, bash runs it
set -u
drover_settings=${BASH_SOURCE[0]%.sh}.settings
if [[ ! -r $drover_settings ]]; then
  echo "drover: cannot read the element runner's settings $drover_settings" >&2
  return 2 2>/dev/null || exit 2
fi
declare -A S=()
while IFS= read -r -d '' kv; do
  case $kv in
  DROVER_S_*)
    kv=${kv#DROVER_S_}
    S[${kv%%=*}]=${kv#*=}
    ;;
  *) export "${kv?}" ;;
  esac
done <"$drover_settings"
if [[ -n ${S[PYTHON]:-} && ${DROVER_ELEMENT_RUNNER:-python} != bash ]]; then
  # Packed: the Python element runner when the node has Python (DROVER_ELEMENT_RUNNER=bash: this one).
  for drover_py in /usr/bin/python3 /usr/local/bin/python3; do
    [[ -x $drover_py ]] && exec "$drover_py" -I -S "${S[PYTHON]}" "$drover_settings" "${4:?usage: runner LAUNCH_FILE --group KEY}"
  done
fi
# The wrapper sources this file, so errors return rather than exit.
if ((BASH_VERSINFO[0] < 5 || (BASH_VERSINFO[0] == 5 && BASH_VERSINFO[1] < 1))); then
  "${S[NODE]}" "${S[BIN]}" "$@"
  status=$?
  return "$status" 2>/dev/null || exit "$status"
fi
key=${4:?usage: runner LAUNCH_FILE --group KEY}
per=${S[PER]}
if ((per == 1)); then first=$key last=$key; else first=$(((key - 1) * per + 1)) last=$((key * per)); fi
# The group's lines of the task table: read by bash itself near the top, by sed further down.
if ((first <= 20000)); then
  mapfile -t -s $((first - 1)) -n $((last - first + 1)) lines <"${S[TABLE]}"
else
  mapfile -t lines < <(sed -n "${first},${last}p;${last}q" "${S[TABLE]}")
fi

json() { # VALUE: VALUE as a JSON string, in REPLY
  local LC_ALL=C s=${1//\\/\\\\} out='' c i
  s=${s//\"/\\\"}
  s=${s//$'\n'/\\n}
  s=${s//$'\t'/\\t}
  s=${s//$'\r'/\\r}
  if [[ $s == *[$'\x01'-$'\x1f']* ]]; then # other control characters: rare in names and paths
    for ((i = 0; i < ${#s}; i++)); do
      c=${s:i:1}
      [[ $c == [$'\x01'-$'\x1f'] ]] && printf -v c '\\u%04x' "'$c"
      out+=$c
    done
    s=$out
  fi
  REPLY="\"$s\""
}
cancel_dir=${S[CANCEL_DIR]}
log_dir=${S[LOG_DIR]}
# The element's limit (--duration, whole seconds) from the batch shell's start: its tasks' DROVER_DEADLINE.
runner_end=
if [[ -n ${S[RUNNER_LIMIT]:-} ]]; then runner_end=$((EPOCHSECONDS - SECONDS + S[RUNNER_LIMIT])); fi
json "$log_dir/" && log_json=${REPLY%\"} # a path's JSON without its closing quote, completed per task
host=${HOSTNAME%%.*}
json "$host" && host_json=$REPLY
json "${S[JOB]}" && job_json=$REPLY
json "${S[REASON_SCHEDULER_STOP]}" && scheduler_stop_json=$REPLY
json "${S[REASON_UNKNOWN_STATUS]}" && unknown_status_json=$REPLY
read -ra signal_names <<<"${S[SIGNAL_NAMES]}"
runner="g$key.$host.$$"
record=${S[RECORDS_DIR]}/$runner.jsonl
cd "${S[CWD]}" || { return 1 2>/dev/null || exit 1; }
export DROVER_JOBNAME=${S[JOB]} DROVER_LAUNCH=${S[LAUNCH]}
# Slots, and the GPUs of each when tasks need some (from the element's CUDA_VISIBLE_DEVICES). Never more slots
# than the element has tasks: they would cost a loop turn each and never run anything.
slots=${S[SLOTS]}
((slots > ${#lines[@]} && ${#lines[@]} > 0)) && slots=${#lines[@]}
k=${S[GPUS_PER_TASK]}
slot_gpus=()
if ((k > 0)); then
  IFS=, read -ra visible <<<"${CUDA_VISIBLE_DEVICES:-}"
  fit=$((${#visible[@]} / k))
  if ((fit < 1)); then
    echo "drover: each task needs $k GPU(s) but ${#visible[@]} are visible (CUDA_VISIBLE_DEVICES='${CUDA_VISIBLE_DEVICES:-}')" >&2
    return 2 2>/dev/null || exit 2
  fi
  ((slots > fit)) && slots=$fit
  for ((i = 0; i < slots; i++)); do
    g="${visible[*]:i*k:k}"
    slot_gpus[i]=${g// /,}
  done
fi
exec {record_fd}>>"$record" # one open file: each record is one append
# Waiting without a process that could outlive this runner (an external sleep would, killed or not its parent:
# with this runner's stderr and the tasks' variables): a read that times out, on a pipe nobody writes to.
exec {never}<> <(:)
pause() { read -rt "$1" -u "$never" _; }
# Whole lines only. When the disk refuses a record (full, read-only), the part of it that got written is cut off
# again and the records wait in memory; no task starts until they are written (the loop calls rec_flush again).
rec_size=0 rec_wait=() rec_blocked=
[[ -s $record ]] && rec_size=$(stat -c %s "$record")
rec_flush() {
  local LC_ALL=C line # (${#line} counts bytes)
  while ((${#rec_wait[@]} > 0)); do
    line=${rec_wait[0]}
    if ! printf '%s\n' "$line" 1>&"$record_fd" 2>/dev/null; then
      truncate -s "$rec_size" "$record" 2>/dev/null
      [[ -n $rec_blocked ]] || echo "drover: cannot write $record (disk full?): keeping ${#rec_wait[@]} record(s) in memory and trying again; no new task starts until they are written" >&2
      rec_blocked=1
      return 1
    fi
    rec_size=$((rec_size + ${#line} + 1))
    rec_wait=("${rec_wait[@]:1}")
  done
  [[ -z $rec_blocked ]] || echo "drover: records written again to $record" >&2
  rec_blocked=
}
rec() {
  rec_wait+=("$1")
  rec_flush
}

free=()
for ((i = slots - 1; i >= 0; i--)); do free+=("$i"); done

rec "{\"type\":\"runner\",\"v\":1,\"runner\":\"$runner\",\"launch\":${S[LAUNCH]},\"job\":$job_json,\"host\":$host_json,\"pid\":$$,\"pid_start\":null,\"slots\":$slots,\"at\":${EPOCHREALTIME/,/.}}"

# drover cancel drops requests ({"tasks":[1,3],...} or {"tasks":"all",...}) into the cancel folder.
declare -A cancelled=() seen=()
cancel_all=
read_cancels() {
  local f json ids id
  shopt -s nullglob
  for f in "$cancel_dir"/*.json; do
    [[ -n ${seen[$f]:-} ]] && continue
    json=
    read -r json <"$f" || true
    if [[ $json == *'"tasks":"all"'* ]]; then
      cancel_all=1
    elif [[ $json =~ \"tasks\":\[([0-9,]*)\] ]]; then
      IFS=, read -ra ids <<<"${BASH_REMATCH[1]}"
      for id in "${ids[@]}"; do cancelled[$id]=1; done
    else
      continue # being written: read it next time
    fi
    seen[$f]=1
  done
  shopt -u nullglob
}
is_cancelled() { [[ -n $cancel_all || -n ${cancelled[$1]:-} ]]; }

# How a task's end becomes its state: the rows of src/runner/end-state.ts, in its order, with the reasons and
# signal names of the settings (no time limits here). STOP is why this runner stopped the task (cancel,
# scheduler, or empty); STATUS is wait's (128+N for a task ended by signal N, which bash cannot tell from an
# exit 128+N, and the table reads both the same way), empty when bash lost it. Sets state, exit_code, signal and
# reason (a JSON fragment).
end_state() { # STOP STATUS
  local stop=$1 status=$2
  exit_code=null signal=null reason=
  if [[ -n $status ]]; then
    if ((status > 128 && status - 128 <= ${#signal_names[@]})); then
      signal="\"SIG${signal_names[status - 129]}\""
    else
      exit_code=$status
    fi
  fi
  if [[ $stop == cancel ]]; then
    state=cancelled
  elif [[ $stop == scheduler ]]; then
    state=killed reason=",\"reason\":$scheduler_stop_json"
  elif [[ -z $status ]]; then
    state=killed reason=",\"reason\":$unknown_status_json"
  elif [[ $signal != null ]]; then
    state=killed
  elif ((status == 0)); then
    state=succeeded
  else
    state=failed
  fi
}

declare -A t_id=() t_attempt=() t_slot=() t_stop=() t_start=() t_killer=() killer_of=()
running=0
all_ok=1
# A pid is only a task's while bash has not handed it to a newer child: bash reaps children as they end and
# forgets a stored status when the kernel gives its pid to a new child. A new child with the pid of a task not
# yet ended here means that task ended unseen, its status lost.
forked() { # PID
  [[ -n ${t_id[$1]:-} ]] && reused=1 end_task "$1"
  # Likewise a SIGKILL timer that ran out: its pid is no longer one to stop.
  if [[ -n ${killer_of[$1]:-} ]]; then unset "t_killer[${killer_of[$1]}]" "killer_of[$1]"; fi
  return 0
}
stop_task() { # PID WHY: SIGTERM to its process group, SIGKILL after the grace period
  local st
  t_stop[$1]=$2
  kill -TERM -- "-$1" 2>/dev/null
  # The killer checks that the group's leader is still this task (its start time) before it kills: once the
  # task ended, its pid may be another process's. A group whose leader ended is killed by end_task.
  read -r st <"/proc/$1/stat" 2>/dev/null || return 0
  st=${st##*) } && read -ra st <<<"$st"
  (
    pause "${S[KILL_GRACE]}"
    read -r now <"/proc/$1/stat" 2>/dev/null || exit 0
    now=${now##*) } && read -ra now <<<"$now"
    [[ ${now[19]} == "${st[19]}" ]] && kill -KILL -- "-$1" 2>/dev/null
  ) &
  forked $!
  t_killer[$1]=$! killer_of[$!]=$1
}
start_task() { # LINE
  local line=$1 attempt id mode slot pid gpus=null words=()
  attempt=${line%% *} line=${line#* }
  id=${line%% *} line=${line#* }
  mode=${line%% *}
  # The table's words are ANSI-C quoted ($'...'): this eval only unquotes them (element-script.ts, ansiQuote).
  eval "words=(${line#* })"
  slot=${free[-1]}
  unset 'free[-1]'
  export DROVER_TASK_ID=$id DROVER_ATTEMPT=$attempt DROVER_SLOT=$slot DROVER_RESULT_FILE=$log_dir/$id.$attempt.result.json
  if [[ -n $runner_end ]]; then
    export DROVER_DEADLINE=$runner_end DROVER_TIME_LEFT_S=$((runner_end > EPOCHSECONDS ? runner_end - EPOCHSECONDS : 0))
  fi
  if [[ -n ${slot_gpus[slot]:-} ]]; then
    export CUDA_VISIBLE_DEVICES=${slot_gpus[slot]}
    gpus="\"${slot_gpus[slot]}\""
  fi
  # Job control on just for the start: the task gets its own process group and ignores no signals.
  set -m
  if [[ $mode == D ]]; then
    exec "${words[@]}" </dev/null >"$log_dir/$id.$attempt.out" 2>"$log_dir/$id.$attempt.err" {record_fd}>&- {never}<&- &
  else
    exec /bin/sh -c "${words[0]}" </dev/null >"$log_dir/$id.$attempt.out" 2>"$log_dir/$id.$attempt.err" {record_fd}>&- {never}<&- &
  fi
  pid=$!
  set +m
  forked "$pid"
  t_start[$pid]=${EPOCHREALTIME/,/.}
  t_id[$pid]=$id t_attempt[$pid]=$attempt t_slot[$pid]=$slot t_stop[$pid]=
  running=$((running + 1))
  rec "{\"type\":\"start\",\"task\":$id,\"attempt\":$attempt,\"at\":${t_start[$pid]},\"pid\":$pid,\"slot\":$slot,\"gpus\":$gpus,\"host\":$host_json,\"out\":$log_json$id.$attempt.out\",\"err\":$log_json$id.$attempt.err\"}"
}
end_task() { # PID [STATUS] (none: bash lost it, which happens to a child that ends while a trap runs)
  # First, what the task left in its process group ends with it: its members keep the group's id from being
  # reused, and with none left the pid was freed only the moment bash reaped the task.
  [[ -n ${reused:-} ]] || kill -KILL -- "-$1" 2>/dev/null
  local pid=$1 status=${2:-} stop=${t_stop[$1]} state exit_code signal reason
  [[ ! $status =~ ^[0-9]+$ ]] && status=
  # A task that ended after this runner was sent SIGTERM was stopped by the scheduler, like those it stopped.
  [[ -z $stop && -n $term ]] && stop=scheduler
  end_state "$stop" "$status"
  [[ $state == succeeded ]] || all_ok=
  # bash has no monotonic clock: an end the wall clock put before its start (set back meanwhile) is its start.
  # (EPOCHREALTIME has six decimals: without the point, the times compare as whole microseconds.)
  local ended=${EPOCHREALTIME/,/.}
  ((${ended/./} >= ${t_start[$pid]/./})) || ended=${t_start[$pid]}
  rec "{\"type\":\"end\",\"task\":${t_id[$pid]},\"attempt\":${t_attempt[$pid]},\"at\":$ended,\"state\":\"$state\",\"exit_code\":$exit_code,\"signal\":$signal$reason}"
  # Its SIGKILL timer ends with it, and is reaped: nothing of the launch outlives this runner.
  if [[ -n ${t_killer[$pid]:-} ]]; then
    kill "${t_killer[$pid]}" 2>/dev/null && wait "${t_killer[$pid]}" 2>/dev/null
    unset "killer_of[${t_killer[$pid]}]"
  fi
  free+=("${t_slot[$pid]}")
  unset "t_id[$pid]" "t_attempt[$pid]" "t_slot[$pid]" "t_stop[$pid]" "t_start[$pid]" "t_killer[$pid]"
  running=$((running - 1))
}
skip_task() { # ID: cancelled before it started
  all_ok=
  rec "{\"type\":\"skip\",\"task\":$1,\"at\":${EPOCHREALTIME/,/.},\"state\":\"cancelled\"}"
}
skip_cancelled() { # the queued tasks with a cancel request never start
  local i id
  for ((i = next; i < n; i++)); do
    [[ -n ${lines[i]} ]] || continue
    id=${lines[i]#* } id=${id%% *}
    if is_cancelled "$id"; then
      skip_task "$id"
      lines[i]=
    fi
  done
}
stop_cancelled() { # the running tasks with a cancel request are stopped
  local pid
  for pid in "${!t_id[@]}"; do
    [[ -z ${t_stop[$pid]} ]] && is_cancelled "${t_id[$pid]}" && stop_task "$pid" cancel
  done
}

# The scheduler stops the element (and drover cancel asks for it with its cancel requests): the tasks with a
# cancel request are cancelled, the other running ones stopped; those not started get no record.
on_term() {
  local pid
  term_seen=1
  read_cancels
  stop_cancelled
  skip_cancelled
  for pid in "${!t_id[@]}"; do [[ -z ${t_stop[$pid]} ]] && stop_task "$pid" scheduler; done
  next=$n
}

term='' term_seen=''
trap 'term=1' TERM
read_cancels
# With more than one task, a 2-second timer (a child, so waiting for it needs no signals) paces the reading
# of cancel requests.
timer=
n=${#lines[@]}
next=0
while :; do
  [[ -n $term && -z $term_seen ]] && on_term
  if ((n > 1)) && [[ -z $timer && -z $term ]]; then
    read_cancels
    stop_cancelled
    skip_cancelled
  fi
  rec_flush
  while ((next < n && ${#free[@]} > 0)) && [[ -z $term && -z $rec_blocked ]]; do
    line=${lines[next]}
    next=$((next + 1))
    [[ -n $line ]] || continue
    id=${line#* } id=${id%% *}
    if is_cancelled "$id"; then skip_task "$id"; else start_task "$line"; fi
  done
  if ((running == 0)); then
    if ((next >= n)) || [[ -z $rec_blocked ]]; then break; fi
    sleep 1 # tasks wait for their records to be written
    continue
  fi
  if ((n > 1)) && [[ -z $timer ]]; then
    pause 2 &
    forked $!
    timer=$!
  fi
  done_pid=
  wait -n -p done_pid "${!t_id[@]}" ${timer:+"$timer"} 2>/dev/null
  status=$?
  # A SIGTERM that ended the wait is seen before the ends it may have caused.
  [[ -n $term && -z $term_seen ]] && on_term
  # wait -p names the child whose own status it returns (bash reports ends only: job control is off here).
  if [[ -n ${done_pid:-} && ${done_pid} == "$timer" ]]; then
    timer=
  elif [[ -n ${done_pid:-} && -n ${t_id[$done_pid]:-} ]]; then
    end_task "$done_pid" "$status"
  fi
  # Tasks that ended unseen (bash loses the status of a child that ends while a trap runs): gone, so reaped.
  # wait PID (not -n: bash may have moved it from its jobs to its saved statuses) says what bash kept, and -p
  # tells a kept 127 (a task's own "command not found") from the 127 bash gives for a pid it does not know.
  for pid in "${!t_id[@]}"; do
    kill -0 "$pid" 2>/dev/null && continue
    done_pid=
    wait -p done_pid "$pid" 2>/dev/null
    status=$?
    if [[ -n ${done_pid:-} ]] || ((status != 127)); then end_task "$pid" "$status"; else end_task "$pid"; fi
  done
done
[[ -n $timer ]] && kill "$timer" 2>/dev/null && wait "$timer" 2>/dev/null
end_reason='done'
[[ -n $cancel_all || -n $term ]] && end_reason=cancelled
rec "{\"type\":\"runner-end\",\"at\":${EPOCHREALTIME/,/.},\"reason\":\"$end_reason\"}"
until rec_flush; do sleep 1; done
[[ -n $all_ok ]]
