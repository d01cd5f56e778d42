/*
 * The physical limit of running short tasks 2 at a time on this machine (issue 14 §4): `spawn-loop N P PROG`
 * runs PROG N times (PROG 1, PROG 2, ...) in P processes, each looping posix_spawn + waitpid — no logs, no records,
 * no database. Exits 0 when every run exited 0. Built by bench/local/spawn-limit.ts with the machine's cc.
 */
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: spawn-loop N P PROG\n");
    return 2;
  }
  long n = atol(argv[1]);
  long procs = atol(argv[2]);
  char *prog = argv[3];
  for (long p = 0; p < procs; p++) {
    pid_t w = fork();
    if (w < 0) return 1;
    if (w == 0) {
      char arg[32];
      for (long i = p; i < n; i += procs) {
        snprintf(arg, sizeof arg, "%ld", i + 1);
        char *args[] = {prog, arg, NULL};
        pid_t c;
        if (posix_spawn(&c, prog, NULL, NULL, args, environ) != 0) _exit(1);
        int st;
        if (waitpid(c, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) _exit(1);
      }
      _exit(0);
    }
  }
  int ok = 1;
  for (long p = 0; p < procs; p++) {
    int st;
    if (wait(&st) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) ok = 0;
  }
  return ok ? 0 : 1;
}
