import type { LaunchRow } from '../ledger/launches.js';
import type { Ledger } from '../ledger/ledger.js';

/**
 * What every backend does for launches it ran. Submission differs too much between backends to share a
 * signature (a local launch may run in the foreground); these are the parts the rest of drover calls generically.
 */
export interface Backend {
  /** `local`, `slurm`, `gridengine`, ... — the `backend` column of its launches. */
  readonly name: string;
  /**
   * Fill in what runners could not record (after their records were ingested): tasks whose runner or scheduler
   * entry is gone without a final record become `lost`, scheduler facts such as pending or timeout are applied.
   */
  reconcile(ledger: Ledger, launch: LaunchRow): void;
  /** Ask the backend to stop these tasks of a launch (or all); the ledger records `cancelled` as they stop. */
  cancel(ledger: Ledger, launch: LaunchRow, tasks: readonly number[] | 'all'): void;
}
