#!/usr/bin/env bash
# Bring up a single-node Son of Grid Engine (8.1.9, Debian packages) for drover's tests and CI.
#
# Installs the packages when missing, fixes the host-name aliasing, starts sge_qmaster, configures the cluster
# (exec host, @allhosts, PE smp, queue all.q with 32 slots, fast scheduler, root may submit), starts sge_execd,
# waits until all.q takes jobs and runs a smoke job. Idempotent: daemons that are still alive are reused.
# Must run as root. Stop with gridengine-down.sh. See docs/test-cluster-gridengine.md.
#
# Environment:
#   DROVER_TEST_CLUSTER_STATE  state folder root (default /run/drover-test-cluster); PIDs go to <root>/gridengine
#   GRIDENGINE_SLOTS           slots of all.q (default 32)
#   GRIDENGINE_READY_TIMEOUT   seconds to wait for the queue (default 60)
set -euo pipefail

T0=$(date +%s.%N)
STATE_DIR="${DROVER_TEST_CLUSTER_STATE:-/run/drover-test-cluster}/gridengine"
SLOTS="${GRIDENGINE_SLOTS:-32}"
READY_TIMEOUT="${GRIDENGINE_READY_TIMEOUT:-60}"
SGE_ROOT_DIR=/var/lib/gridengine
SGE_CELL_NAME=default
COMMON="$SGE_ROOT_DIR/$SGE_CELL_NAME/common"
SPOOL=/var/spool/gridengine
QMASTER_PIDFILE="$SPOOL/qmaster/qmaster.pid"
HOST=$(hostname)
PACKAGES=(gridengine-master gridengine-exec gridengine-client)

log() { echo "gridengine-up: $*" >&2; }
die() { echo "gridengine-up: ERROR: $*" >&2; exit 1; }
elapsed() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }

[ "$(id -u)" = 0 ] || die "must run as root"
[ -n "$HOST" ] || die "empty host name"

mkdir -p "$STATE_DIR"
WORK=$(mktemp -d)
POLICY_CREATED=
cleanup() {
  rm -rf "$WORK"
  if [ -n "$POLICY_CREATED" ]; then rm -f /usr/sbin/policy-rc.d; fi
}
trap cleanup EXIT

# One bring-up (or tear-down) at a time. fd 9 must not leak into the daemons (see start_daemon).
exec 9>"$STATE_DIR/lock"
flock -w 900 9 || die "could not lock $STATE_DIR/lock"

# --- helpers --------------------------------------------------------------------------------------------------------

# alive PID COMM: true when PID runs a program whose comm is COMM (PID files in /run and the spool survive reboots).
alive() {
  [ -n "${1:-}" ] && [ -r "/proc/$1/comm" ] && [ "$(cat "/proc/$1/comm" 2>/dev/null)" = "$2" ]
}
read_pid() { [ -r "$1" ] && tr -dc '0-9' <"$1" || true; }

qmaster_pid() {
  local p
  for p in "$(read_pid "$STATE_DIR/sge_qmaster.pid")" "$(read_pid "$QMASTER_PIDFILE")"; do
    if alive "$p" sge_qmaster; then echo "$p"; return 0; fi
  done
  return 1
}
execd_pid() {
  local p f
  p=$(read_pid "$STATE_DIR/sge_execd.pid")
  if alive "$p" sge_execd; then echo "$p"; return 0; fi
  for f in "$SPOOL"/execd/*/execd.pid; do
    p=$(read_pid "$f")
    if alive "$p" sge_execd; then echo "$p"; return 0; fi
  done
  return 1
}

# start_daemon PROGRAM: run a self-daemonising SGE daemon with no inherited fds beyond /dev/null stdio.
start_daemon() {
  (
    cd /
    for fd in /proc/"$BASHPID"/fd/*; do
      fd=${fd##*/}
      case "$fd" in 0|1|2) continue ;; esac
      eval "exec $fd>&-" 2>/dev/null || true
    done
    exec "$1" </dev/null >/dev/null 2>&1
  ) || die "$1 exited with status $?"
}

