import { directArgv } from '../../runner/command.js';
import type { GroupTask, RunSettings } from '../../runner/group.js';
import { shellQuote } from '../cluster/wrapper.js';

/**
 * The element runner: drover's runner written in bash, for array elements. It runs an element's group of
 * tasks with N slots (per-slot GPUs, per-task logs and variables, each task in its own process group), reads
 * drover's cancel requests every 2 s, and on the scheduler's SIGTERM stops its tasks — writing the same
 * records (format version 1) as `drover runner`. Starting Node costs ~0.1-0.3 CPU-second per element, which
 * makes a one-task element several times dearer than in a plain `sbatch --array`, and 10 packed elements
 * dearer than their 1000 tasks. Launches it cannot serve (retries, per-task time limits, bash before 5.1) run
 * `drover runner` instead.
 */

/** Can the element runner run these tasks of a launch? Not with retries, per-task time limits or task variables. */
export function elementRunnerFits(settings: RunSettings, tasks: readonly GroupTask[]): boolean {
  if (settings.retries !== 0 || settings.taskTimeout !== undefined) return false;
  return !tasks.some((t) => t.env && Object.keys(t.env).length > 0);
}

/** A string as a bash ANSI-C quoted word (`$'...'`) on one line, whatever it holds. */
export function ansiQuote(s: string): string {
  let out = "$'";
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (ch === '\\') out += '\\\\';
    else if (ch === "'") out += "\\'";
    else if (ch === '\n') out += '\\n';
    else if (ch === '\t') out += '\\t';
    else if (c < 0x20 || c === 0x7f) out += `\\x${c.toString(16).padStart(2, '0')}`;
    else out += ch;
  }
  return `${out}'`;
}

/** One line of the task table: `ATTEMPT ID D WORD...` (executed directly) or `ATTEMPT ID S COMMAND` (sh -c). */
function tableLine(t: GroupTask): string {
  const argv = directArgv(t.command);
  return argv
    ? `${t.attempt} ${t.id} D ${argv.map(ansiQuote).join(' ')}`
    : `${t.attempt} ${t.id} S ${ansiQuote(t.command)}`;
}

/**
 * The task table the element runner reads, one task per line, words ANSI-C quoted, so that a group's lines are
 * found by their numbers alone. One task per element: line K holds task K (the group key is the task id; lines
 * of tasks not in the launch are empty). Packed: the tasks in launch order, so group K is lines (K-1)*N+1 to K*N.
 */
export function elementTable(tasks: readonly GroupTask[], tasksPerNode: number): string {
  if (tasksPerNode > 1) return `${tasks.map(tableLine).join('\n')}\n`;
  const max = tasks.reduce((m, t) => Math.max(m, t.id), 0);
  const lines: string[] = new Array(max).fill('');
  for (const t of tasks) lines[t.id - 1] = tableLine(t);
  return `${lines.join('\n')}\n`;
}

/** What the element runner needs besides the task table. */
export interface ElementScriptSpec {
  settings: RunSettings;
  tableFile: string;
  /** Tasks per element, as the table was written. */
  tasksPerNode: number;
  /** `drover runner`, for bash older than 5.1 (no `wait -n -p`). */
  node: string;
  bin: string;
  /** The Python element runner (element-python.ts) for packed elements, used when the node has Python 3.8+. */
  python?: string;
}

/** JSON text of a string without its closing quote: the prefix of a JSON string the script completes. */
function jsonPrefix(s: string): string {
  return JSON.stringify(s).slice(0, -1);
}

/**
 * The element runner script. Its arguments are a runner's: `runner LAUNCH_FILE --group KEY`. The Slurm
 * wrapper sources it (`source SCRIPT runner ...` in place of `node drover.cjs runner ...`); it also runs as
 * `bash SCRIPT runner ...`.
 */
