# drover's spawn server: starts the tasks of drover's runner (src/runner/starters/fork-server.ts), with the protocol of the
# Perl fork server (fork-server.pl), but with tasks started by posix_spawn instead of fork. glibc's posix_spawn does
# not copy the server's page tables (it uses a vfork-style clone), and the fork of an interpreter and the
# copy-on-write faults after it were the largest cost of a short task: 2000 `/bin/true` with two slots take about
# 1.3 s this way against 2.1 s with Perl's fork on the same machine.
#
# Same messages in and reports out as the Perl server, with two differences that only make it faster: reports are
# gathered for up to 20 ms and go out in one write (waking the runner once per task costs more CPU than the task
# itself on a VM), and the log files are opened by the server (so a log that cannot be written is told from a
# program that cannot be executed). A task whose folder is not the server's is started with fork.
#
# A process per slot. posix_spawn waits for the child's execve (the vfork): with one process for every slot, a
# task that ends while another slot's task is being spawned waits for that spawn, ~10% of a launch of short tasks
# on two cores. So the process the runner starts, the leader, forks a worker per slot (at the slot's `L`), and
# the queue is a pipe they share: the leader writes each queued task into it as it comes (a 4-byte length, then
# the message), and a worker whose slot is free takes the next one under a lock (lockf on the pipe): tasks start
# in the order they were queued, and none waits behind a long task while a slot is free. Each worker reports
# straight to the runner, whole lines in writes of at most PIPE_BUF bytes (never mixed with another worker's).
# A withdrawal (`W`, and `A` for every queued task) is the leader's: it takes the queue's lock, reads the queue
# back, answers `X` for each task withdrawn and writes the others back in order, at once, as the one-process
# server did (a task a worker has taken already is not withdrawn: its start is reported). It does so before it
# passes on anything read after the withdrawal, so a withdrawal the runner wrote before it stopped a task is out
# of the queue before the stopped task's slot can take the next one. The leader passes `E`, `G`, `K` and `A` to
# every worker, each on its own pipe and in the order it read them. When its input ends, the leader tells each
# worker so (`Q`: start nothing more, stop the task as below, exit) and exits once they have. A worker whose pipe ends without a `Q` has lost
# its leader (killed, or ended because another worker was): the server is gone as a whole, so the worker reports
# what it has and exits at once, leaving its task to the runner, which stops every task of a dead server by its
# pid and records it lost (a worker that stopped it would have it recorded `killed`, which no one asked for).
#
# Output in segments (`T` messages, src/protocol/log-slices.ts): each (prefix, slot) has its two segment files,
# opened once with O_APPEND, and its index. The sizes of both segments are taken just before a task is spawned
# (its start offsets, reported with its start) and just after it is reaped (its ends): the ends are written into
# the index, at the task's entry, before the slot's next task starts, and reported with its end. The task writes
# to two pipes of its own, copied into the segments as they fill and closed once it is reaped (common.Tap): what
# a process it left outside its group writes after that reaches no later attempt's slice.
# Needs Python 3.8 (os.posix_spawn with setpgroup and setsigdef); the runner checks before choosing it.
#
# Usage: python3 -I -S -c SOURCE COMMON, where COMMON is the text of drover_common.py (the code it shares with
# the element runner): the runner passes both from its own bundle, so nothing is read from disk.
import collections
import errno
import fcntl
import math
import os
import select
import signal
import sys
import time
import types

common = types.ModuleType('drover_common')
exec(compile(sys.argv[1], 'drover_common.py', 'exec'), common.__dict__)
for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
    signal.signal(s, signal.SIG_IGN)
start_dir = os.getcwd().encode()
base = {}
grace = 5.0
out = []
eof = False
aborted = False
FLUSH_EVERY = 0.02
PIPE_BUF = select.PIPE_BUF
# The queue: the leader writes its end, every worker reads it; lockf needs a writable descriptor, so the lock is
# taken on the writing end (workers never write to it).
queue_r, queue_w = os.pipe()
os.set_blocking(queue_r, False)
os.set_blocking(queue_w, False)


