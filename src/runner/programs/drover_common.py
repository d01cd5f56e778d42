"""What drover's two Python programs share: how a task is started, and how the program waits for its children.

The spawn server (spawn-server.py) and the packed element runner (element.py) use it; see each for how it is
loaded. Loading it installs a SIGCHLD handler and a wake-up pipe (signal.set_wakeup_fd), so it must be loaded in
the main thread, once.

- renew_wakeup(): in a forked child, a wake-up pipe of its own (the parent's would wake both).
- wait_for_children(watch, timeout, writable=()): select on the fds in `watch` (and for writing on those in
  `writable`) and on the pipe SIGCHLD writes to (written by the C handler, so no ended child is missed between a
  reap and the select).
- reaped(): the (pid, status) of each ended child not yet waited for, without blocking. Each child is a task
  leading its own process group: what it left in its group is killed before the child is reaped, while its pid
  (the group's id) cannot have been given to another process.
- which(name, path): a program on PATH, as execvp would find it (cached).
- spawn_task(path, argv, env, ofd, efd): posix_spawn in its own process group with stdin from /dev/null,
  stdout/stderr to the given fds and default signal dispositions; a script without a #! line runs with /bin/sh,
  as execvp does. Raises OSError when it cannot be executed.
- cannot_execute(efd, argv0, err): write the reason to the task's stderr log; returns the exit code a shell gives
  (127 not found, 126 otherwise).
- Segments: the slots' segment files (src/protocol/log-slices.ts), opened once each: begin() takes an attempt's
  entry and start offsets before its spawn, end() its end offsets after its reap, into the index.
- Tap: a task's stdout or stderr in its slot's segment, through a pipe of its own that the program copies from
  (pump) and closes when the attempt ends (cut): a process the task left behind outside its group (setsid, a
  daemon) that writes later gets EPIPE, and its bytes reach no later attempt's slice.
"""
import collections
import errno
import os
import select
import signal


def _wakeup():
    r, w = os.pipe()
    os.set_blocking(r, False)
    os.set_blocking(w, False)
    signal.set_wakeup_fd(w)
    return r, w


_wake_r, _wake_w = _wakeup()
signal.signal(signal.SIGCHLD, lambda n, f: None)
TASK_SIGNALS = [signal.SIGINT, signal.SIGTERM, signal.SIGPIPE, signal.SIGHUP, signal.SIGCHLD, signal.SIGXFSZ,
                signal.SIGUSR1]
DEVNULL = os.open('/dev/null', os.O_RDONLY | os.O_CLOEXEC)
LOG_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC
SEGMENT_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC
_found = {}


def renew_wakeup():
    global _wake_r, _wake_w
    os.close(_wake_r)
    os.close(_wake_w)
    _wake_r, _wake_w = _wakeup()


def wait_for_children(watch, timeout, writable=()):
    try:
        select.select([_wake_r] + watch, writable, [], timeout)
    except InterruptedError:
        pass
    try:
        while os.read(_wake_r, 4096):
            pass
    except BlockingIOError:
        pass


def reaped():
    while True:
        try:
            ended = os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:
            return
        if ended is None or ended.si_pid == 0:
            return
        pid = ended.si_pid
        # Its group goes with it, killed while its unreaped pid still holds the group's id (never another's).
        try:
            os.killpg(pid, signal.SIGKILL)
        except OSError:
            pass
        _, status = os.waitpid(pid, 0)
        yield pid, status


def which(name, path):
    hit = _found.get((name, path))
    if hit is None:
        for d in path.split(b':'):
            p = os.path.join(d or b'.', name)
            if os.path.isfile(p) and os.access(p, os.X_OK):
                hit = _found[(name, path)] = p
                break
    return hit


def spawn_task(path, argv, env, ofd, efd):
    actions = [(os.POSIX_SPAWN_DUP2, DEVNULL, 0), (os.POSIX_SPAWN_DUP2, ofd, 1), (os.POSIX_SPAWN_DUP2, efd, 2)]
    try:
        return os.posix_spawn(path, argv, env, file_actions=actions, setpgroup=0, setsigdef=TASK_SIGNALS)
    except OSError as e:
        if e.errno != errno.ENOEXEC:
            raise
    return os.posix_spawn(b'/bin/sh', [b'/bin/sh', path] + argv[1:], env, file_actions=actions, setpgroup=0,
                          setsigdef=TASK_SIGNALS)