# wait_for SECONDS DESCRIPTION COMMAND...: poll COMMAND every 0.2 s until it succeeds.
wait_for() {
  local secs=$1 what=$2 end
  shift 2
  end=$(( $(date +%s) + secs ))
  until "$@"; do
    [ "$(date +%s)" -lt "$end" ] || return 1
    sleep 0.2
  done
}

# q PROGRAM ARGS...: run a Grid Engine client with a timeout. The /usr/bin/q* wrappers only set SGE_ROOT/SGE_CELL
# but run util/arch each time (~80 ms); call the binaries directly when present.
export SGE_ROOT="$SGE_ROOT_DIR" SGE_CELL="$SGE_CELL_NAME"
q() {
  local prog=$1
  shift
  if [ -x "/usr/lib/gridengine/$prog" ]; then timeout 30 "/usr/lib/gridengine/$prog" "$@"; else timeout 30 "$prog" "$@"; fi
}

# qconf -s* output wraps long values with a trailing backslash: join them.
join_lines() { sed -e ':a' -e '/\\$/N; s/\\\n[[:space:]]*/ /; ta'; }

# same_attrs A B: the two attribute files hold the same values (ignoring spacing).
same_attrs() { cmp -s <(awk '{ $1 = $1; print }' "$1") <(awk '{ $1 = $1; print }' "$2"); }

# set_attr FILE KEY VALUE: replace the value of KEY (first column) in a qconf attribute file.
set_attr() {
  awk -v k="$2" -v v="$3" '$1 == k { printf "%-32s %s\n", k, v; found = 1; next } { print }
    END { if (!found) printf "%-32s %s\n", k, v }' "$1" >"$1.new" && mv "$1.new" "$1"
}

# add_or_modify SHOW_CMD ADD_OPT MOD_OPT NAME FILE: create the object from FILE, or modify it when it exists.
add_or_modify() {
  local show=$1 add=$2 mod=$3 name=$4 file=$5
  if q qconf "$show" "$name" >/dev/null 2>&1; then
    q qconf "$mod" "$file" >"$WORK/out" 2>&1 || { cat "$WORK/out" >&2; die "qconf $mod $name failed"; }
  else
    q qconf "$add" "$file" >"$WORK/out" 2>&1 || { cat "$WORK/out" >&2; die "qconf $add $name failed"; }
  fi
}

# --- 1. packages ----------------------------------------------------------------------------------------------------

installed() {
  local p
  for p in "${PACKAGES[@]}"; do
    [ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" = "install ok installed" ] || return 1
  done
}

INSTALL_SECS=
if ! installed; then
  t=$(date +%s.%N)
  log "installing ${PACKAGES[*]}"
  debconf-set-selections <<EOF
gridengine-common shared/gridengineconfig boolean true
gridengine-common shared/gridenginecell string $SGE_CELL_NAME
gridengine-common shared/gridenginemaster string $HOST
gridengine-master shared/gridengineconfig boolean true
gridengine-master shared/gridenginecell string $SGE_CELL_NAME
gridengine-master shared/gridenginemaster string $HOST
gridengine-client shared/gridengineconfig boolean true
gridengine-client shared/gridenginecell string $SGE_CELL_NAME
gridengine-client shared/gridenginemaster string $HOST
EOF
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    # Keep the packages' postinst from starting daemons; removed again by cleanup.
    printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
    chmod 755 /usr/sbin/policy-rc.d
    POLICY_CREATED=1
  fi
  if ! apt-cache policy gridengine-master 2>/dev/null | grep -q 'Candidate: [0-9]'; then
    apt-get -o DPkg::Lock::Timeout=900 update -qq >"$WORK/apt.log" 2>&1 || { cat "$WORK/apt.log" >&2; die "apt-get update failed"; }
  fi
  DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=900 install -y -qq "${PACKAGES[@]}" \
    >"$WORK/apt.log" 2>&1 || { cat "$WORK/apt.log" >&2; die "apt-get install failed"; }
  if [ -n "$POLICY_CREATED" ]; then rm -f /usr/sbin/policy-rc.d; POLICY_CREATED=; fi
  INSTALL_SECS=$(elapsed "$t")
  log "installed in ${INSTALL_SECS}s"
fi

# The package postinst initialises the BerkeleyDB spool only on a fresh install with gridengineconfig=true.
if [ ! -e "$SPOOL/spooldb/sge" ] || [ ! -e "$COMMON/bootstrap" ]; then
  log "initialising the cluster spool"
  su -s /bin/sh -c "/usr/share/gridengine/scripts/init_cluster $SGE_ROOT_DIR $SGE_CELL_NAME $SPOOL/spooldb sgeadmin" \
    sgeadmin >"$WORK/init.log" 2>&1 || { cat "$WORK/init.log" >&2; die "init_cluster failed"; }
fi

# --- 2. host name aliasing ------------------------------------------------------------------------------------------
# Clients resolve their IP back to a name (127.0.0.1 -> localhost) that differs from `hostname`; qmaster then
# refuses them ("access denied ... not identical to clients host name"). Declare those names aliases of $HOST.

aliases="localhost"
addr=$(getent hosts "$HOST" | awk 'NR == 1 { print $1 }' || true)
if [ -n "$addr" ]; then
  for n in $(getent hosts "$addr" | awk '{ for (i = 2; i <= NF; i++) print $i }' || true); do
    case " $aliases $HOST " in *" $n "*) ;; *) aliases="$aliases $n" ;; esac
  done