def pairs(kvs):
    d = {}
    for kv in kvs:
        i = kv.index(b'=')
        d[kv[:i]] = kv[i + 1:]
    return d


def limit_env(limit, now):
    # `S,U` (starter.ts limitPair): seconds from the start and an end in Unix seconds, either empty.
    s, u = limit.split(b',')
    end = min(now + float(s) if s else math.inf, float(u) if u else math.inf)
    return {b'DROVER_TIME_LEFT_S': b'%d' % max(0, math.floor(end - now)), b'DROVER_DEADLINE': b'%d' % math.floor(end)}


def messages(buf, handle):
    # Messages are taken by position and the rest kept once: a pool worker may send thousands in one write.
    pos = 0
    while True:
        nl = buf.find(b'\n', pos)
        if nl < 0:
            break
        end = nl + 1 + int(buf[pos:nl])
        if len(buf) < end:
            break
        handle(buf[nl + 1:end])
        pos = end
    return buf[pos:]


def read_all(fd, buf):
    # What the fd holds now (it is non-blocking); the second value is True at its end.
    while True:
        try:
            chunk = os.read(fd, 1 << 16)
        except BlockingIOError:
            return buf, False
        if not chunk:
            return buf, True
        buf += chunk


def report(data):
    # Whole lines in writes of at most PIPE_BUF bytes: such a write to a pipe is never mixed with another
    # process's, and the leader and every worker write to the runner's one pipe. False when the runner is gone.
    try:
        while data:
            cut = len(data) if len(data) <= PIPE_BUF else data.rfind(b'\n', 0, PIPE_BUF) + 1 or len(data)
            data = data[os.write(1, data[:cut]):]
    except OSError:
        return False
    return True


# ---- a worker: one slot, its task, its segments

slot = None
slot_env = {}
ctl = -1
task_of = {}
pid_of = {}
span_of = {}  # pid -> (segment base, entry, out start, err start)
clock_of = {}  # pid -> (start stamp, monotonic time of it)
taps_of = {}  # pid -> its (stdout, stderr) Taps, in segments
quit = False  # the leader's `Q`: its input ended
segments = common.Segments()  # base `<prefix>.<slot>` -> its files
last_flush = 0.0


def span_end(span):
    # Its ends after the reap (common.Segments.end), for its report; '' when they cannot be read.
    at, seq, ooff, eoff = span
    ends = segments.end(at, seq)
    return '\t%d\t%d\t%d\t%d\t%d' % ((seq, ooff, eoff) + ends) if ends else ''


def end_stamp(clock):
    # An attempt's end: its start's stamp plus the time since on the monotonic clock, rounded up, so it never
    # ends before it started (nor runs for less time than it did) whatever the wall clock does meanwhile.
    started, mono = clock
    return math.ceil((started + time.monotonic() - mono) * 1000) / 1000


def fail(id, efd, argv0, e, clock, span=None):
    # As in sh: 127 when the program is not there, 126 when it cannot be executed; the reason in the log. Its
    # start is when the slot took it and its end the failure, on one clock.
    code = common.cannot_execute(efd, argv0, e)
    where = '\t%d\t%d\t%d' % span[1:] if span else ''
    end = '\t%.3f%s' % (end_stamp(clock), span_end(span) if span else '')
    out.append('S\t%s\t0\t%s\t%.3f%s\nE\t%s\t%d%s\n' % (id, slot, clock[0], where, id, code << 8, end))


def spawn_in(cwd, path, argv, env, ofd, efd):
    # A folder other than the server's: posix_spawn cannot change folder, so fork for this one.
    pid = os.fork()
    if pid == 0:
        try:
            os.setpgid(0, 0)
            for s in common.TASK_SIGNALS:
                signal.signal(s, signal.SIG_DFL)
            os.dup2(common.DEVNULL, 0)
            os.dup2(ofd, 1)
            os.dup2(efd, 2)
            try:
                os.chdir(cwd)
            except OSError as e:
                os.write(2, b'drover: cannot enter ' + cwd + b': ' + os.strerror(e.errno).encode() + b'\n')
                os._exit(126)
            try:
                os.execve(path, argv, env)
            except OSError as e:
                if e.errno == errno.ENOEXEC:
                    os.execve(b'/bin/sh', [b'/bin/sh', path] + argv[1:], env)
                os._exit(common.cannot_execute(2, argv[0], e.errno))
        finally:
            os._exit(126)
    return pid


