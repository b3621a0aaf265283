/**
 * Reads the workers' own latency histograms from their /metrics endpoints and merges them, so the
 * journal-append and checkpoint-write percentiles come from inside the worker, not from guesses.
 * Percentiles from buckets are upper bounds: a value reported as 0.5 ms lies in the bucket ending
 * there.
 */
import type { Percentiles } from './types.js';

export interface Histogram {
  /** Cumulative counts by upper bound, in seconds, ascending; the last is +Inf. */
  buckets: Array<{ le: number; count: number }>;
  sum: number;
  count: number;
}

export async function scrape(port: number): Promise<string> {
  const res = await fetch(`http://127.0.0.1:${port}/metrics`, { signal: AbortSignal.timeout(5_000) });
  if (!res.ok) throw new Error(`GET /metrics on port ${port} answered ${res.status}`);
  return res.text();
}

/** The histogram `name` (Prometheus name, without _bucket), summed over every label set. */
export function histogram(text: string, name: string): Histogram {
  const byLe = new Map<number, number>();
  let sum = 0;
  let count = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith(`${name}_bucket{`)) {
      const le = /le="([^"]+)"/.exec(line)?.[1];
      if (le === undefined) continue;
      const bound = le === '+Inf' ? Infinity : Number(le);
      byLe.set(bound, (byLe.get(bound) ?? 0) + Number(line.slice(line.lastIndexOf(' ') + 1)));
    } else if (line.startsWith(`${name}_sum`)) {
      sum += Number(line.slice(line.lastIndexOf(' ') + 1));
    } else if (line.startsWith(`${name}_count`)) {
      count += Number(line.slice(line.lastIndexOf(' ') + 1));
    }
  }
  const buckets = [...byLe.entries()].sort((a, b) => a[0] - b[0]).map(([le, c]) => ({ le, count: c }));
  return { buckets, sum, count };
}

/**
 * {@link histogram} for a reading taken after work was done, where the histogram must be there: a
 * name missing from the page means the worker renamed it (docs/operations.md, "Renamed metrics"),
 * which must fail the bench rather than print empty percentiles.
 */
export function requireHistogram(text: string, name: string): Histogram {
  if (!text.split('\n').some((line) => line.startsWith(`${name}_count`))) {
    throw new Error(
      `the workers' /metrics has no histogram ${name}; was it renamed? (docs/operations.md lists the names)`,
    );
  }
  return histogram(text, name);
}

/**
 * The counter `name` (its full Prometheus name, `_total` included) summed over every label set; 0
 * when the page has no sample of it yet. Throws when the page does not declare it at all (a
 * renamed metric), as {@link requireHistogram} does.
 */
export function counterValue(text: string, name: string): number {
  let total = 0;
  let declared = false;
  for (const line of text.split('\n')) {
    if (line.startsWith('# TYPE ') && line.split(' ')[2] === name) declared = true;
    if (line.startsWith(`${name}{`) || line.startsWith(`${name} `)) {
      declared = true;
      total += Number(line.slice(line.lastIndexOf(' ') + 1));
    }
  }
  if (!declared) {
    throw new Error(
      `the workers' /metrics has no counter ${name}; was it renamed? (docs/operations.md lists the names)`,
    );
  }
  return total;
}

export function mergeHistograms(parts: readonly Histogram[]): Histogram {
  const byLe = new Map<number, number>();
  for (const part of parts) for (const b of part.buckets) byLe.set(b.le, (byLe.get(b.le) ?? 0) + b.count);
  return {
    buckets: [...byLe.entries()].sort((a, b) => a[0] - b[0]).map(([le, count]) => ({ le, count })),
    sum: parts.reduce((a, p) => a + p.sum, 0),
    count: parts.reduce((a, p) => a + p.count, 0),
  };
}

/** Subtracts an earlier reading, leaving what was recorded in between. */
export function since(later: Histogram, earlier: Histogram): Histogram {
  const before = new Map(earlier.buckets.map((b) => [b.le, b.count]));
  return {
    buckets: later.buckets.map((b) => ({ le: b.le, count: b.count - (before.get(b.le) ?? 0) })),
    sum: later.sum - earlier.sum,
    count: later.count - earlier.count,
  };
}

/** Percentiles in milliseconds (bucket upper bounds). */
export function histogramPercentiles(h: Histogram): Percentiles | null {
  if (h.count <= 0) return null;
  const at = (q: number): number => {
    const rank = q * h.count;
    const bucket = h.buckets.find((b) => b.count >= rank);
    return bucket ? bucket.le * 1000 : NaN;
  };
  return {
    count: h.count,
    p50: at(0.5),
    p99: at(0.99),
    // Infinity when a value exceeded the largest finite bucket.
    max: at(1),
    mean: (h.sum / h.count) * 1000,
  };
}