fi
aliases=$(for n in $aliases; do [ "$n" = "$HOST" ] || printf '%s ' "$n"; done)
aliases=${aliases% }
want_aliases="$HOST${aliases:+ $aliases}"
changed=
if [ "$(cat "$COMMON/host_aliases" 2>/dev/null)" != "$want_aliases" ]; then
  echo "$want_aliases" >"$COMMON/host_aliases"; changed=1
fi
if [ "$(cat "$COMMON/act_qmaster" 2>/dev/null)" != "$HOST" ]; then
  echo "$HOST" >"$COMMON/act_qmaster"; changed=1
fi
if [ -n "$changed" ] && { qmaster_pid >/dev/null || execd_pid >/dev/null; }; then
  die "host_aliases/act_qmaster changed while Grid Engine daemons run; run gridengine-down.sh first"
fi

# --- 3. qmaster -----------------------------------------------------------------------------------------------------

REUSED=()
STARTED=()
if QM_PID=$(qmaster_pid); then
  REUSED+=("sge_qmaster")
else
  rm -f "$QMASTER_PIDFILE"
  start_daemon /usr/sbin/sge_qmaster
  wait_for 30 "qmaster pid" eval 'qmaster_pid >/dev/null' || die "sge_qmaster did not start (see $SPOOL/qmaster/messages)"
  QM_PID=$(qmaster_pid)
  STARTED+=("sge_qmaster")
fi
echo "$QM_PID" >"$STATE_DIR/sge_qmaster.pid"
wait_for 30 "qmaster answers" eval 'q qconf -sh >/dev/null 2>&1' \
  || die "sge_qmaster (pid $QM_PID) does not answer: $(q qconf -sh 2>&1 | head -3)"

# --- 4. configuration (from files, no editor) -----------------------------------------------------------------------

q qconf -sh 2>/dev/null | grep -qx "$HOST" || q qconf -ah "$HOST" >/dev/null 2>&1
q qconf -ss 2>/dev/null | grep -qx "$HOST" || q qconf -as "$HOST" >/dev/null 2>&1

cat >"$WORK/exechost" <<EOF
hostname              $HOST
load_scaling          NONE
complex_values        NONE
user_lists            NONE
xuser_lists           NONE
projects              NONE
xprojects             NONE
usage_scaling         NONE
report_variables      NONE
EOF
q qconf -se "$HOST" >/dev/null 2>&1 || { q qconf -Ae "$WORK/exechost" >"$WORK/out" 2>&1 || { cat "$WORK/out" >&2; die "qconf -Ae failed"; }; }

