/**
 * Comparing two samples of timings without assuming their shape: the Mann-Whitney U statistic as
 * the probability that a value of one sample exceeds one of the other (0.5 when neither tends to be
 * larger), with its z score, and the medians. Robust to the long tail a loaded machine adds (a GC
 * pause or a busy neighbour moves a rank by one, not a mean by milliseconds).
 */

export interface Comparison {
  /** P(a > b) + P(a = b) / 2 for one value a of the first sample and b of the second. */
  readonly superiority: number;
  /** How many standard errors `superiority` is from 0.5 (normal approximation, ties corrected). */
  readonly z: number;
  readonly medians: readonly [number, number];
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((x, y) => x - y);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** @example compare([1, 2, 3], [1, 2, 3]).superiority // 0.5 */
export function compare(first: readonly number[], second: readonly number[]): Comparison {
  const all = [
    ...first.map((value) => ({ value, group: 0 })),
    ...second.map((value) => ({ value, group: 1 })),
  ].sort((x, y) => x.value - y.value);
  // Mid-ranks for ties, and the tie correction of the variance.
  let rankSumFirst = 0;
  let tieTerm = 0;
  for (let i = 0; i < all.length; ) {
    let j = i;
    while (j + 1 < all.length && all[j + 1]!.value === all[i]!.value) j++;
    const rank = (i + j) / 2 + 1;
    for (let k = i; k <= j; k++) if (all[k]!.group === 0) rankSumFirst += rank;
    const tied = j - i + 1;
    tieTerm += tied ** 3 - tied;
    i = j + 1;
  }
  const n1 = first.length;
  const n2 = second.length;
  const n = n1 + n2;
  const u = rankSumFirst - (n1 * (n1 + 1)) / 2;
  const variance = ((n1 * n2) / 12) * (n + 1 - tieTerm / (n * (n - 1)));
  return {
    superiority: u / (n1 * n2),
    z: variance > 0 ? (u - (n1 * n2) / 2) / Math.sqrt(variance) : 0,
    medians: [median(first), median(second)],
  };
}
