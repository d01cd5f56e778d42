# drover's spawn server: starts the tasks of drover's runner (src/runner/forkserver.ts), with the protocol of the
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
# Output in segments (`T` messages, src/protocol/log-slices.ts): each (prefix, slot) has its two segment files,
# opened once with O_APPEND, and its index. The sizes of both segments are taken just before a task is spawned
# (its start offsets, reported with its start) and just after it is reaped (its ends): the ends are written into
# the index, at the task's entry, before the slot's next task starts, and reported with its end.
# Needs Python 3.8 (os.posix_spawn with setpgroup and setsigdef); the runner checks before choosing it.
#
# Usage: python3 -I -S -c SOURCE COMMON, where COMMON is the text of drover_common.py (the code it shares with
# the element runner): the runner passes both from its own bundle, so nothing is read from disk.
import collections
import errno
import math
import os
import signal
import sys
import time
import types

common = types.ModuleType('drover_common')
exec(compile(sys.argv[1], 'drover_common.py', 'exec'), common.__dict__)
for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
    signal.signal(s, signal.SIG_IGN)
os.set_blocking(0, False)
start_dir = os.getcwd().encode()
base = {}
slot_env = {}
free = []
queue = collections.deque()
queued = set()  # ids in the queue not withdrawn: a withdrawal is O(1), a pool worker may withdraw thousands
task_of = {}
slot_of = {}
pid_of = {}
out = []
buf = b''
eof = False
aborted = False
stop_at = 0
grace = 5.0
last_flush = 0.0
FLUSH_EVERY = 0.02
segments = collections.OrderedDict()  # (prefix, slot) -> [out fd, err fd, index fd, next entry]
MAX_SEGMENTS = 64  # open at once; a pool worker may run many launches over its life
span_of = {}  # pid -> (prefix, slot, seq, out start, err start)
INDEX_ENTRY = 32

