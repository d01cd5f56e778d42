# drover's packed element runner in Python: what a packed Slurm array element runs when the node has Python 3.8 or
# later (the bash element runner, element.sh, otherwise, and it is the one that starts this). Same inputs (the
# group's lines of the task table) and the same records, logs, variables, slots, GPU pinning, cancel requests and
# scheduler stop as the bash one, but tasks are started with posix_spawn (no copy of the runner's memory) and a task
# costs about a third of the CPU: ten packed elements of 100 `/bin/true` on 2 cores run in about half the time.
#
# Usage: python3 -I -S element.py SETTINGS KEY. SETTINGS holds NUL-terminated NAME=VALUE entries
# (src/runner/program-settings.ts): DROVER_S_* entries are settings, the others variables for the tasks.
# drover_common.py, the code it shares with the spawn server, is beside this file.
import collections
import errno
import json
import os
import signal
import sys
import time

settings_file, key = sys.argv[1], sys.argv[2]
with open(settings_file, 'rb') as f:
    entries = [e.split(b'=', 1) for e in f.read().split(b'\0')[:-1]]
S = dict((os.fsdecode(k[9:]).lower(), os.fsdecode(v)) for k, v in entries if k.startswith(b'DROVER_S_'))
if sys.version_info < (3, 8) or not hasattr(os, 'posix_spawn'):
    os.environ['DROVER_ELEMENT_RUNNER'] = 'bash'
    os.execv('/bin/bash', ['/bin/bash', S['element_sh'], 'runner', '-', '--group', key])
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import drover_common as common  # noqa: E402 (after the version check: it needs Python 3.8)


def words(s):
    # The table's ANSI-C quoted words ($'...', escapes \\ \' \n \t \xHH), separated by one space.
    out, i, n = [], 0, len(s)
    while i < n:
        i += 2
        w = bytearray()
        while s[i] != 39:
            if s[i] == 92:
                e = s[i + 1]
                if e == 110:
                    w.append(10)
                    i += 2
                elif e == 116:
                    w.append(9)
                    i += 2
                elif e == 120:
                    w.append(int(s[i + 2:i + 4], 16))
                    i += 4
                else:
                    w.append(e)
                    i += 2
            else:
                w.append(s[i])
                i += 1
        out.append(bytes(w))
        i += 2
    return out


per = int(S['per'])
first, last = (int(key) - 1) * per + 1, int(key) * per
tasks = []
with open(S['table'], 'rb') as f:
    for no, line in enumerate(f, 1):
        if no > last:
            break
        line = line.rstrip(b'\n')
        if no < first or not line:
            continue
        attempt, id, mode, rest = line.split(b' ', 3)
        w = words(rest)
        tasks.append((int(id), int(attempt), w if mode == b'D' else [b'/bin/sh', b'-c', w[0]]))

os.chdir(S['cwd'])
for k, v in entries:
    if not k.startswith(b'DROVER_S_'):
        os.environb[k] = v
job, launch = S['job'], int(S['launch'])
# The element's limit (--duration, whole seconds) from about its start: its tasks' DROVER_DEADLINE.
runner_end = int(time.time()) + int(S['runner_limit']) if 'runner_limit' in S else None
os.environ['DROVER_JOBNAME'] = job
os.environ['DROVER_LAUNCH'] = str(launch)
host = os.uname().nodename.split('.')[0]
name = 'g%s.%s.%d' % (key, host, os.getpid())
SIGNAL_NAMES = S['signal_names'].split(' ')


def signal_name(n):
    return 'SIG' + (SIGNAL_NAMES[n - 1] if 1 <= n <= len(SIGNAL_NAMES) else str(n))