def start(kind, f, started, mono):
    # `S id cwd out err nargs...` (its own log files) or `T id cwd prefix nargs...` (its slot's segments).
    id = f[0].decode()
    cwd = f[1]
    logs = f[2:4] if kind == b'S' else f[2:3]
    rest = f[2 + len(logs):]
    nargs = int(rest[0])
    argv = rest[1:1 + nargs]
    nenv = int(rest[1 + nargs])
    env = dict(base)
    env.update(slot_env)
    env.update(pairs(rest[2 + nargs:2 + nargs + nenv]))
    limit = env.pop(b'DROVER_LIMIT', None)
    if limit is not None:
        env.update(limit_env(limit, time.time()))
    span = None
    if kind == b'T':
        at = logs[0] + b'.' + slot.encode()
        try:
            ofd, efd, seq, ooff, eoff = segments.begin(at)
        except OSError:
            return fail(id, -1, argv[0], errno.EACCES, (started, mono))
        span = (at, seq, ooff, eoff)
    else:
        try:
            ofd = os.open(logs[0], common.LOG_FLAGS, 0o666)
        except OSError:
            return fail(id, -1, argv[0], errno.EACCES, (started, mono))
        try:
            efd = os.open(logs[1], common.LOG_FLAGS, 0o666)
        except OSError:
            os.close(ofd)
            return fail(id, -1, argv[0], errno.EACCES, (started, mono))
    taps = None
    try:
        path = argv[0] if b'/' in argv[0] else common.which(argv[0], env.get(b'PATH', b'/usr/bin:/bin'))
        if path is None:
            return fail(id, efd, argv[0], errno.ENOENT, (started, mono), span)
        # In segments, the task writes to pipes of its own, cut when it ends (see common.Tap).
        try:
            taps = (common.Tap(ofd), common.Tap(efd)) if span is not None else None
        except OSError as err:
            return fail(id, efd, argv[0], err.errno, (started, mono), span)
        tofd, tefd = (taps[0].w, taps[1].w) if taps else (ofd, efd)
        if cwd != start_dir:
            pid = spawn_in(cwd, path, argv, env, tofd, tefd)
        else:
            try:
                pid = common.spawn_task(path, argv, env, tofd, tefd)
            except OSError as err:
                for t in taps or ():
                    t.close()
                return fail(id, efd, argv[0], err.errno, (started, mono), span)
    finally:
        if span is None:
            os.close(ofd)
            os.close(efd)
    if taps:
        for t in taps:
            t.started()
        taps_of[pid] = taps
    task_of[pid] = id
    pid_of[id] = pid
    clock_of[pid] = (started, mono)
    where = ''
    if span is not None:
        span_of[pid] = span
        where = '\t%d\t%d\t%d' % span[1:]
    out.append('S\t%s\t%d\t%s\t%.3f%s\n' % (id, pid, slot, started, where))


def queue_read(n, first):
    # n bytes of the queue, under its lock; None when it is empty at the start of a message (first). The leader
    # writes whole messages in one write unless one is longer than PIPE_BUF: then the rest comes soon.
    data = b''
    while len(data) < n:
        try:
            chunk = os.read(queue_r, n - len(data))
        except BlockingIOError:
            if first and not data:
                return None
            if not select.select([queue_r], [], [], 1.0)[0] and os.getppid() != leader:
                raise SystemExit(1)  # the leader died half-way through writing a message
            continue
        data += chunk
    return data