def cannot_execute(efd, argv0, err):
    if efd >= 0:
        os.write(efd, b'drover: cannot execute ' + argv0 + b': ' + os.strerror(err).encode() + b'\n')
    return 127 if err == errno.ENOENT else 126


class Tap:
    """One of a task's outputs in a segment: the pipe the task writes to, copied into the segment (fd `dest`)."""

    CHUNK = 1 << 16
    TURN = 16  # chunks a turn at most: a task that writes without pause cannot hold the program's loop

    def __init__(self, dest):
        self.dest = dest
        self.r, self.w = os.pipe()  # not inherited by other tasks: the task gets `w` as its stdout or stderr
        os.set_blocking(self.r, False)

    def started(self):
        # The task has its copy of the writing end.
        os.close(self.w)
        self.w = -1

    def pump(self, turns=1):
        # Copy what the pipe holds into the segment; True while the pipe may hold more (a turn's limit reached).
        # At its end (every writer gone) the pipe is closed: `r` is -1 then, and nothing is left to watch.
        for _ in range(turns * self.TURN):
            if self.r < 0:
                return False
            try:
                data = os.read(self.r, self.CHUNK)
            except BlockingIOError:
                return False
            if not data:
                self.close()
                return False
            try:
                while data:
                    data = data[os.write(self.dest, data):]
            except OSError:
                pass  # the segment cannot be written (a full disk): lost, as the task's own write would be
        return True

    def cut(self):
        # The attempt has ended and its process group is gone: what it wrote before is in the pipe, so copy that
        # and close the pipe. What a process it left outside its group writes later is not this attempt's (it
        # ended) nor any other's.
        self.pump(64)
        self.close()

    def close(self):
        for fd in (self.r, self.w):
            if fd >= 0:
                os.close(fd)
        self.r = self.w = -1


class Segments:
    """Segment files by base path (`<base>.out`, `.err`, opened once with O_APPEND, and `.idx`): at most `most`
    bases open at once, the least recently used closed first (a pool worker may run many launches)."""

    INDEX_ENTRY = 32  # `%015d %015d\n`: an attempt's two end offsets, at its entry's number

    def __init__(self, most=64):
        self.most = most
        self.open = collections.OrderedDict()  # base -> [out fd, err fd, index fd, next entry]

    def files(self, base):
        # The base's [out fd, err fd, index fd, next entry]; raises OSError when they cannot be opened.
        s = self.open.get(base)
        if s is not None:
            self.open.move_to_end(base)
            return s
        fds = []
        b = os.fsencode(base)
        try:
            fds.append(os.open(b + b'.out', SEGMENT_FLAGS, 0o666))
            fds.append(os.open(b + b'.err', SEGMENT_FLAGS, 0o666))
            fds.append(os.open(b + b'.idx', os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666))
        except OSError:
            for fd in fds:
                os.close(fd)
            raise
        s = self.open[base] = fds + [os.fstat(fds[2]).st_size // self.INDEX_ENTRY]
        while len(self.open) > self.most:
            _, old = self.open.popitem(last=False)
            for fd in old[:3]:
                os.close(fd)
        return s

    def begin(self, base):
        # Before an attempt's spawn: (out fd, err fd, its entry, out offset, err offset). Raises OSError.
        s = self.files(base)
        seq = s[3]
        s[3] += 1
        return s[0], s[1], seq, os.fstat(s[0]).st_size, os.fstat(s[1]).st_size

    def end(self, base, seq):
        # After its reap (and its pipes cut): its end offsets, written into the index before the slot's next task
        # can write; None when the segments cannot be read. An index that cannot be written (a full disk) still
        # gives the ends: the record has them.
        try:
            s = self.files(base)
            oend, eend = os.fstat(s[0]).st_size, os.fstat(s[1]).st_size
        except OSError:
            return None
        s[3] = max(s[3], seq + 1)
        try:
            os.pwrite(s[2], b'%015d %015d\n' % (oend, eend), seq * self.INDEX_ENTRY)
        except OSError:
            pass
        return oend, eend