def end_state(stop, status):
    # How a task's end becomes its state: the rows of src/runner/end-state.ts, in its order, with the reasons
    # and signal names of the settings (no time limits here, and waitpid always tells how a task ended). STOP is
    # why this runner stopped the task (cancel, scheduler, or None); STATUS is its wait status.
    code, sig = None, None
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
    else:
        code = os.WEXITSTATUS(status)
        if 1 <= code - 128 <= len(SIGNAL_NAMES):
            code, sig = None, code - 128
    if stop == 'cancel':
        state, reason = 'cancelled', None
    elif stop == 'scheduler':
        state, reason = 'killed', S['reason_scheduler_stop']
    elif sig is not None:
        state, reason = 'killed', None
    else:
        state, reason = 'succeeded' if code == 0 else 'failed', None
    r = {'state': state, 'exit_code': code, 'signal': None if sig is None else signal_name(sig)}
    if reason is not None:
        r['reason'] = reason
    return r


# Never more slots than the element has tasks: a slot is an entry in the free list.
slots, k = max(1, min(int(S['slots']), len(tasks))), int(S['gpus_per_task'])
slot_gpus = {}
if k > 0:
    visible = [g for g in os.environ.get('CUDA_VISIBLE_DEVICES', '').split(',') if g != '']
    fit = len(visible) // k
    if fit < 1:
        sys.stderr.write("drover: each task needs %d GPU(s) but %d are visible (CUDA_VISIBLE_DEVICES='%s')\n" % (
            k, len(visible), os.environ.get('CUDA_VISIBLE_DEVICES', '')))
        sys.exit(2)
    slots = min(slots, fit)
    for i in range(slots):
        slot_gpus[i] = ','.join(visible[i * k:(i + 1) * k])
