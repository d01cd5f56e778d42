# drover's fork server: starts the tasks of drover's runner (src/runner/starters/fork-server.ts) where Python 3.8 is missing
# (spawn-server.py is faster). Node's spawn forks the whole Node process and waits for the child's exec,
# ~3 ms of the runner's main thread per task, and a round trip through Node between one task's end and the
# next one's start costs as much again. This small Perl process holds a queue and the slots: it starts the
# next queued task the moment a slot frees. It is started with `perl -e SOURCE` (the runner passes its text
# from its own bundle), reads messages on stdin and reports on stdout.
#
# Messages in: a decimal byte length, a newline, and that many bytes of NUL-terminated fields:
# - `E KEY=VALUE...`            the environment shared by every task (the server's own, inherited on fork)
# - `L slot KEY=VALUE...`       one slot and the variables of tasks in it (DROVER_SLOT, CUDA_VISIBLE_DEVICES)
# - `S id cwd out err nargs arg... nenv KEY=VALUE...`   queue a task, its output to its own log files
# - `T id cwd prefix nargs arg... nenv KEY=VALUE...`    queue a task, its output to its slot's segments
# - `W id`                      withdraw a queued task (reported `X id`; ignored once started)
# - `K id signal`               send a signal (by number) to a started task's process group, if not reaped yet
# - `G seconds`                 the grace between SIGTERM and SIGKILL when input ends with tasks running
# - `A`                         abort: SIGKILL every running task's group now, withdraw every queued task
# Reports out, one line each: `S id pid slot time` (started; pid is also its process group id), `E id status time`
# (ended: the raw wait status, exit code << 8 or the signal number), `X id` (withdrawn before it started); times
# are Unix seconds with milliseconds, so records say when things happened, not when the runner heard of them.
# A task in segments has `seq out_off err_off` after its start's time and `seq out_off err_off out_end err_end`
# after its end's: the segments `<prefix>.<slot>.out` and `.err` are opened once (O_APPEND) and their sizes taken
# just before the task starts and just after it is reaped; the ends go into the index `<prefix>.<slot>.idx`
# (entry `seq`, `%015d %015d\n`) before the slot's next task starts (src/protocol/log-slices.ts).
#
# Each task runs in its own process group with stdin from /dev/null and stdout/stderr to its log files; a
# program that cannot be executed exits 127 (not found) or 126 with the reason in its stderr log, as in sh. In
# segments, a task writes to two pipes of its own, which the server copies into the segments as they fill and
# closes once the task has been reaped (after what it wrote before is copied): a process it left outside its
# group (setsid, a daemon) that writes later gets EPIPE, and its bytes reach no later attempt's slice.
# When a task's process ends, what it left in its group is killed. Signals reach a task only through the
# server, which knows whether it has reaped it: a reaped task's pid may already be another process's.
# On end of input the server starts nothing more and exits once its tasks have ended; if input ends while
# tasks still run, the runner died without stopping them, so the server stops them (TERM, KILL after the
# grace). The runner starts the server in its own session, so whatever kills the runner's process group
# leaves the server to do that.
use strict; use warnings; use POSIX (); use Time::HiRes ();
$| = 1;
$SIG{INT} = 'IGNORE'; $SIG{TERM} = 'IGNORE'; $SIG{PIPE} = 'IGNORE'; $SIG{HUP} = 'IGNORE';
pipe(my $wake_r, my $wake_w) or die "pipe: $!";
{ my $old = select($wake_w); $| = 1; select($old); }
$SIG{CHLD} = sub { syswrite($wake_w, 'c') };
my (%slot_env, @free, @queue, %task_of, %slot_of, %pid_of, %span_of, %clock_of, %taps_of, %segments, @segment_order);
# A tap: [pipe's reading end (undef once closed), the segment it is copied into]. pump copies what the pipe holds
# (at most TURNS x 16 chunks, so that a task writing without pause cannot hold the loop) and returns 1 when it
# may hold more; at the pipe's end (every writer gone) the reading end is closed.
sub pump {
  my ($tap, $turns) = @_;
  for (1 .. ($turns || 1) * 16) {
    my $r = $tap->[0] or return 0;
    my $n = sysread($r, my $data, 65536);
    if (!defined $n) { redo if $!{EINTR}; return 0 if $!{EAGAIN} || $!{EWOULDBLOCK}; $n = 0; }
    if (!$n) { close($r); $tap->[0] = undef; return 0; }
    # A segment that cannot be written (a full disk) loses it, as the task's own write would have.
    for (my $off = 0; $off < $n;) { my $w = syswrite($tap->[1], $data, $n - $off, $off); last unless $w; $off += $w; }
  }
  return 1;
}
# The attempt ended and its group is gone: copy what it wrote before, then close the pipe.
sub cut { my ($tap) = @_; pump($tap, 64); close($tap->[0]) if $tap->[0]; $tap->[0] = undef; }
# The monotonic clock: an attempt's end is its start's stamp plus the time since on it, rounded up, so it never
# ends before it started (nor runs for less time than it did) whatever the wall clock does meanwhile.
sub mono { return Time::HiRes::clock_gettime(Time::HiRes::CLOCK_MONOTONIC()); }
sub end_stamp { my ($started, $at) = @{ $_[0] }; return POSIX::ceil(($started + mono() - $at) * 1000) / 1000; }
use Fcntl ();
# The segments of (prefix, slot): [out fh, err fh, index fh, next entry]; at most 64 open, the oldest closed.
sub segment {
  my ($prefix, $slot) = @_;
  my $key = "$prefix\0$slot";
  return $segments{$key} if $segments{$key};
  my $base = "$prefix.$slot";
  my $flags = Fcntl::O_WRONLY() | Fcntl::O_CREAT() | Fcntl::O_APPEND();
  sysopen(my $o, "$base.out", $flags, 0666) or return undef;
  sysopen(my $e, "$base.err", $flags, 0666) or return undef;
  sysopen(my $i, "$base.idx", Fcntl::O_RDWR() | Fcntl::O_CREAT(), 0666) or return undef;
  $segments{$key} = [$o, $e, $i, int((-s $i) / 32)];
  push @segment_order, $key;
  delete $segments{shift @segment_order} while @segment_order > 64;
  return $segments{$key};
}
# The ends of a task's output after its reap, into the index before the slot's next task: then reported (also
# when the index cannot be written, a full disk: the record has them all the same).
sub span_end {
  my ($prefix, $slot, $seq, $ooff, $eoff) = @{ $_[0] };
  my $s = segment($prefix, $slot) or return '';
  my ($oend, $eend) = (-s $s->[0] || 0, -s $s->[1] || 0);
  sysseek($s->[2], $seq * 32, 0) and syswrite($s->[2], sprintf("%015d %015d\n", $oend, $eend));
  $s->[3] = $seq + 1 if $s->[3] < $seq + 1;
  return "\t$seq\t$ooff\t$eoff\t$oend\t$eend";
}
my $buf = ''; my $eof = 0; my $stop_at = 0; my $grace = 5; my $aborted = 0;
use Cwd (); my $start_dir = Cwd::getcwd();
sub pairs { my %h; for my $kv (@_) { my $i = index($kv, '='); $h{substr($kv, 0, $i)} = substr($kv, $i + 1); } return %h; }
# `DROVER_LIMIT=S,U` (starter.ts limitPair): seconds from the start and an end in Unix seconds, either empty;
# replaced by the task's DROVER_TIME_LEFT_S and DROVER_DEADLINE.
sub limit_env {
  my ($env, $now) = @_;
  my ($s, $u) = split(/,/, delete $env->{DROVER_LIMIT}, -1);
  my $end = length($s) ? $now + $s : undef;
  $end = $u if length($u) && (!defined $end || $u < $end);
  return unless defined $end;
  my $left = POSIX::floor($end - $now);
  $env->{DROVER_TIME_LEFT_S} = $left < 0 ? 0 : $left;
  $env->{DROVER_DEADLINE} = POSIX::floor($end);
}
# Reports of up to 20 ms go out in one write (at once when a slot would idle), as in the Python server.
my $reports = ''; my $last_flush = 0;
sub flush_out {
  return unless length $reports;
  my $now = Time::HiRes::time();
  return if $now - $last_flush < 0.02 && !(@free && !@queue) && !$eof;
  $last_flush = $now;
  while (length $reports) { my $w = syswrite(STDOUT, $reports); last unless defined $w; substr($reports, 0, $w) = ''; }
  $reports = '';
}
sub reap {
  while ((my $pid = waitpid(-1, POSIX::WNOHANG())) > 0) {
    kill('KILL', -$pid); # what it left in its group goes with it (nothing here forks between reap and kill)
    my $status = $?;
    my $id = delete $task_of{$pid};
    next unless defined $id;
    delete $pid_of{$id};
    push @free, delete $slot_of{$pid};
    my $ended = end_stamp(delete $clock_of{$pid});
    cut($_) for @{ delete $taps_of{$pid} || [] }; # before the ends are taken: they are what the attempt wrote
    my $span = delete $span_of{$pid};
    $reports .= sprintf("E\t%s\t%d\t%.3f%s\n", $id, $status, $ended, $span ? span_end($span) : '');
  }
}
sub launch {
  while (@free && @queue) {
    my $slot = shift @free;
    my @f = @{ shift @queue };
    my $kind = shift @f;
    my ($id, $cwd) = splice(@f, 0, 2);
    my ($out, $err, $span, $seg);
    if ($kind eq 'T') { my $prefix = shift @f; $seg = segment($prefix, $slot); $span = $seg && [$prefix, $slot, $seg->[3], -s $seg->[0] || 0, -s $seg->[1] || 0]; }
    else { ($out, $err) = splice(@f, 0, 2); }
    my $nargs = shift @f;
    my @argv = splice(@f, 0, $nargs);
    my $nenv = shift @f;
    my @env = splice(@f, 0, $nenv);
    # Stamped before the fork and rounded down (its end after the reap, by end_stamp): never a duration too short.
    my $started = POSIX::floor(Time::HiRes::time() * 1000) / 1000;
    my $clock = [$started, mono()];
    $seg->[3]++ if $span;
    my ($pid, @taps, @ends);
    if ($kind eq 'T' && $seg) {
      for my $i (0, 1) {
        pipe(my $r, my $w) or last;
        my $flags = fcntl($r, Fcntl::F_GETFL(), 0);
        fcntl($r, Fcntl::F_SETFL(), $flags | Fcntl::O_NONBLOCK());
        push @taps, [$r, $seg->[$i]];
        push @ends, $w;
      }
    }
    $pid = fork() unless ($kind eq 'T' && (!$seg || @taps < 2));
    if (!defined $pid) {
      close($_) for @ends;
      close($_->[0]) for @taps;
      push @free, $slot;
      my $where = $span ? sprintf("\t%.3f\t%d\t%d\t%d", $started, @$span[2 .. 4]) : '';
      my $end = $span ? sprintf("\t%.3f", $started) . span_end($span) : '';
      $reports .= "S\t$id\t0\t$slot$where\nE\t$id\t" . (126 << 8) . "$end\n";
      next;
    }
    if ($pid == 0) {
      $SIG{$_} = 'DEFAULT' for qw(INT TERM PIPE HUP CHLD);
      POSIX::setpgid(0, 0);
      open(STDIN, '<', '/dev/null');
      if ($span) {
        open(STDOUT, '>&', $ends[0]) or POSIX::_exit(126);
        open(STDERR, '>&', $ends[1]) or POSIX::_exit(126);
      } else {
        open(STDOUT, '>', $out) or POSIX::_exit(126);
        open(STDERR, '>', $err) or POSIX::_exit(126);
      }
      if ($cwd ne $start_dir) { chdir($cwd) or do { print STDERR "drover: cannot enter $cwd: $!\n"; POSIX::_exit(126); }; }
      my %task_env = (%{ $slot_env{$slot} || {} }, pairs(@env));
      limit_env(\%task_env, Time::HiRes::time()) if exists $task_env{DROVER_LIMIT};
      @ENV{keys %task_env} = values %task_env;
      { no warnings 'exec'; exec { $argv[0] } @argv; }
      my $code = $!{ENOENT} ? 127 : 126;
      print STDERR "drover: cannot execute $argv[0]: $!\n";
      POSIX::_exit($code);
    }
    $task_of{$pid} = $id;
    $slot_of{$pid} = $slot;
    $pid_of{$id} = $pid;
    $span_of{$pid} = $span if $span;
    $clock_of{$pid} = $clock;
    close($_) for @ends; # the task has its copies
    $taps_of{$pid} = \@taps if @taps;
    my $where = $span ? sprintf("\t%d\t%d\t%d", @$span[2 .. 4]) : '';
    $reports .= sprintf("S\t%s\t%d\t%s\t%.3f%s\n", $id, $pid, $slot, $started, $where);
  }
}
sub handle {
  my @f = split(/\0/, $_[0], -1); pop @f;
  my $kind = shift @f;
  if ($kind eq 'E') { %ENV = pairs(@f); }
  elsif ($kind eq 'L') { my $slot = shift @f; $slot_env{$slot} = { pairs(@f) }; push @free, $slot; }
  elsif ($kind eq 'S' || $kind eq 'T') { push @queue, [$kind, @f]; }
  elsif ($kind eq 'W') {
    my $id = $f[0];
    my $n = @queue;
    @queue = grep { $_->[1] ne $id } @queue;
    $reports .= "X\t$id\n" if @queue < $n;
  }
  elsif ($kind eq 'K') { my $pid = $pid_of{$f[0]}; kill($f[1], -$pid) if defined $pid; }
  elsif ($kind eq 'G') { $grace = $f[0]; }
  elsif ($kind eq 'A') {
    $aborted = 1;
    kill('KILL', -$_) for keys %task_of;
    $reports .= "X\t$_->[1]\n" for @queue;
    @queue = ();
  }
}
sub read_input {
  my $r = sysread(STDIN, $buf, 1 << 16, length $buf);
  if (!$r) { $eof = 1; return; }
  while (1) {
    my $nl = index($buf, "\n");
    last if $nl < 0;
    my $len = substr($buf, 0, $nl);
    last if length($buf) < $nl + 1 + $len;
    my $msg = substr($buf, $nl + 1, $len);
    substr($buf, 0, $nl + 1 + $len) = '';
    handle($msg);
  }
}
# Each turn reads what the runner sent before reaping and starting: a withdrawal sent before a stop is
# always seen before the stopped task's slot is given to the next queued task.
while (1) {
  my $rin = ''; vec($rin, fileno($wake_r), 1) = 1; vec($rin, fileno(STDIN), 1) = 1 unless $eof;
  my $busy = 0;
  for my $tap (map { @$_ } values %taps_of) {
    $busy = 1 if pump($tap);
    vec($rin, fileno($tap->[0]), 1) = 1 if $tap->[0];
  }
  # A bounded wait: a SIGCHLD that lands just before select is then seen within a second at worst.
  my $wait = $busy ? 0 : length($reports) ? $last_flush + 0.02 - Time::HiRes::time() : 1;
  my $n = select(my $rout = $rin, undef, undef, $wait > 0 ? $wait : 0);
  if ($n > 0) {
    if (vec($rout, fileno($wake_r), 1)) { sysread($wake_r, my $junk, 4096); }
    if (!$eof && vec($rout, fileno(STDIN), 1)) { read_input(); }
  }
  reap();
  launch() unless $eof || $aborted;
  flush_out();
  if ($eof) {
    last if !%task_of;
    if (!$stop_at) { kill('TERM', -$_) for keys %task_of; $stop_at = Time::HiRes::time(); }
    elsif (Time::HiRes::time() - $stop_at >= $grace) { kill('KILL', -$_) for keys %task_of; }
  }
}
