/**
 * Throughput and failures over the last hour, from the workers' own metrics: the console scrapes
 * each worker's `/metrics` (Prometheus text, served on BATON_HTTP_PORT) at the URLs it was given
 * (`--metrics-url` / BATON_CONSOLE_METRICS_URLS), and keeps per-minute counts in memory of runs
 * completed and failed and activity attempts executed and failed.
 *
 * Invariants:
 * 1. A count is what a counter grew by between two scrapes of the same URL, added to the minute of
 *    the later scrape. A counter that went down (the worker restarted) counts from zero again.
 *    The first scrape of a URL only sets its baseline: what a worker did before the console
 *    started is not in any minute.
 * 2. At most {@link HISTORY_MINUTES} minutes are kept; memory does not grow with time.
 * 3. A scrape that fails (unreachable, not 200, too slow) changes no count and is reported per
 *    URL with its error; scrapes of one URL never overlap. URLs are shown without credentials.
 */

/** Minutes of history kept and shown. */
export const HISTORY_MINUTES = 60;
/** Default time between two scrapes of each URL. */
export const DEFAULT_SCRAPE_INTERVAL_MS = 10_000;
/** A scrape slower than this fails. */
const SCRAPE_TIMEOUT_MS = 5_000;
/** Largest /metrics answer read (a worker's is a few tens of kB). */
const MAX_METRICS_BYTES = 8 * 1024 * 1024;

/** The four counts of one minute. */
export interface MinuteCounts {
  runsCompleted: number;
  runsFailed: number;
  activities: number;
  activitiesFailed: number;
}

export type CounterName = keyof MinuteCounts;

const COUNTERS: readonly CounterName[] = ['runsCompleted', 'runsFailed', 'activities', 'activitiesFailed'];

/** One minute of the history: its start (ms since the epoch) and its counts. */
export interface MinuteSample extends MinuteCounts {
  start: number;
}

export interface MetricsSource {
  /** The URL without user name or password. */
  url: string;
  /** When the last scrape succeeded. */
  lastScrapeAt?: number;
  /** Why the last scrape failed (absent after a success). */
  error?: string;
}

export interface MetricsHistorySnapshot {
  /** False when the console was given no metrics URL: the page says how to give some. */
  configured: boolean;
  intervalMs: number;
  sources: MetricsSource[];
  /** The last {@link HISTORY_MINUTES} minutes, oldest first, the current one last (partial). */
  minutes: MinuteSample[];
}

/**
 * Reads the four totals from Prometheus text: `baton_runs_completed_total`,
 * `baton_runs_failed_total`, and `baton_activity_duration_seconds_count` (every attempt; those
 * labelled `baton_outcome="error"` failed), each summed over its label sets. A metric the text
 * lacks reads 0 (a worker that has not yet run anything exports none).
 */
export function readTotals(text: string): MinuteCounts {
  const totals: MinuteCounts = { runsCompleted: 0, runsFailed: 0, activities: 0, activitiesFailed: 0 };
  for (const line of text.split('\n')) {
    if (line.startsWith('#') || line.trim() === '') continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)/.exec(line);
    if (!match) continue;
    const value = Number(match[3]);
    if (!Number.isFinite(value)) continue;
    const [, name, labels = ''] = match;
    if (name === 'baton_runs_completed_total') totals.runsCompleted += value;
    else if (name === 'baton_runs_failed_total') totals.runsFailed += value;
    else if (name === 'baton_activity_duration_seconds_count') {
      totals.activities += value;
      if (/\bbaton_outcome="error"/.test(labels)) totals.activitiesFailed += value;
    }
  }
  return totals;
}

/** `url` without its user name and password, for the page and the log. */
export function publicUrl(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.username = '';
    parsed.password = '';
    return parsed.toString();
  } catch {
    return '(not a URL)';
  }
}

interface SourceState {
  url: string;
  shown: MetricsSource;
  last: MinuteCounts | undefined;
  busy: boolean;
}

export interface MetricsHistoryOptions {
  /** @defaultValue {@link DEFAULT_SCRAPE_INTERVAL_MS} */
  intervalMs?: number;
  /** Clock (tests). @defaultValue Date.now */
  now?: () => number;
  /** Where scrape failures are logged (already without credentials). */
  log?: (line: string) => void;
}

export class MetricsHistory {
  private readonly sources: SourceState[];
  private readonly minutes = new Map<number, MinuteCounts>();
  private readonly intervalMs: number;
  private readonly now: () => number;
  private timer: NodeJS.Timeout | undefined;
  private readonly aborts = new Set<AbortController>();

