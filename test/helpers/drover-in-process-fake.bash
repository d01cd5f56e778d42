#!/bin/bash
# `drover` for a program that starts it itself (the Python client's tests), in the developer's loop: a FAKE of the
# process boundary (test/helpers/drover-in-process-fake.ts, serveInProcessFake). It hands its folder, arguments and
# environment to the test's process, which runs the command there as the in-process twin does, then prints what the
# command printed and exits with its code; when the test's process says so (a command it does not run there) or
# cannot be reached, it runs drover as a process.
port=${DROVER_TWIN_PORT:-}
if [[ $port =~ ^[0-9]+$ ]] && { exec 3<>"/dev/tcp/127.0.0.1/$port"; } 2>/dev/null; then
  { printf '%s\0' drover "$PWD" "$#" "$@"; env -0; printf '\0'; } >&3
  if ! read -r status err <&3; then
    echo "drover (in-process twin): the test's process ended without an answer" >&2
    exit 70
  fi
  if [[ $status != exec ]]; then
    cat <&3
    if [[ $err != - ]]; then
      cat "$err" >&2
      rm -f "$err"
    fi
    exit "$status"
  fi
  exec 3<&-
fi
exec "${DROVER_TWIN_NODE:-node}" "$DROVER_TWIN_BIN" "$@"
