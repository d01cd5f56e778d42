/** Task ids as `[first, last]` ranges (inclusive): how a skip-many record names a million tasks in a few lines. */
export type IdRange = [number, number];

/**
 * Ids gathered one at a time into ranges: an id one past the last range's end extends it, any other id starts a
 * new range (ids in order, as a launch's tasks are, make one range per gap).
 */
export class RangeBuilder {
  private ranges: IdRange[] = [];

  add(id: number): void {
    const last = this.ranges.at(-1);
    if (last && id === last[1] + 1) last[1] = id;
    else this.ranges.push([id, id]);
  }

  /** How many ranges so far. */
  get length(): number {
    return this.ranges.length;
  }

  /** The ranges so far; the builder starts empty again. */
  take(): IdRange[] {
    const out = this.ranges;
    this.ranges = [];
    return out;
  }
}

/** A set of ids given as ranges (any order, overlapping or not), for membership tests. */
export class RangeSet {
  /** Sorted, disjoint, not touching. */
  private readonly merged: IdRange[] = [];

  constructor(ranges: readonly IdRange[]) {
    const sorted = [...ranges].sort((a, b) => a[0] - b[0]);
    for (const [a, b] of sorted) {
      const last = this.merged.at(-1);
      if (last && a <= last[1] + 1) last[1] = Math.max(last[1], b);
      else this.merged.push([a, b]);
    }
  }

  has(id: number): boolean {
    let lo = 0;
    let hi = this.merged.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const [a, b] = this.merged[mid]!;
      if (id < a) hi = mid - 1;
      else if (id > b) lo = mid + 1;
      else return true;
    }
    return false;
  }
}