def segment(prefix, slot):
    key = (prefix, slot)
    s = segments.get(key)
    if s is not None:
        segments.move_to_end(key)
        return s
    base = prefix + b'.' + slot.encode()
    fds = []
    try:
        fds.append(os.open(base + b'.out', common.SEGMENT_FLAGS, 0o666))
        fds.append(os.open(base + b'.err', common.SEGMENT_FLAGS, 0o666))
        fds.append(os.open(base + b'.idx', os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666))
    except OSError:
        for fd in fds:
            os.close(fd)
        raise
    s = fds + [os.fstat(fds[2]).st_size // INDEX_ENTRY]
    segments[key] = s
    while len(segments) > MAX_SEGMENTS:
        _, old = segments.popitem(last=False)
        for fd in old[:3]:
            os.close(fd)
    return s

def span_end(span):
    # Sizes after the reap, into the index before the slot's next task can write: then reported. An index that
    # cannot be written (a full disk) still leaves the ends in the report, so the record has them.
    prefix, slot, seq, ooff, eoff = span
    try:
        s = segment(prefix, slot)
        oend, eend = os.fstat(s[0]).st_size, os.fstat(s[1]).st_size
    except OSError:
        return ''
    s[3] = max(s[3], seq + 1)
    try:
        os.pwrite(s[2], b'%015d %015d\n' % (oend, eend), seq * INDEX_ENTRY)
    except OSError:
        pass
    return '\t%d\t%d\t%d\t%d\t%d' % (seq, ooff, eoff, oend, eend)

def pairs(kvs):
    d = {}
    for kv in kvs:
        i = kv.index(b'=')
        d[kv[:i]] = kv[i + 1:]
    return d

def fail(id, slot, efd, argv0, e, span=None):
    # As in sh: 127 when the program is not there, 126 when it cannot be executed; the reason in the log.
    code = common.cannot_execute(efd, argv0, e)
    free.append(slot)
    start = '\t%.3f\t%d\t%d\t%d' % ((time.time(),) + span[2:]) if span else ''
    end = '\t%.3f%s' % (time.time(), span_end(span)) if span else ''
    out.append('S\t%s\t0\t%s%s\nE\t%s\t%d%s\n' % (id, slot, start, id, code << 8, end))

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

def start(slot, kind, f):
    # `S id cwd out err nargs...` (its own log files) or `T id cwd prefix nargs...` (its slot's segments).
    id = f[0].decode()
    cwd = f[1]
    logs = f[2:4] if kind == b'S' else f[2:3]
    rest = f[2 + len(logs):]
    nargs = int(rest[0])
    argv = rest[1:1 + nargs]
    nenv = int(rest[1 + nargs])
    env = dict(base)
    env.update(slot_env[slot])
    env.update(pairs(rest[2 + nargs:2 + nargs + nenv]))
    # Stamped before the spawn and rounded down (its end after the reap, rounded up): the record never says a task
    # ran for less time than it did.
    started = math.floor(time.time() * 1000) / 1000
    span = None
    if kind == b'T':
        try:
            s = segment(logs[0], slot)
        except OSError:
            return fail(id, slot, -1, argv[0], errno.EACCES)
        ofd, efd = s[0], s[1]
        span = (logs[0], slot, s[3], os.fstat(ofd).st_size, os.fstat(efd).st_size)
        s[3] += 1
    else:
        try:
            ofd = os.open(logs[0], common.LOG_FLAGS, 0o666)
        except OSError:
            return fail(id, slot, -1, argv[0], errno.EACCES)
        try:
            efd = os.open(logs[1], common.LOG_FLAGS, 0o666)
        except OSError:
            os.close(ofd)
            return fail(id, slot, -1, argv[0], errno.EACCES)
    try:
        path = argv[0] if b'/' in argv[0] else common.which(argv[0], env.get(b'PATH', b'/usr/bin:/bin'))
        if path is None:
            return fail(id, slot, efd, argv[0], errno.ENOENT, span)
        if cwd != start_dir:
            pid = spawn_in(cwd, path, argv, env, ofd, efd)
        else:
            try:
                pid = common.spawn_task(path, argv, env, ofd, efd)
            except OSError as err:
                return fail(id, slot, efd, argv[0], err.errno, span)
    finally:
        if span is None:
            os.close(ofd)
            os.close(efd)
    task_of[pid] = id
    slot_of[pid] = slot
    pid_of[id] = pid
    where = ''
    if span is not None:
        span_of[pid] = span
        where = '\t%d\t%d\t%d' % span[2:]
    out.append('S\t%s\t%d\t%s\t%.3f%s\n' % (id, pid, slot, started, where))

def launch():
    while free and queue:
        f = queue.popleft()
        if f[1] in queued:
            queued.discard(f[1])
            start(free.pop(0), f[0], f[1:])

def handle(msg):
    global aborted, base, grace
    f = msg.split(b'\0')[:-1]
    kind = f[0]
    if kind == b'E':
        base = pairs(f[1:])
    elif kind == b'L':
        slot = f[1].decode()
        slot_env[slot] = pairs(f[2:])
        free.append(slot)
    elif kind == b'S' or kind == b'T':
        queue.append(f)
        queued.add(f[1])
    elif kind == b'W':
        if f[1] in queued:
            queued.discard(f[1])
            out.append('X\t%s\n' % f[1].decode())
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
        for pid in task_of:
            try:
                os.killpg(pid, signal.SIGKILL)
            except OSError:
                pass
        for id in queued:
            out.append('X\t%s\n' % id.decode())
        queued.clear()
        queue.clear()

def read_input():
    global buf, eof
    while True:
        try:
            chunk = os.read(0, 1 << 16)
        except BlockingIOError:
            break
        if not chunk:
            eof = True
            break
        buf += chunk
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
    buf = buf[pos:]

def reap():
    for pid, status in common.reaped():
        id = task_of.pop(pid, None)
        if id is None:
            continue
        del pid_of[id]
        free.append(slot_of.pop(pid))
        ended = math.ceil(time.time() * 1000) / 1000
        span = span_of.pop(pid, None)
        out.append('E\t%s\t%d\t%.3f%s\n' % (id, status, ended, span_end(span) if span else ''))

def flush(now):
    global eof, last_flush
    if not out:
        return
    # Reports of up to FLUSH_EVERY go out in one write, so the runner wakes about 50 times a second, not once
    # per task; at once when a slot is idle for want of a task, or the runner is about to hear the last ends.
    if now - last_flush < FLUSH_EVERY and not (free and not queue) and not eof:
        return
    last_flush = now
    data = ''.join(out).encode()
    del out[:]
    try:
        while data:
            data = data[os.write(1, data):]
    except OSError:
        eof = True  # the runner is gone: start nothing more, stop what runs

# Each turn reaps before it reads what the runner sent, and reads before it starts anything: a withdrawal the
# runner wrote before it stopped a task is always read before that task's slot goes to the next queued task.
while True:
    timeout = max(0.0, last_flush + FLUSH_EVERY - time.monotonic()) if out else 1.0
    common.wait_for_children([] if eof else [0], timeout)
    reap()
    if not eof:
        read_input()
    if not eof and not aborted:
        launch()
    flush(time.monotonic())
    if eof:
        if not task_of:
            break
        if not stop_at:
            for pid in task_of:
                try:
                    os.killpg(pid, signal.SIGTERM)
                except OSError:
                    pass
            stop_at = time.monotonic()
        elif time.monotonic() - stop_at >= grace:
            for pid in task_of:
                try:
                    os.killpg(pid, signal.SIGKILL)
                except OSError:
                    pass
