/** Edit distance (insertions, deletions, substitutions and swaps of neighbours), case-insensitive. */
export function editDistance(a: string, b: string): number {
  const s = a.toLowerCase();
  const t = b.toLowerCase();
  const rows: number[][] = Array.from({ length: s.length + 1 }, (_, i) => [i, ...Array<number>(t.length).fill(0)]);
  for (let j = 1; j <= t.length; j++) (rows[0] as number[])[j] = j;
  for (let i = 1; i <= s.length; i++) {
    const row = rows[i] as number[];
    const prev = rows[i - 1] as number[];
    for (let j = 1; j <= t.length; j++) {
      const cost = s[i - 1] === t[j - 1] ? 0 : 1;
      let best = Math.min((prev[j] as number) + 1, (row[j - 1] as number) + 1, (prev[j - 1] as number) + cost);
      if (i > 1 && j > 1 && s[i - 1] === t[j - 2] && s[i - 2] === t[j - 1]) {
        best = Math.min(best, ((rows[i - 2] as number[])[j - 2] as number) + 1);
      }
      row[j] = best;
    }
  }
  return (rows[s.length] as number[])[t.length] as number;
}

/**
 * The candidate closest to `word`, when it is close enough to be what was meant: at most a
 * third of the longer word's letters apart (at least one), and no other candidate as close.
 */
export function didYouMean(word: string, candidates: Iterable<string>): string | undefined {
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  let tie = false;
  for (const candidate of candidates) {
    if (candidate === word) return undefined;
    const distance = editDistance(word, candidate);
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
      tie = false;
    } else if (distance === bestDistance) tie = true;
  }
  if (best === undefined || tie) return undefined;
  return bestDistance <= Math.max(1, Math.floor(Math.max(word.length, best.length) / 3)) ? best : undefined;
}

/**
 * The candidates nearest to `word`, nearest first, at most `max`: those at most a third of the
 * longer word's letters apart (at least two), ties kept in the candidates' order.
 */
export function nearest(word: string, candidates: Iterable<string>, max = 3): string[] {
  const close: { candidate: string; distance: number }[] = [];
  for (const candidate of candidates) {
    const distance = editDistance(word, candidate);
    if (distance > 0 && distance <= Math.max(2, Math.floor(Math.max(word.length, candidate.length) / 3)))
      close.push({ candidate, distance });
  }
  return close
    .sort((a, b) => a.distance - b.distance)
    .slice(0, max)
    .map((c) => c.candidate);
}