cat >"$WORK/allhosts" <<EOF
group_name @allhosts
hostlist $HOST
EOF
add_or_modify -shgrp -Ahgrp -Mhgrp @allhosts "$WORK/allhosts"

cat >"$WORK/pe_smp" <<'EOF'
pe_name            smp
slots              9999
user_lists         NONE
xuser_lists        NONE
start_proc_args    NONE
stop_proc_args     NONE
allocation_rule    $pe_slots
control_slaves     TRUE
job_is_first_task  TRUE
urgency_slots      min
accounting_summary TRUE
qsort_args         NONE
EOF
add_or_modify -sp -Ap -Mp smp "$WORK/pe_smp"

cat >"$WORK/queue" <<EOF
qname                 all.q
hostlist              @allhosts
seq_no                0
load_thresholds       NONE
suspend_thresholds    NONE
nsuspend              1
suspend_interval      00:05:00
priority              0
min_cpu_interval      00:05:00
processors            UNDEFINED
qtype                 BATCH INTERACTIVE
ckpt_list             NONE
pe_list               smp
rerun                 FALSE
slots                 $SLOTS
tmpdir                /tmp
shell                 /bin/sh
prolog                NONE
epilog                NONE
shell_start_mode      posix_compliant
starter_method        NONE
suspend_method        NONE
resume_method         NONE
terminate_method      NONE
notify                00:00:60
owner_list            NONE
user_lists            NONE
xuser_lists           NONE
subordinate_list      NONE
complex_values        NONE
projects              NONE
xprojects             NONE
calendar              NONE
initial_state         default
s_rt                  INFINITY
h_rt                  INFINITY
s_cpu                 INFINITY
h_cpu                 INFINITY
s_fsize               INFINITY
h_fsize               INFINITY
s_data                INFINITY
h_data                INFINITY
s_stack               INFINITY
h_stack               INFINITY
s_core                INFINITY
h_core                INFINITY
s_rss                 INFINITY
h_rss                 INFINITY
s_vmem                INFINITY
h_vmem                INFINITY
EOF
add_or_modify -sq -Aq -Mq all.q "$WORK/queue"

# Scheduler: run every second instead of every 15 s, and right after submissions and job ends.
q qconf -ssconf | join_lines >"$WORK/sconf"
cp "$WORK/sconf" "$WORK/sconf.old"
set_attr "$WORK/sconf" schedule_interval 0:0:1
set_attr "$WORK/sconf" flush_submit_sec 1
set_attr "$WORK/sconf" flush_finish_sec 1
if ! same_attrs "$WORK/sconf" "$WORK/sconf.old"; then
  q qconf -Msconf "$WORK/sconf" >"$WORK/out" 2>&1 || { cat "$WORK/out" >&2; die "qconf -Msconf failed"; }
fi

# Global configuration: accounting flushed every second (qacct sees jobs quickly); root may submit (min_uid 0);
# no login shells; load reports every 2 s.
# qconf -Mconf takes file names as configuration names: the file must be called "global".
mkdir -p "$WORK/conf.d"
q qconf -sconf global | join_lines | grep -v '^#' >"$WORK/conf"
cp "$WORK/conf" "$WORK/conf.old"
reporting=$(awk '$1 == "reporting_params" { $1 = ""; sub(/^ +/, ""); print }' "$WORK/conf")
if echo "$reporting" | grep -q 'flush_time='; then
  reporting=$(echo "$reporting" | sed -E 's/(^| )flush_time=[^ ]*/\1flush_time=00:00:01/')
else
  reporting="$reporting flush_time=00:00:01"
