# The body of every FAKE scheduler command (test/fakes/bin/*, which set `prog` and source this): ask the server of
# the state folder (serve.ts; test/helpers/fake-scheduler.ts starts one per fake) over loopback TCP, else, with no
# server, run the fake in a Node process of its own. Both answer alike; the server saves a Node start per call.
dir=${DROVER_FAKE_SCHEDULER_DIR:-}
port=
if [[ $dir == /* && -r $dir/server.port ]]; then read -r port <"$dir/server.port"; fi
if [[ $port =~ ^[0-9]+$ ]] && { exec 3<>"/dev/tcp/127.0.0.1/$port"; } 2>/dev/null; then
  { printf '%s\0' "$prog" "$PWD" "$#" "$@"; env -0; printf '\0'; } >&3
  if ! read -r status err <&3; then
    echo "FAKE $prog: the fake scheduler's server ended without an answer" >&2
    exit 70
  fi
  cat <&3
  if [[ $err != - ]]; then
    cat "$err" >&2
    rm -f "$err"
  fi
  exit "$status"
fi
exec "${DROVER_FAKE_NODE:-node}" "${BASH_SOURCE[0]%/*}/../../dist/test/fakes/main.js" "$prog" "$@"