def take():
    # The next task of the queue, (kind, fields, time taken, monotonic time taken), or None when there is none.
    # The time is stamped under the lock, before the spawn, and rounded down (its end after the reap, rounded up,
    # by end_stamp): tasks taken in order have starts in order, and the record never says a task ran for less
    # time than it did.
    fcntl.lockf(queue_w, fcntl.LOCK_EX)
    try:
        head = queue_read(4, True)
        if head is None:
            return None
        msg = queue_read(int.from_bytes(head, 'little'), False)
        started = math.floor(time.time() * 1000) / 1000
        mono = time.monotonic()
    finally:
        fcntl.lockf(queue_w, fcntl.LOCK_UN)
    f = msg.split(b'\0')[:-1]
    return f[0], f[1:], started, mono


def signal_tasks(sig):
    # Only tasks not reaped yet: their pids, and so their groups' ids, are still their own.
    for pid in task_of:
        try:
            os.killpg(pid, sig)
        except OSError:
            pass


def handle(msg):
    global aborted, base, grace, quit
    f = msg.split(b'\0')[:-1]
    kind = f[0]
    if kind == b'E':
        base = pairs(f[1:])
    elif kind == b'K':
        # Only a task not reaped yet: its pid, and so its group's id, is still its own.
        pid = pid_of.get(f[1].decode())
        if pid is not None:
            try:
                os.killpg(pid, int(f[2]))
            except OSError:
                pass
    elif kind == b'G':
        grace = float(f[1])
    elif kind == b'A':
        aborted = True
        signal_tasks(signal.SIGKILL)
    elif kind == b'Q':
        quit = True


def reap():
    for pid, status in common.reaped():
        id = task_of.pop(pid, None)
        if id is None:
            continue
        del pid_of[id]
        ended = end_stamp(clock_of.pop(pid))
        for t in taps_of.pop(pid, ()):
            t.cut()  # before the ends are taken: they are what the attempt wrote
        span = span_of.pop(pid, None)
        out.append('E\t%s\t%d\t%.3f%s\n' % (id, status, ended, span_end(span) if span else ''))


def flush(now, idle):
    global eof, last_flush
    if not out:
        return
    # Reports of up to FLUSH_EVERY go out in one write, so the runner wakes about 50 times a second per slot, not
    # once per task; at once when the slot is idle for want of a task, or the runner is about to hear the last ends.
    if now - last_flush < FLUSH_EVERY and not idle and not eof:
        return
    last_flush = now
    data = ''.join(out).encode()
    del out[:]
    if not report(data):
        eof = True  # the runner is gone: start nothing more, stop what runs


def worker():
    # Each turn reaps before it reads what the leader passed on, and reads before it takes a task: a withdrawal
    # the runner wrote before it stopped this slot's task is always read before the slot takes the next one.
    global eof
    buf = b''
    stop_at = 0
    gone = False
    while True:
        free = not task_of and not eof and not aborted
        timeout = max(0.0, last_flush + FLUSH_EVERY - time.monotonic()) if out else 1.0
        busy = False
        for taps in taps_of.values():
            for t in taps:
                busy = t.pump() or busy
        pipes = [t.r for taps in taps_of.values() for t in taps if t.r >= 0]
        common.wait_for_children(([] if eof else [ctl]) + ([queue_r] if free else []) + pipes, 0 if busy else timeout)
        reap()
        if not eof:
            buf, gone = read_all(ctl, buf)
            buf = messages(buf, handle)
            eof = quit
            if gone and not quit:
                report(''.join(out).encode())
                os._exit(1)
        idle = False
        while not task_of and not eof and not aborted:
            t = take()
            if t is None:
                idle = True
                break
            start(*t)
        flush(time.monotonic(), idle)
        if eof:
            if not task_of:
                return
            if not stop_at:
                signal_tasks(signal.SIGTERM)
                stop_at = time.monotonic()
            elif time.monotonic() - stop_at >= grace:
                signal_tasks(signal.SIGKILL)


# ---- the leader: reads the runner's messages, starts the workers, fills the queue

leader = os.getpid()
workers = {}  # pid -> its pipe's writing end
queued = collections.deque()  # what the queue pipe had no room for yet: chunks of whole messages
passed = []  # messages for every worker, this turn
withdrawals = set()  # ids the runner withdrew this turn


