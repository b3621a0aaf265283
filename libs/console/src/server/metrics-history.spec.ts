/**
 * The metrics history's arithmetic: counters read from Prometheus text, growth between two
 * scrapes added to the later scrape's minute, a reset counter counted from zero, the first scrape
 * a baseline only, an hour kept and no more, and a failed scrape reported without credentials
 * (against a real HTTP server on a free port). The end-to-end figures from real worker processes
 * are in console.serial.int.spec.ts.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { HISTORY_MINUTES, MetricsHistory, readTotals } from './metrics-history.js';

const TEXT = `# HELP baton_runs_completed_total Runs that completed
# TYPE baton_runs_completed_total counter
baton_runs_completed_total{baton_workflow="a"} 3
baton_runs_completed_total{baton_workflow="b"} 4
baton_runs_failed_total{baton_workflow="a"} 1
baton_activity_duration_seconds_bucket{baton_outcome="ok",le="0.001"} 2
baton_activity_duration_seconds_count{baton_activity_name="x",baton_outcome="ok"} 10
baton_activity_duration_seconds_count{baton_activity_name="x",baton_outcome="error"} 2
baton_activity_duration_seconds_sum{baton_outcome="error"} 0.5
baton_runs_started_total 99
`;

const totals = (runsCompleted: number, runsFailed = 0, activities = 0, activitiesFailed = 0) => ({
  runsCompleted,
  runsFailed,
  activities,
  activitiesFailed,
});

const MINUTE = 60_000;
const T0 = 1_800_000_000_000 - (1_800_000_000_000 % MINUTE);

describe('readTotals', () => {
  it('sums each counter over its label sets, and counts failed activity attempts by outcome', () => {
    expect(readTotals(TEXT)).toEqual(totals(7, 1, 12, 2));
  });

  it('reads a worker that has run nothing as zeros', () => {
    expect(readTotals('# no baton metrics yet\nprocess_cpu_seconds_total 1.5\n')).toEqual(totals(0));
  });
});

describe('MetricsHistory', () => {
  const URL_A = 'http://a:8080/metrics';
  const URL_B = 'http://b:8080/metrics';

  it('adds what each counter grew by to the minute of the later scrape, the first scrape a baseline', () => {
    const history = new MetricsHistory([URL_A, URL_B]);
    history.record(URL_A, totals(100, 5, 300, 9), T0 + 1_000); // baseline: nothing counted
    history.record(URL_B, totals(7), T0 + 2_000);
    history.record(URL_A, totals(110, 6, 330, 10), T0 + 20_000);
    history.record(URL_B, totals(9), T0 + 30_000);
    history.record(URL_A, totals(111, 6, 333, 10), T0 + MINUTE + 5_000);
    const { minutes, configured } = history.snapshot(T0 + MINUTE + 10_000);
    expect(configured).toBe(true);
    expect(minutes).toHaveLength(HISTORY_MINUTES);
    expect(minutes.at(-1)).toEqual({ start: T0 + MINUTE, ...totals(1, 0, 3, 0) });
    expect(minutes.at(-2)).toEqual({ start: T0, ...totals(12, 1, 30, 1) });
    expect(minutes.slice(0, -2).every((m) => m.runsCompleted === 0 && m.activities === 0)).toBe(true);
  });

  it('counts a counter that went down (a restarted worker) from zero', () => {
    const history = new MetricsHistory([URL_A]);
    history.record(URL_A, totals(50, 0, 100, 0), T0);
    history.record(URL_A, totals(3, 1, 8, 2), T0 + 10_000);
    expect(history.snapshot(T0 + 20_000).minutes.at(-1)).toEqual({ start: T0, ...totals(3, 1, 8, 2) });
  });

  it('keeps an hour, and forgets older minutes', () => {
    const history = new MetricsHistory([URL_A]);
    history.record(URL_A, totals(0), T0);
    history.record(URL_A, totals(5), T0 + 1_000);
    history.record(URL_A, totals(6), T0 + HISTORY_MINUTES * MINUTE);
    const { minutes } = history.snapshot(T0 + HISTORY_MINUTES * MINUTE);
    expect(minutes[0]!.start).toBe(T0 + MINUTE);
    expect(minutes.reduce((sum, m) => sum + m.runsCompleted, 0)).toBe(1);
  });

  it('says when it has no URL', () => {
    expect(new MetricsHistory([]).snapshot().configured).toBe(false);
  });
});

describe('MetricsHistory scraping over HTTP', () => {
  let server: Server | undefined;
  afterEach(() => new Promise<void>((done) => (server ? server.close(() => done()) : done())));

  it('scrapes a /metrics server, and reports a failing one by URL without its password', async () => {
    let completed = 1;
    const authorizations: (string | undefined)[] = [];
    server = createServer((req, res) => {
      if (req.url === '/broken') authorizations.push(req.headers.authorization);
      if (req.url === '/metrics') {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end(`baton_runs_completed_total ${completed}\n`);
      } else res.writeHead(500).end('broken');
    });
    await new Promise<void>((done) => server!.listen(0, '127.0.0.1', done));
    const port = (server.address() as AddressInfo).port;
    const good = `http://127.0.0.1:${port}/metrics`;
    const bad = `http://user:hunter2-secret@127.0.0.1:${port}/broken`;
    const logged: string[] = [];
    const history = new MetricsHistory([good, bad], { log: (line) => logged.push(line) });
    await history.scrapeAll();
    completed = 4;
    await history.scrapeAll();
    const snapshot = history.snapshot();
    expect(snapshot.minutes.reduce((sum, m) => sum + m.runsCompleted, 0)).toBe(3);
    expect(snapshot.sources[0]).toMatchObject({ url: good });
    expect(snapshot.sources[0]!.error).toBeUndefined();
    expect(snapshot.sources[0]!.lastScrapeAt).toBeGreaterThan(0);
    expect(snapshot.sources[1]!.error).toMatch(/scraping http:\/\/127\.0\.0\.1:\d+\/broken failed: HTTP 500/);
    expect(JSON.stringify(snapshot) + logged.join('\n')).not.toContain('hunter2');
    expect(logged).toHaveLength(1); // the same failure is logged once
    // The URL's credentials went as Basic authentication.
    expect(authorizations).toEqual([
      `Basic ${Buffer.from('user:hunter2-secret').toString('base64')}`,
      `Basic ${Buffer.from('user:hunter2-secret').toString('base64')}`,
    ]);
  });
});
