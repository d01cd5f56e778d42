/** Facts about this drover installation, set once by the entry script (bin/drover.cjs). */
export const self = {
  /** drover's version, from package.json. */
  version: '0.0.0',
  /** Path of the entry script, to start runners (detached, or on cluster nodes) with this same drover. */
  bin: '',
};