  constructor(
    urls: readonly string[],
    private readonly options: MetricsHistoryOptions = {},
  ) {
    this.sources = urls.map((url) => ({ url, shown: { url: publicUrl(url) }, last: undefined, busy: false }));
    this.intervalMs = options.intervalMs ?? DEFAULT_SCRAPE_INTERVAL_MS;
    this.now = options.now ?? Date.now;
  }

  /** Scrapes every URL now and then every interval, until stop(). Does nothing without URLs. */
  start(): void {
    if (this.sources.length === 0 || this.timer) return;
    void this.scrapeAll();
    this.timer = setInterval(() => void this.scrapeAll(), this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    for (const abort of this.aborts) abort.abort();
  }

  /** One round of scrapes (each URL not already being scraped); resolves when all have ended. */
  async scrapeAll(): Promise<void> {
    await Promise.all(this.sources.filter((s) => !s.busy).map((s) => this.scrape(s)));
  }

  /** Folds one reading of `source` into the minute of `at` (exported for the unit tests). */
  record(url: string, totals: MinuteCounts, at = this.now()): void {
    const source = this.sources.find((s) => s.url === url);
    if (!source) throw new Error(`record: ${publicUrl(url)} is not one of the metrics URLs`);
    this.fold(source, totals, at);
  }

  snapshot(at = this.now()): MetricsHistorySnapshot {
    const current = Math.floor(at / 60_000) * 60_000;
    const minutes: MinuteSample[] = [];
    for (let i = HISTORY_MINUTES - 1; i >= 0; i--) {
      const start = current - i * 60_000;
      const counts = this.minutes.get(start);
      minutes.push({
        start,
        runsCompleted: counts?.runsCompleted ?? 0,
        runsFailed: counts?.runsFailed ?? 0,
        activities: counts?.activities ?? 0,
        activitiesFailed: counts?.activitiesFailed ?? 0,
      });
    }
    return {
      configured: this.sources.length > 0,
      intervalMs: this.intervalMs,
      sources: this.sources.map((s) => ({ ...s.shown })),
      minutes,
    };
  }

  private async scrape(source: SourceState): Promise<void> {
    source.busy = true;
    const abort = new AbortController();
    this.aborts.add(abort);
    const timeout = setTimeout(
      () => abort.abort(new Error(`no answer in ${SCRAPE_TIMEOUT_MS} ms`)),
      SCRAPE_TIMEOUT_MS,
    );
    try {
      // fetch refuses a URL with credentials: they go as Basic authentication instead.
      const target = new URL(source.url);
      const headers: Record<string, string> = { Accept: 'text/plain' };
      if (target.username || target.password) {
        const user = decodeURIComponent(target.username);
        const pass = decodeURIComponent(target.password);
        headers['Authorization'] = `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`;
      }
      const res = await fetch(source.shown.url, { signal: abort.signal, headers });
      if (!res.ok) throw new Error(`HTTP ${res.status}`);
      const length = Number(res.headers.get('content-length') ?? 0);
      if (length > MAX_METRICS_BYTES) throw new Error(`answer of ${length} bytes is too large`);
      const text = await res.text();
      this.fold(source, readTotals(text), this.now());
      source.shown = { url: source.shown.url, lastScrapeAt: this.now() };
    } catch (err) {
      const reason = abort.signal.aborted ? abort.signal.reason : err;
      // Never the URL as given (it may hold a password): messages name the public one.
      const message = ((reason as Error)?.message ?? String(reason)).split(source.url).join(source.shown.url);
      const cause = (err as { cause?: { code?: string } })?.cause?.code;
      const error = `scraping ${source.shown.url} failed: ${message}${cause ? ` (${cause})` : ''}`;
      if (source.shown.error !== error) this.options.log?.(`console: ${error}`);
      source.shown = { ...source.shown, error };
    } finally {
      clearTimeout(timeout);
      this.aborts.delete(abort);
      source.busy = false;
    }
  }

  private fold(source: SourceState, totals: MinuteCounts, at: number): void {
    const last = source.last;
    source.last = totals;
    if (last === undefined) return; // the baseline (invariant 1)
    const minute = Math.floor(at / 60_000) * 60_000;
    const counts = this.minutes.get(minute) ?? {
      runsCompleted: 0,
      runsFailed: 0,
      activities: 0,
      activitiesFailed: 0,
    };
    for (const name of COUNTERS) {
      // A counter that went down was reset (a restarted worker): all it shows is new.
      counts[name] += totals[name] >= last[name] ? totals[name] - last[name] : totals[name];
    }
    this.minutes.set(minute, counts);
    const oldest = minute - (HISTORY_MINUTES - 1) * 60_000;
    for (const start of this.minutes.keys()) if (start < oldest) this.minutes.delete(start);
  }
}