free = list(range(slots))
rec_path = os.path.join(S['records_dir'], name + '.jsonl')
rec_fd = os.open(rec_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
rec_size = os.fstat(rec_fd).st_size
pending = []
rec_state = {'blocked': False, 'torn': False}


def rec(**r):
    pending.append(json.dumps(r, separators=(',', ':'), ensure_ascii=False))


def say(text):
    try:
        sys.stderr.write('drover: %s\n' % text)
        sys.stderr.flush()
    except OSError:
        pass


def flush():
    # Whole lines only. When the disk refuses a write (full, read-only), the part of a line that got out is cut
    # off again and the records wait here; no task starts until they are written (the loop calls this again).
    global rec_size
    if not pending:
        return True
    data = (b'\n' if rec_state['torn'] else b'') + ('\n'.join(pending) + '\n').encode()
    done = 0
    try:
        while done < len(data):
            done += os.write(rec_fd, data[done:])
    except OSError as e:
        whole = data.rfind(b'\n', 0, done) + 1
        rec_size += whole
        if whole > 0:
            rec_state['torn'] = False
            del pending[:data.count(b'\n', 0, whole) - (1 if data.startswith(b'\n') else 0)]
        if done > whole:
            try:
                os.ftruncate(rec_fd, rec_size)
            except OSError:
                rec_state['torn'] = True  # the next write ends the damaged line first
        if not rec_state['blocked']:
            rec_state['blocked'] = True
            say('%s at %s: keeping %d record(s) in memory and trying again every second; no new task starts until'
                ' they are written' % (os.strerror(e.errno), rec_path, len(pending)))
        return False
    rec_size += done
    rec_state['torn'] = False
    del pending[:]
    if rec_state['blocked']:
        rec_state['blocked'] = False
        say('records written again to %s' % rec_path)
    return True


def now():
    return round(time.time(), 6)


def end_stamp(started, mono):
    # An attempt's end: its start's stamp plus the time since on the monotonic clock, so it never ends before it
    # started whatever the wall clock does meanwhile.
    return round(started + time.monotonic() - mono, 6)


rec(type='runner', v=1, runner=name, launch=launch, job=job, host=host, pid=os.getpid(), pid_start=None,
    slots=slots, at=now())
flush()

flags = {'term': False, 'term_seen': False, 'usr1': False}


def on_signal(n, f):
    flags['term' if n == signal.SIGTERM else 'usr1'] = True


signal.signal(signal.SIGTERM, on_signal)
signal.signal(signal.SIGUSR1, on_signal)
log_dir = S['log_dir']
cancel_dir = S['cancel_dir']
kill_grace = float(S['kill_grace'])
cancelled, seen = set(), set()
cancel_all = False


def read_cancels():
    global cancel_all
    try:
        names = os.listdir(cancel_dir)
    except OSError:
        return
    for f in names:
        if not f.endswith('.json') or f in seen:
            continue
        try:
            with open(os.path.join(cancel_dir, f)) as h:
                req = json.load(h)
        except (OSError, ValueError):
            continue  # being written: read it next time
        seen.add(f)
        if req.get('tasks') == 'all':
            cancel_all = True
        else:
            cancelled.update(int(t) for t in req.get('tasks', []))


def is_cancelled(id):
    return cancel_all or id in cancelled


PATH = os.environ.get('PATH', '/usr/bin:/bin').encode()

running = {}  # pid -> [id, attempt, slot, stop reason or None, kill time, segment span or None, start, monotonic]
taps_of = {}  # pid -> its (stdout, stderr) Taps, in segments
all_ok = True

# Output in slot segments (`--logs segments`, src/protocol/log-slices.ts), as the spawn server writes them: each
# slot's two segments, opened once with O_APPEND, and its index; an attempt's output is the bytes between the
# sizes taken just before its spawn and just after its reap (its group killed first, and what it wrote to its
# pipes copied in: common.Tap), and its entry in the index is written before the slot's next task starts.
use_segments = S.get('logs') == 'segments'
segments = common.Segments()


def segment_base(slot):
    return os.path.join(log_dir, '%s.%d' % (name, slot))


def span_end(slot, seq):
    # Its ends after the reap (common.Segments.end), for the end record.
    ends = segments.end(segment_base(slot), seq)
    return {'out_end': ends[0], 'err_end': ends[1]} if ends else {}


def start(id, attempt, argv):
    global all_ok
    slot = free.pop(0)
    out = os.path.join(log_dir, '%d.%d.out' % (id, attempt))
    err = os.path.join(log_dir, '%d.%d.err' % (id, attempt))
    env = dict(os.environ)
    env.update(DROVER_TASK_ID=str(id), DROVER_ATTEMPT=str(attempt), DROVER_SLOT=str(slot),
               DROVER_RESULT_FILE=os.path.join(log_dir, '%d.%d.result.json' % (id, attempt)))
    if runner_end is not None:
        env.update(DROVER_DEADLINE=str(runner_end), DROVER_TIME_LEFT_S=str(max(0, runner_end - int(time.time()))))
    gpus = slot_gpus.get(slot)
    if gpus is not None:
        env['CUDA_VISIBLE_DEVICES'] = gpus
    pid, code = 0, None
    ofd = efd = -1
    span, where = None, {}
    try:
        if use_segments:
            ofd, efd, span, ooff, eoff = segments.begin(segment_base(slot))
            out, err = segment_base(slot) + '.out', segment_base(slot) + '.err'
            where = {'out_off': ooff, 'err_off': eoff, 'seq': span}
        else:
            ofd = os.open(out, common.LOG_FLAGS, 0o666)
            efd = os.open(err, common.LOG_FLAGS, 0o666)
    except OSError:
        code = 126
        if use_segments:
            out = err = ''  # no segment to read: the attempt has no log
        elif ofd >= 0:
            os.close(ofd)
    else:
        path = argv[0] if b'/' in argv[0] else common.which(argv[0], PATH)
        taps = ()
        try:
            if path is None:
                raise OSError(errno.ENOENT, os.strerror(errno.ENOENT))
            # In segments, the task writes to pipes of its own, cut when it ends (see common.Tap).
            taps = (common.Tap(ofd), common.Tap(efd)) if span is not None else ()
            pid = common.spawn_task(path, argv, env, *((taps[0].w, taps[1].w) if taps else (ofd, efd)))
        except OSError as e:
            for t in taps:
                t.close()
            taps = ()
            code = common.cannot_execute(efd, argv[0], e.errno)
        for t in taps:
            t.started()
        if taps:
            taps_of[pid] = taps
        if span is None:
            os.close(ofd)
            os.close(efd)
    started, mono = now(), time.monotonic()
    rec(type='start', task=id, attempt=attempt, at=started, pid=pid, slot=slot, gpus=gpus, host=host, out=out,
        err=err, **where)
    if code is not None:
        all_ok = False
        free.append(slot)
        ends = span_end(slot, span) if span is not None else {}
        rec(type='end', task=id, attempt=attempt, at=end_stamp(started, mono), **end_state(None, code << 8), **ends)
        return
    running[pid] = [id, attempt, slot, None, 0, span, started, mono]



def stop(pid, why):
    t = running[pid]
    t[3] = why
    t[4] = time.monotonic() + kill_grace
    try:
        os.killpg(pid, signal.SIGTERM)
    except OSError:
        pass


def ended(pid, status):
    global all_ok
    id, attempt, slot, why, _, span, started, mono = running.pop(pid)
    for t in taps_of.pop(pid, ()):
        t.cut()  # what the attempt wrote, before its ends are taken
    # Its ends are taken (and indexed) before the slot is free for the next task.
    ends = span_end(slot, span) if span is not None else {}
    free.append(slot)
    # A task that ended after this runner was sent SIGTERM was stopped by the scheduler, like those it stopped.
    r = end_state(why or ('scheduler' if flags['term'] else None), status)
    if r['state'] != 'succeeded':
        all_ok = False
    rec(type='end', task=id, attempt=attempt, at=end_stamp(started, mono), **r, **ends)


def skip(id):
    global all_ok
    all_ok = False
    rec(type='skip', task=id, at=now(), state='cancelled')


def skip_cancelled():
    # The queued tasks with a cancel request never start; the running ones are stopped.
    global queue
    for pid, t in list(running.items()):
        if t[3] is None and is_cancelled(t[0]):
            stop(pid, 'cancel')
    if cancel_all or cancelled:
        keep = collections.deque()
        for t in queue:
            if is_cancelled(t[0]):
                skip(t[0])
            else:
                keep.append(t)
        queue = keep


def on_term():
    # The scheduler stops the element (and drover cancel asks for it with its cancel requests): the tasks with a
    # cancel request are cancelled, the other running ones stopped; those not started get no record.
    global queue
    flags['term_seen'] = True
    read_cancels()
    skip_cancelled()
    for pid, t in list(running.items()):
        if t[3] is None:
            stop(pid, 'scheduler')
    queue = collections.deque()


read_cancels()
next_check = time.monotonic() + 2
queue = collections.deque(tasks)
skip_cancelled()
while True:
    if flags['term'] and not flags['term_seen']:
        on_term()
    if not flags['term'] and (flags['usr1'] or time.monotonic() >= next_check):
        flags['usr1'] = False
        next_check = time.monotonic() + 2
        read_cancels()
        skip_cancelled()
    while queue and free and not rec_state['blocked']:
        id, attempt, argv = queue.popleft()
        start(id, attempt, argv)
    flush()
    if not running and not queue:
        break
    now_m = time.monotonic()
    for pid, t in running.items():
        if t[3] is not None and t[4] and now_m >= t[4]:
            t[4] = 0
            try:
                os.killpg(pid, signal.SIGKILL)
            except OSError:
                pass
    busy = False
    for taps in taps_of.values():
        for t in taps:
            busy = t.pump() or busy
    pipes = [t.r for taps in taps_of.values() for t in taps if t.r >= 0]
    common.wait_for_children(pipes, 0 if busy else max(0.0, min(1.0, next_check - now_m)))
    # A SIGTERM that ended the wait is seen before the ends it may have caused.
    if flags['term'] and not flags['term_seen']:
        on_term()
    if running:
        for pid, status in common.reaped():
            if pid in running:
                ended(pid, status)
            if not running:
                break
rec(type='runner-end', at=now(), reason='cancelled' if cancel_all or flags['term'] else 'done')
while not flush():
    time.sleep(1)
sys.exit(0 if all_ok else 1)
