/**
 * The kinds of file a task can make of a path drover will read (its $DROVER_RESULT_FILE, its logs): each as the
 * shell lines that make it at "$DROVER_RESULT_FILE". A reader that blocks on one (a FIFO), follows it into a
 * device (/dev/zero) or reads it whole (8 GB sparse) stalls or swells the process that reads it.
 */
export const RESULT_FILE_KINDS: Record<string, string> = {
  fifo: 'mkfifo "$DROVER_RESULT_FILE"',
  zero: 'ln -s /dev/zero "$DROVER_RESULT_FILE"',
  socket:
    'cd "$(dirname "$DROVER_RESULT_FILE")" && python3 -c \'import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])\' "$(basename "$DROVER_RESULT_FILE")"',
  dir: 'mkdir "$DROVER_RESULT_FILE"',
  loop: 'ln -s "$DROVER_RESULT_FILE" "$DROVER_RESULT_FILE"',
  sparse: 'truncate -s 8G "$DROVER_RESULT_FILE"',
  big: 'head -c 1100000 /dev/zero | tr "\\0" " " > "$DROVER_RESULT_FILE"; echo "{}" >> "$DROVER_RESULT_FILE"',
};

/** A task script: `sh task.sh KIND` makes its result file of that kind (see RESULT_FILE_KINDS). */
export function hostileTaskScript(): string {
  const kinds = Object.keys(RESULT_FILE_KINDS);
  return `case $1 in\n${kinds.map((k) => `  ${k}) ${RESULT_FILE_KINDS[k]};;`).join('\n')}\nesac\n`;
}