fi
set_attr "$WORK/conf" reporting_params "$reporting"
set_attr "$WORK/conf" min_uid 0
set_attr "$WORK/conf" min_gid 0
# Jobs start their shell as a plain (non-login) shell: a login bash reads the submitting user's dotfiles, and
# a slow or stuck one (pyenv's rehash lock, left behind when a job is killed mid-rehash, stalls every later
# login bash for 60 s) then eats the jobs' time limits. -V passes the submitter's environment anyway.
set_attr "$WORK/conf" login_shells none
# The execd reports every 2 s (default 40): qmaster sends the kill of a task `qmod -rj` reschedules, and frees the
# host for its next run, only in answer to the execd's reports, so the default took up to 70 s to stop it and
# 130 s to run it again (qmaster/reschedule.c, job_report_qmaster.c: skip_restarted_job; measured here).
set_attr "$WORK/conf" load_report_time 00:00:02
CONF_CHANGED=
if ! same_attrs "$WORK/conf" "$WORK/conf.old"; then
  cp "$WORK/conf" "$WORK/conf.d/global"
  (cd "$WORK/conf.d" && q qconf -Mconf global) >"$WORK/out" 2>&1 || { cat "$WORK/out" >&2; die "qconf -Mconf failed"; }
  CONF_CHANGED=1
fi

# --- 5. execd -------------------------------------------------------------------------------------------------------

if EX_PID=$(execd_pid) && [ -n "$CONF_CHANGED" ]; then
  # A running execd keeps the old min_uid/min_gid: root's jobs would fail and put the queue into state E.
  log "global configuration changed: restarting sge_execd (pid $EX_PID)"
  q qconf -ke "$HOST" >/dev/null 2>&1 || true
  if ! wait_for 30 "execd exit" eval '! alive "$EX_PID" sge_execd'; then
    kill -TERM "$EX_PID" 2>/dev/null || true
    wait_for 10 "execd exit" eval '! alive "$EX_PID" sge_execd' || die "sge_execd (pid $EX_PID) does not stop"
  fi
fi
if EX_PID=$(execd_pid); then
  REUSED+=("sge_execd")
else
  start_daemon /usr/sbin/sge_execd
  wait_for 30 "execd pid" eval 'execd_pid >/dev/null' || die "sge_execd did not start (see $SPOOL/execd/*/messages)"
  EX_PID=$(execd_pid)
  STARTED+=("sge_execd")
fi
echo "$EX_PID" >"$STATE_DIR/sge_execd.pid"

# --- 6. wait until all.q@HOST takes jobs ----------------------------------------------------------------------------
# Ready: the queue instance shows a load value (execd reports) and no state letters. Clear E (error) and d (disabled).

QI="all.q@$HOST"
queue_line() { q qstat -f -q "$QI" 2>/dev/null | awk -v qi="$QI" '$1 == qi { print; exit }'; }
queue_ready() {
  local line load states
  line=$(queue_line)
  [ -n "$line" ] || return 1
  load=$(echo "$line" | awk '{ print $4 }')
  states=$(echo "$line" | awk '{ print $6 }')
  case "$states" in *E*) q qmod -c "$QI" >/dev/null 2>&1 || true ;; esac
  case "$states" in *d*) q qmod -e "$QI" >/dev/null 2>&1 || true ;; esac
  [ -n "$load" ] && [ "$load" != "-NA-" ] && [ -z "$states" ]
}
if ! wait_for "$READY_TIMEOUT" "queue ready" queue_ready; then
  die "queue $QI not ready after ${READY_TIMEOUT}s: '$(queue_line)'; $(q qstat -f -explain aE -q "$QI" 2>&1 | tail -n +3 | head -5)"
fi

# --- 7. smoke job ---------------------------------------------------------------------------------------------------

t=$(date +%s.%N)
if ! (cd "$WORK" && timeout 120 qsub -sync y -b y -N drover_smoke -o /dev/null -j y true >"$WORK/smoke" 2>&1); then
  cat "$WORK/smoke" >&2
  die "smoke job failed"
fi
SMOKE_SECS=$(elapsed "$t")

echo "gridengine-up: ready on $HOST in $(elapsed "$T0")s (${INSTALL_SECS:+install ${INSTALL_SECS}s, }started: ${STARTED[*]:-none}; reused: ${REUSED[*]:-none}; qmaster $QM_PID, execd $EX_PID; smoke job ${SMOKE_SECS}s)"