def fork_worker(index, env):
    global slot, slot_env, ctl
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            os.dup2(common.DEVNULL, 0)
            os.close(w)
            for fd in workers.values():
                os.close(fd)
            common.renew_wakeup()
            slot, slot_env, ctl = index, env, r
            os.set_blocking(ctl, False)
            worker()
            code = 0
        finally:
            os._exit(code)
    os.close(r)
    workers[pid] = w


def enqueue(frame):
    if queued and len(queued[-1]) + len(frame) <= PIPE_BUF:
        queued[-1] += frame
    else:
        queued.append(frame)


def take_back(ids):
    # The tasks of the queue (the pipe, and what it had no room for yet) whose ids are in `ids` (all of them when
    # None) are answered `X`; the others go back in their order. Under the queue's lock, so no worker takes one
    # meanwhile; a worker that holds it may be waiting for the rest of a long message, which only the leader can
    # write, so the leader writes while it waits.
    while True:
        try:
            fcntl.lockf(queue_w, fcntl.LOCK_EX | fcntl.LOCK_NB)
            break
        except OSError:
            fill()
            select.select([], [queue_w] if queued else [], [], 0.005)
    try:
        data, _ = read_all(queue_r, b'')
        data += b''.join(queued)
        queued.clear()
        pos = 0
        while pos < len(data):
            end = pos + 4 + int.from_bytes(data[pos:pos + 4], 'little')
            id = data[pos + 4:end].split(b'\0', 2)[1]
            if ids is None or id in ids:
                out.append('X\t%s\n' % id.decode())
            else:
                enqueue(data[pos:end])
            pos = end
        fill()
    finally:
        fcntl.lockf(queue_w, fcntl.LOCK_UN)


def lead(msg):
    global aborted, base, grace
    kind = msg[:1]
    if kind == b'S' or kind == b'T':
        if aborted:
            out.append('X\t%s\n' % msg.split(b'\0', 2)[1].decode())
        else:
            enqueue(len(msg).to_bytes(4, 'little') + msg)
        return
    f = msg.split(b'\0')[:-1]
    if kind == b'W':
        withdrawals.add(f[1])
        return
    if withdrawals:
        take_back(withdrawals)  # before anything read after them reaches a worker
        withdrawals.clear()
    if kind == b'L':
        fork_worker(f[1].decode(), pairs(f[2:]))
        return
    if kind == b'E':
        base = pairs(f[1:])
    elif kind == b'G':
        grace = float(f[1])
    elif kind == b'A':
        aborted = True
        take_back(None)
    passed.append(b'%d\n' % len(msg) + msg)


def fill():
    # Whole chunks while the pipe has room (a write of at most PIPE_BUF to a non-blocking pipe is all or nothing).
    while queued:
        try:
            n = os.write(queue_w, queued[0])
        except BlockingIOError:
            return
        if n < len(queued[0]):
            queued[0] = queued[0][n:]
            return
        queued.popleft()


def leader_main():
    buf = b''
    ended = False
    while True:
        common.wait_for_children([0], 1.0, [queue_w] if queued else [])
        while True:
            pid, _ = os.waitpid(-1, os.WNOHANG) if workers else (0, 0)
            if pid == 0:
                break
            # A worker ended while the runner still talks to it: it was killed. Its task runs on without it, so
            # the server is gone: the runner stops every task by its pid and records them lost.
            raise SystemExit(1)
        buf, ended = read_all(0, buf)
        buf = messages(buf, lead)
        if withdrawals:
            take_back(withdrawals)
            withdrawals.clear()
        if passed:
            data = b''.join(passed)
            del passed[:]
            for fd in workers.values():
                rest = data  # blocking: each worker's messages whole and in the order read
                try:
                    while rest:
                        rest = rest[os.write(fd, rest):]
                except OSError:
                    pass
        fill()
        if out:
            report(''.join(out).encode())
            del out[:]
        if ended:
            # Each worker stops its task and exits (`Q`); the leader exits after them.
            for fd in workers.values():
                try:
                    os.write(fd, b'2\nQ\0')
                except OSError:
                    pass
                os.close(fd)
            for pid in workers:
                os.waitpid(pid, 0)
            return


os.set_blocking(0, False)
leader_main()
