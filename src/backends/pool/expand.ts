/**
 * The making of a pool launch's task rows is a ledger transition now (ledger/transitions/expand.ts); these names
 * stay here for the pool's launch code that still imports them from here.
 */

export { getPoolLaunch, type PoolLaunchRow } from '../../ledger/pool-launches.js';
export { expandAll, expandLaunch, idsAfter } from '../../ledger/transitions.js';
