import fs from 'node:fs';

/**
 * The jobfile as it was before a prelaunch rewrote it, kept as a hard link (no data written, so it works on a
 * full disk too) until the ledger has committed the change; put back if it did not.
 */
export class JobfileUndo {
  private backup: string | null | undefined;
  constructor(private readonly file: string) {}

  /** Keep the current jobfile (or remember there was none) before it is replaced. */
  keep(): void {
    const backup = `${this.file}.${process.pid}.undo`;
    try {
      fs.linkSync(this.file, backup);
      this.backup = backup;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      this.backup = null;
    }
  }

  /** Run `fn`; when it throws after keep(), put the old jobfile back (or remove the new one) and rethrow. */
  around<T>(fn: () => T): T {
    try {
      const result = fn();
      if (this.backup) fs.rmSync(this.backup, { force: true });
      return result;
    } catch (err) {
      if (this.backup) {
        fs.renameSync(this.backup, this.file);
        // rename(2) does nothing when both names are links to one file (the jobfile was not replaced yet).
        fs.rmSync(this.backup, { force: true });
      } else if (this.backup === null) fs.rmSync(this.file, { force: true });
      throw err;
    }
  }
}
