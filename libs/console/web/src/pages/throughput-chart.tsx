/**
 * The workers' throughput and failures over the last hour, from their own /metrics as the console
 * scrapes them: two small SVG bar charts, one bar per minute (runs completed with runs failed
 * stacked on top in red; activity attempts with the failed ones in red), each bar with a <title>,
 * then the hour's totals as a table and each scraped URL's state. The current minute is partial.
 */
import type { MetricsHistorySnapshot, MinuteSample } from '../types.js';

const WIDTH = 720;
const HEIGHT = 90;
const AXIS = 18;

function clock(t: number): string {
  return new Date(t).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
}

function Bars(props: {
  label: string;
  minutes: MinuteSample[];
  ok: (m: MinuteSample) => number;
  failed: (m: MinuteSample) => number;
  words: [string, string];
}) {
  const { minutes, ok, failed, words } = props;
  const max = Math.max(1, ...minutes.map((m) => ok(m) + failed(m)));
  const step = WIDTH / minutes.length;
  const h = (n: number): number => (n / max) * (HEIGHT - 4);
  return (
    <figure class="throughput">
      <figcaption>
        {props.label} <span class="muted">(per minute, at most {max})</span>
      </figcaption>
      <svg
        role="img"
        aria-label={`${props.label} per minute over the last hour`}
        viewBox={`0 0 ${WIDTH} ${HEIGHT + AXIS}`}
        width={WIDTH}
        height={HEIGHT + AXIS}
      >
        {minutes.map((m, i) => {
          const good = ok(m);
          const bad = failed(m);
          const x = i * step + 1;
          return (
            <g key={m.start} data-minute={m.start}>
              <title>{`${clock(m.start)}: ${good} ${words[0]}, ${bad} ${words[1]}`}</title>
              <rect class="bar-ok" x={x} width={step - 2} y={HEIGHT - h(good)} height={h(good)} />
              <rect class="bar-bad" x={x} width={step - 2} y={HEIGHT - h(good) - h(bad)} height={h(bad)} />
            </g>
          );
        })}
        <line class="axis" x1={0} x2={WIDTH} y1={HEIGHT} y2={HEIGHT} />
        {[0, 15, 30, 45, minutes.length - 1].map((i) =>
          minutes[i] ? (
            <text key={i} x={Math.min(i * step, WIDTH - 60)} y={HEIGHT + 14} class="tick">
              {clock(minutes[i]!.start)}
            </text>
          ) : null,
        )}
      </svg>
    </figure>
  );
}

export function ThroughputChart(props: { snapshot: MetricsHistorySnapshot }) {
  const { snapshot } = props;
  if (!snapshot.configured) {
    return (
      <p class="muted">
        No metrics URL was given: start the console with <code>--metrics-url</code> (or{' '}
        <code>BATON_CONSOLE_METRICS_URLS</code>) naming each worker's <code>/metrics</code> to see its
        throughput and failures here.
      </p>
    );
  }
  const sum = (f: (m: MinuteSample) => number) => snapshot.minutes.reduce((n, m) => n + f(m), 0);
  return (
    <>
      <Bars
        label="Runs"
        minutes={snapshot.minutes}
        ok={(m) => m.runsCompleted}
        failed={(m) => m.runsFailed}
        words={['completed', 'failed']}
      />
      <Bars
        label="Activity attempts"
        minutes={snapshot.minutes}
        ok={(m) => m.activities - m.activitiesFailed}
        failed={(m) => m.activitiesFailed}
        words={['succeeded', 'failed']}
      />
      <table aria-label="Last hour's totals">
        <thead>
          <tr>
            <th scope="col">Runs completed</th>
            <th scope="col">Runs failed</th>
            <th scope="col">Activity attempts</th>
            <th scope="col">Activity attempts failed</th>
          </tr>
        </thead>
        <tbody>
          <tr data-testid="hour-totals">
            <td data-counter="runsCompleted">{sum((m) => m.runsCompleted)}</td>
            <td data-counter="runsFailed">{sum((m) => m.runsFailed)}</td>
            <td data-counter="activities">{sum((m) => m.activities)}</td>
            <td data-counter="activitiesFailed">{sum((m) => m.activitiesFailed)}</td>
          </tr>
        </tbody>
      </table>
      <ul aria-label="Metrics sources" class="muted">
        {snapshot.sources.map((s) => (
          <li key={s.url}>
            {s.url}:{' '}
            {s.error ? (
              <span class="error">{s.error}</span>
            ) : s.lastScrapeAt ? (
              `scraped at ${new Date(s.lastScrapeAt).toLocaleTimeString()}`
            ) : (
              'not scraped yet'
            )}
          </li>
        ))}
      </ul>
    </>
  );
}
