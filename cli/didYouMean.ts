/** "did you mean" for a mistyped option: the closest known name within a small edit distance. */

/** Edit distance where an insert, a delete, a substitution or a swap of two neighbours costs 1. */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.length][b.length];
}

/** The known name closest to `typed`, when it is close enough to be a typo (a third of its length, at least 1, at most 3). */
export function closest(typed: string, known: Iterable<string>): string | undefined {
  const limit = Math.min(3, Math.max(1, Math.floor(typed.length / 3)));
  let best: string | undefined;
  let bestD = Infinity;
  for (const k of known) {
    const d = editDistance(typed.toLowerCase(), k.toLowerCase());
    if (d < bestD || (d === bestD && best !== undefined && k < best)) {
      best = k;
      bestD = d;
    }
  }
  return bestD <= limit ? best : undefined;
}