export function elementScript(spec: ElementScriptSpec): string {
  const s = spec.settings;
  const q = shellQuote;
  const env = Object.entries(s.env ?? {}).map(([k, v]) => `export ${k}=${q(v)}`);
  const per = Math.max(1, spec.tasksPerNode);
  const python = spec.python
    ? `# Packed: the Python element runner when the node has Python (DROVER_ELEMENT_RUNNER=bash: this one).
if [[ \${DROVER_ELEMENT_RUNNER:-python} != bash ]]; then
  for drover_py in /usr/bin/python3 /usr/local/bin/python3; do
    [[ -x $drover_py ]] && exec "$drover_py" -I -S ${q(spec.python)} "\${4:?usage: runner LAUNCH_FILE --group KEY}"
  done
fi
`
    : '';
  return `#!/bin/bash
# Written by drover: runs the tasks of one array element and records their attempts like drover's runner.
set -u
${python}# The wrapper sources this file (one bash per element, not two), so errors return rather than exit.
if ((BASH_VERSINFO[0] < 5 || (BASH_VERSINFO[0] == 5 && BASH_VERSINFO[1] < 1))); then
  ${q(spec.node)} ${q(spec.bin)} "$@"
  status=$?
  return $status 2>/dev/null || exit $status
fi
key=\${4:?usage: runner LAUNCH_FILE --group KEY}
if ((${per} == 1)); then first=$key last=$key; else first=$(((key - 1) * ${per} + 1)) last=$((key * ${per})); fi
# The group's lines of the task table: read by bash itself near the top, by sed further down.
if ((first <= 20000)); then
  mapfile -t -s $((first - 1)) -n $((last - first + 1)) lines <${q(spec.tableFile)}
else
  mapfile -t lines < <(sed -n "\${first},\${last}p;\${last}q" ${q(spec.tableFile)})
fi
cancel_dir=${q(s.cancelDir)}
log_dir=${q(s.logDir)}
log_json=${q(jsonPrefix(`${s.logDir}/`))}
host=\${HOSTNAME%%.*}
runner="g$key.$host.$$"
record=${q(s.recordsDir)}/$runner.jsonl
cd ${q(s.cwd)} || { return 1 2>/dev/null || exit 1; }
${env.join('\n')}
export DROVER_JOBNAME=${q(s.job)} DROVER_LAUNCH=${s.launch}
exec {record_fd}>>"$record" # one open file: each record is one append
rec() { printf '%s\\n' "$1" >&"$record_fd"; }

# Slots, and the GPUs of each when tasks need some (from the element's CUDA_VISIBLE_DEVICES). Never more slots
# than the element has tasks: they would cost a loop turn each and never run anything.
slots=${s.maxTasks ?? 1}
((slots > \${#lines[@]} && \${#lines[@]} > 0)) && slots=\${#lines[@]}
k=${s.gpusPerTask ?? 0}
slot_gpus=()
if ((k > 0)); then
  IFS=, read -ra visible <<<"\${CUDA_VISIBLE_DEVICES:-}"
  fit=$((\${#visible[@]} / k))
  if ((fit < 1)); then
    echo "drover: each task needs $k GPU(s) but \${#visible[@]} are visible (CUDA_VISIBLE_DEVICES='\${CUDA_VISIBLE_DEVICES:-}')" >&2
    return 2 2>/dev/null || exit 2
  fi
  ((slots > fit)) && slots=$fit
  for ((i = 0; i < slots; i++)); do
    g="\${visible[*]:i*k:k}"
    slot_gpus[i]=\${g// /,}
  done
fi
free=()
for ((i = slots - 1; i >= 0; i--)); do free+=("$i"); done

rec "{\\"type\\":\\"runner\\",\\"v\\":1,\\"runner\\":\\"$runner\\",\\"launch\\":${s.launch},\\"job\\":"${q(JSON.stringify(s.job))}",\\"host\\":\\"$host\\",\\"pid\\":$$,\\"pid_start\\":null,\\"slots\\":$slots,\\"at\\":\${EPOCHREALTIME/,/.}}"

# drover cancel drops requests ({"tasks":[1,3],...} or {"tasks":"all",...}) into the cancel folder.
declare -A cancelled=() seen=()
cancel_all=
read_cancels() {
  local f json ids id
  shopt -s nullglob
  for f in "$cancel_dir"/*.json; do
    [[ -n \${seen[$f]:-} ]] && continue
    json=
    read -r json <"$f" || true
    if [[ $json == *'"tasks":"all"'* ]]; then
      cancel_all=1
    elif [[ $json =~ \\"tasks\\":\\[([0-9,]*)\\] ]]; then
      IFS=, read -ra ids <<<"\${BASH_REMATCH[1]}"
      for id in "\${ids[@]}"; do cancelled[$id]=1; done
    else
      continue # being written: read it next time
    fi
    seen[$f]=1
  done
  shopt -u nullglob
}
is_cancelled() { [[ -n $cancel_all || -n \${cancelled[$1]:-} ]]; }

declare -A t_id=() t_attempt=() t_slot=() t_stop=() t_killer=()
running=0
all_ok=1
# A pid is only a task's while bash has not handed it to a newer child: bash reaps children as they end and
# forgets a stored status when the kernel gives its pid to a new child. A new child with the pid of a task not
# yet ended here means that task ended unseen, its status lost.
forked() { # PID
  [[ -n \${t_id[$1]:-} ]] && reused=1 end_task "$1"
  return 0
}
stop_task() { # PID WHY: SIGTERM to its process group, SIGKILL after the grace period
  local st
  t_stop[$1]=$2
  kill -TERM -- "-$1" 2>/dev/null
  # The killer checks that the group's leader is still this task (its start time) before it kills: once the
  # task ended, its pid may be another process's. A group whose leader ended is killed by end_task.
  read -r st <"/proc/$1/stat" 2>/dev/null || return 0
  st=\${st##*) } && read -ra st <<<"$st"
  (
    sleep ${s.killGrace}
    read -r now <"/proc/$1/stat" 2>/dev/null || exit 0
    now=\${now##*) } && read -ra now <<<"$now"
    [[ \${now[19]} == "\${st[19]}" ]] && kill -KILL -- "-$1" 2>/dev/null
  ) &
  forked $!
  t_killer[$1]=$!
}
start_task() { # LINE
  local line=$1 attempt id mode slot pid gpus=null
  attempt=\${line%% *} line=\${line#* }
  id=\${line%% *} line=\${line#* }
  mode=\${line%% *}
  eval "words=(\${line#* })"
  slot=\${free[-1]}
  unset 'free[-1]'
  export DROVER_TASK_ID=$id DROVER_ATTEMPT=$attempt DROVER_SLOT=$slot
  if [[ -n \${slot_gpus[slot]:-} ]]; then
    export CUDA_VISIBLE_DEVICES=\${slot_gpus[slot]}
    gpus="\\"\${slot_gpus[slot]}\\""
  fi
  # Job control on just for the start: the task gets its own process group and ignores no signals.
  set -m
  if [[ $mode == D ]]; then
    exec "\${words[@]}" </dev/null >"$log_dir/$id.$attempt.out" 2>"$log_dir/$id.$attempt.err" {record_fd}>&- &
  else
    exec /bin/sh -c "\${words[0]}" </dev/null >"$log_dir/$id.$attempt.out" 2>"$log_dir/$id.$attempt.err" {record_fd}>&- &
  fi
  pid=$!
  set +m
  forked "$pid"
  t_id[$pid]=$id t_attempt[$pid]=$attempt t_slot[$pid]=$slot t_stop[$pid]=
  running=$((running + 1))
  rec "{\\"type\\":\\"start\\",\\"task\\":$id,\\"attempt\\":$attempt,\\"at\\":\${EPOCHREALTIME/,/.},\\"pid\\":$pid,\\"slot\\":$slot,\\"gpus\\":$gpus,\\"host\\":\\"$host\\",\\"out\\":$log_json$id.$attempt.out\\",\\"err\\":$log_json$id.$attempt.err\\"}"
}
end_task() { # PID [STATUS] (none: bash lost it, which happens to a child that ends while a trap runs)
  # First, what the task left in its process group ends with it: its members keep the group's id from being
  # reused, and with none left the pid was freed only the moment bash reaped the task.
  [[ -n \${reused:-} ]] || kill -KILL -- "-$1" 2>/dev/null
  local pid=$1 status=\${2:-} state=failed exit_code=\${2:-null} signal=null reason= name
  if [[ ! $status =~ ^[0-9]+$ ]]; then
    state=killed exit_code=null reason=',"reason":"its exit status is unknown"'
  elif ((status == 0)); then
    state=succeeded
  elif ((status > 128)) && name=$(kill -l $((status - 128)) 2>/dev/null); then
    state=killed signal="\\"SIG$name\\"" exit_code=null
  fi
  case \${t_stop[$pid]}:$term:$state in
  cancel:*) state=cancelled ;;
  term:* | *:1:killed) state=killed reason=',"reason":"the runner was sent SIGTERM (scheduler stop)"' ;;
  esac
  [[ $state == succeeded ]] || all_ok=
  rec "{\\"type\\":\\"end\\",\\"task\\":\${t_id[$pid]},\\"attempt\\":\${t_attempt[$pid]},\\"at\\":\${EPOCHREALTIME/,/.},\\"state\\":\\"$state\\",\\"exit_code\\":$exit_code,\\"signal\\":$signal$reason}"
  [[ -n \${t_killer[$pid]:-} ]] && kill "\${t_killer[$pid]}" 2>/dev/null
  free+=("\${t_slot[$pid]}")
  unset "t_id[$pid]" "t_attempt[$pid]" "t_slot[$pid]" "t_stop[$pid]" "t_killer[$pid]"
  running=$((running - 1))
}
skip_task() { # ID: cancelled before it started
  all_ok=
  rec "{\\"type\\":\\"skip\\",\\"task\\":$1,\\"at\\":\${EPOCHREALTIME/,/.},\\"state\\":\\"cancelled\\"}"
}

term=
trap 'term=1' TERM
read_cancels
# With more than one task, a 2-second timer (a child, so waiting for it needs no signals) paces the reading
# of cancel requests.
timer=
n=\${#lines[@]}
next=0
while :; do
  if [[ -n $term ]]; then
    # The scheduler stops the element: stop the running tasks; those not started get no record.
    for pid in "\${!t_id[@]}"; do [[ -z \${t_stop[$pid]} ]] && stop_task "$pid" term; done
    next=$n
  fi
  if ((n > 1)) && [[ -z $timer ]]; then
    read_cancels
    for pid in "\${!t_id[@]}"; do
      [[ -z \${t_stop[$pid]} ]] && is_cancelled "\${t_id[$pid]}" && stop_task "$pid" cancel
    done
    for ((i = next; i < n; i++)); do
      [[ -n \${lines[i]} ]] || continue
      id=\${lines[i]#* } id=\${id%% *}
      if is_cancelled "$id"; then
        skip_task "$id"
        lines[i]=
      fi
    done
  fi
  while ((next < n && \${#free[@]} > 0)) && [[ -z $term ]]; do
    line=\${lines[next]}
    next=$((next + 1))
    [[ -n $line ]] || continue
    id=\${line#* } id=\${id%% *}
    if is_cancelled "$id"; then skip_task "$id"; else start_task "$line"; fi
  done
  ((running > 0)) || break
  if ((n > 1)) && [[ -z $timer ]]; then
    sleep 2 &
    forked $!
    timer=$!
  fi
  done_pid=
  wait -n -p done_pid "\${!t_id[@]}" \${timer:+"$timer"} 2>/dev/null
  status=$?
  # wait -p names the child whose own status it returns (bash reports ends only: job control is off here).
  if [[ -n \${done_pid:-} && \${done_pid} == "$timer" ]]; then
    timer=
  elif [[ -n \${done_pid:-} && -n \${t_id[$done_pid]:-} ]]; then
    end_task "$done_pid" "$status"
  fi
  # Tasks that ended unseen (bash loses the status of a child that ends while a trap runs): gone, so reaped.
  # wait PID (not -n: bash may have moved it from its jobs to its saved statuses) says what bash kept, and -p
  # tells a kept 127 (a task's own "command not found") from the 127 bash gives for a pid it does not know.
  for pid in "\${!t_id[@]}"; do
    kill -0 "$pid" 2>/dev/null && continue
    done_pid=
    wait -p done_pid "$pid" 2>/dev/null
    status=$?
    if [[ -n \${done_pid:-} ]] || ((status != 127)); then end_task "$pid" "$status"; else end_task "$pid"; fi
  done
done
[[ -n $timer ]] && kill "$timer" 2>/dev/null
end_reason=done
[[ -n $cancel_all ]] && end_reason=cancelled
rec "{\\"type\\":\\"runner-end\\",\\"at\\":\${EPOCHREALTIME/,/.},\\"reason\\":\\"$end_reason\\"}"
[[ -n $all_ok ]]
`;
}
