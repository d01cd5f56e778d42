# drover's single-task runner: what a Grid Engine array element runs when it holds exactly one task (the default
# on clusters). Starting Node and loading drover costs ~0.1 s of CPU per element, as much as the scheduler spends on
# the element itself; Perl starts in a few milliseconds. It keeps the runner's contract: the same records (runner,
# start, end, runner-end) in its own file, per-attempt logs, the DROVER_* environment, the task in its own process
# group, retries with the same backoff, a per-attempt time limit, and on SIGTERM (a scheduler stop, or qdel from
# drover cancel) the task is stopped (TERM, KILL after the grace period) and recorded `cancelled` when drover's
# cancel folder asked for it, else `killed`.
#
# Only modules of perl-base are required (Time::HiRes is used when present, for millisecond times).
# Usage: perl single.pl TABLE KEY, with the settings in DROVER_S_* variables (src/runner/program-settings.ts).
# TABLE has one line per group: `key \t task \t attempt \t kind \t payload`; kind `sh` runs the payload with
# `/bin/sh -c`, kind `x` executes the tab-separated words directly; `\`, tab and newline are escaped as `\\`,
# `\t`, `\n` (src/runner/single.ts writes it).
use strict; use warnings;
# No POSIX or Config: loading them would cost more than the rest of this script (~30 ms per element).
my $hires = eval { require Time::HiRes; 1 };
sub now { return $hires ? sprintf('%.3f', Time::HiRes::time()) : time(); }
# An attempt's end: its start plus the time since on the monotonic clock where there is one, so it never ends
# before it started whatever the wall clock does meanwhile (else the wall clock, never before the start).
my $monotonic = $hires && eval { Time::HiRes::clock_gettime(Time::HiRes::CLOCK_MONOTONIC()); 1 };
sub mono { return $monotonic ? Time::HiRes::clock_gettime(Time::HiRes::CLOCK_MONOTONIC()) : 0; }
sub end_at {
  my ($start, $at) = @_;
  return sprintf('%.3f', $start + mono() - $at) if $monotonic;
  my $now = now();
  return $now > $start ? $now : $start;
}
my ($table, $key) = @ARGV;
my %s = map { (lc(substr($_, 9)) => $ENV{$_}) } grep { /^DROVER_S_/ } keys %ENV;
delete $ENV{$_} for grep { /^DROVER_S_/ } keys %ENV;
my ($task, $attempt, @argv);
sub unescape { my $c = shift; $c =~ s/\\(.)/$1 eq 't' ? "\t" : $1 eq 'n' ? "\n" : $1/ge; return $c; }
open(my $tf, '<', $table) or die "drover: cannot read $table: $!\n";
while (my $line = <$tf>) {
  chomp $line;
  my ($k, $t, $a, $kind, $payload) = split(/\t/, $line, 5);
  next unless defined $payload && $k eq $key;
  ($task, $attempt) = ($t, $a);
  @argv = $kind eq 'x' ? map { unescape($_) } split(/\t/, $payload, -1) : ('/bin/sh', '-c', unescape($payload));
  last;
}
close($tf);
die "drover: no group $key in $table\n" unless @argv;
sub jstr {
  my $v = shift;
  return 'null' unless defined $v;
  $v =~ s/(["\\])/\\$1/g;
  $v =~ s/([\x00-\x1f])/sprintf('\\u%04x', ord $1)/ge;
  return "\"$v\"";
}
my $host = 'localhost';
if (open(my $hf, '<', '/proc/sys/kernel/hostname')) { $host = <$hf>; chomp $host; close($hf); }
$host =~ s/\..*//;
my $name = "g$key.$host.$$";
mkdir $s{records_dir}; mkdir $s{log_dir};
my $rec_path = "$s{records_dir}/$name.jsonl";
open(my $rec, '>>', $rec_path) or die "drover: cannot write records in $s{records_dir}: $!\n";
# One JSON object per line, whole lines only. When the disk refuses a record (full, read-only), the part of it
# that got written is cut off again and the records wait in memory; the task does not start (again) until they
# are written.
my ($rec_size, $rec_blocked, @rec_wait) = (-s $rec_path || 0, 0);
sub rec_flush {
  while (@rec_wait) {
    my ($line, $done) = ($rec_wait[0], 0);
    while ($done < length($line)) {
      my $n = syswrite($rec, $line, length($line) - $done, $done);
      last unless $n;
      $done += $n;
    }
    if ($done < length($line)) {
      print STDERR "drover: cannot write $rec_path ($!): keeping " . scalar(@rec_wait) . " record(s) in memory and trying again\n"
        unless $rec_blocked;
      truncate($rec, $rec_size);
      $rec_blocked = 1;
      return 0;
    }
    $rec_size += $done;
    shift @rec_wait;
  }
  print STDERR "drover: records written again to $rec_path\n" if $rec_blocked;
  $rec_blocked = 0;
  return 1;
}
sub record {
  my @kv = @_; my @parts;
  while (@kv) { my ($k, $v) = splice(@kv, 0, 2); push @parts, "\"$k\":$v"; }
  push @rec_wait, '{' . join(',', @parts) . "}\n";
  rec_flush();
}
record(type => '"runner"', v => 1, runner => jstr($name), launch => $s{launch}, job => jstr($s{job}),
  host => jstr($host), pid => $$, pid_start => 'null', slots => 1, at => now());

my ($child, $stop, $timed_out, $alarm_kills) = (0, 0, 0, 0);
# Perl's alarm() takes whole seconds (a grace of 0.5 would be 0: no alarm, no SIGKILL ever); Time::HiRes's takes
# fractions. Zero means at once.
sub arm {
  my $t = shift;
  $t = 0.001 if $t <= 0;
  if ($hires) { Time::HiRes::alarm($t); } else { alarm($t == int($t) ? $t : int($t) + 1); }
}
my $grace = $s{kill_grace} // 5;
# TERM to the task, and SIGKILL after the grace period, armed here: Perl's waitpid resumes by itself after a
# signal's handler ran, so the loop around it never sees the interruption.
sub stop_child {
  kill('TERM', -$child);
  if (!$alarm_kills) { $alarm_kills = 1; arm($grace); }
}
$SIG{TERM} = $SIG{INT} = sub { $stop = 1; stop_child() if $child; };
$SIG{ALRM} = sub {
  return unless $child;
  if ($alarm_kills) { kill('KILL', -$child); return; }
  $timed_out = 1; stop_child();
};
sub cancel_requested {
  opendir(my $d, $s{cancel_dir}) or return 0;
  for my $f (grep { /\.json$/ } readdir($d)) {
    open(my $fh, '<', "$s{cancel_dir}/$f") or next;
    local $/; my $j = <$fh>; close($fh);
    return 1 if $j =~ /"tasks"\s*:\s*"all"/;
    if ($j =~ /"tasks"\s*:\s*\[([^\]]*)\]/) { return 1 if grep { $_ == $task } split(/\s*,\s*/, $1); }
  }
  return 0;
}
my @signal_names = split(/ /, $s{signal_names});
# How an attempt's end becomes its state: the rows of src/runner/end-state.ts, in its order, with the reasons and
# signal names of the settings (waitpid always tells how a task ended). STOP is why this runner stopped the task
# (cancel, timeout, scheduler, or ''); STATUS is its wait status. Returns the state and the record's fields.
sub end_state {
  my ($stop, $status) = @_;
  my $sig = $status & 127;
  my $code = $sig ? undef : $status >> 8;
  if (!$sig && $code > 128 && $code - 128 <= @signal_names) { ($sig, $code) = ($code - 128, undef); }
  my @fields = (exit_code => $code // 'null', signal => $sig ? jstr('SIG' . ($signal_names[$sig - 1] // $sig)) : 'null');
  return ('cancelled', @fields) if $stop eq 'cancel';
  return ('timeout', @fields, reason => jstr($s{reason_time_limit})) if $stop eq 'timeout';
  return ('killed', @fields, reason => jstr($s{reason_scheduler_stop})) if $stop eq 'scheduler';
  return ('killed', @fields) if $sig;
  return ($code == 0 ? 'succeeded' : 'failed', @fields);
}
my $retries = $s{retries} || 0;
my $state = 'lost';
# A task that drover cancel asked to stop before its element started never starts.
if (cancel_requested()) {
  $state = 'cancelled';
  record(type => '"skip"', task => $task, at => now(), state => jstr($state));
}
for (my $try = 0; !$stop && $state ne 'cancelled'; $try++) {
  my $out = "$s{log_dir}/$task.$attempt.out";
  my $err = "$s{log_dir}/$task.$attempt.err";
  ($timed_out, $alarm_kills) = (0, 0);
  until (rec_flush()) { last if $stop; sleep(1); }
  last if $stop;
  my ($start, $start_mono) = (now(), mono());
  $child = fork();
  die "drover: fork: $!\n" unless defined $child;
  if ($child == 0) {
    $SIG{$_} = 'DEFAULT' for qw(TERM INT ALRM);
    setpgrp(0, 0);
    open(STDIN, '<', '/dev/null');
    open(STDOUT, '>', $out) or exit(126);
    open(STDERR, '>', $err) or exit(126);
    chdir($s{cwd}) if defined $s{cwd};
    @ENV{qw(DROVER_TASK_ID DROVER_ATTEMPT DROVER_SLOT DROVER_JOBNAME DROVER_LAUNCH DROVER_RESULT_FILE)} =
      ($task, $attempt, 0, $s{job}, $s{launch}, "$s{log_dir}/$task.$attempt.result.json");
    # Its limit: the nearer of its --task-timeout and the element's (from this program's start, $^T).
    my $end = $s{task_timeout} ? $start + $s{task_timeout} : undef;
    if ($s{runner_limit}) { my $e = $^T + $s{runner_limit}; $end = $e if !defined($end) || $e < $end; }
    if (defined $end) {
      my $left = int($end - $start);
      @ENV{qw(DROVER_TIME_LEFT_S DROVER_DEADLINE)} = ($left < 0 ? 0 : $left, int($end));
    }
    { no warnings 'exec'; exec { $argv[0] } @argv; }
    my $code = ($! + 0) == 2 ? 127 : 126;
    print STDERR "drover: cannot execute $argv[0]: $!\n";
    exit($code);
  }
  setpgrp($child, $child);
  record(type => '"start"', task => $task, attempt => $attempt, at => $start, pid => $child, slot => 0,
    gpus => jstr($ENV{CUDA_VISIBLE_DEVICES}), host => jstr($host), out => jstr($out), err => jstr($err));
  if ($stop) { stop_child(); }
  elsif ($s{task_timeout}) { arm($s{task_timeout}); }
  while (1) {
    my $w = waitpid($child, 0);
    last if $w == $child;
    die "drover: waitpid: $!\n" if $w == -1 && ($! + 0) != 4;
  }
  my $status = $?;
  if ($hires) { Time::HiRes::alarm(0); } else { alarm(0); }
  kill('KILL', -$child); # what it left in its group goes with it, as with every runner
  # ... and is gone before the end is recorded: a process being killed can take a while to die on a busy node.
  # (At most a second: a member that died but that no one reaps still counts as one.)
  for (1 .. 100) { last unless kill(0, -$child); select(undef, undef, undef, 0.01); }
  $child = 0;
  # Sent SIGTERM: the scheduler stopped the element, or drover cancel did (with a cancel request).
  my $why = $timed_out ? 'timeout' : !$stop ? '' : cancel_requested() ? 'cancel' : 'scheduler';
  ($state, my @fields) = end_state($why, $status);
  my $retry = $state ne 'succeeded' && $state ne 'cancelled' && !$stop && $try < $retries;
  record(type => '"end"', task => $task, attempt => $attempt, at => end_at($start, $start_mono), state => jstr($state), @fields,
    ($retry ? (retry => 'true') : ()));
  last unless $retry;
  my $delay = ($s{retry_delay} // 1) * 2 ** $try;
  $delay = 60 if $delay > 60;
  $delay *= 0.8 + 0.4 * rand();
  select(undef, undef, undef, $delay);
  $attempt++;
}
record(type => '"runner-end"', at => now(), reason => jstr($stop ? 'cancelled' : 'done'));
sleep(1) until rec_flush();
exit($state eq 'succeeded' ? 0 : 1);
