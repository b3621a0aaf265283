/**
 * Reads the Grafana dashboard (helm/baton-worker/dashboards/baton-workers.json) and checks its
 * queries against a worker's /metrics text: every metric name a query reads must be a series on the
 * page; every label a selector matches on must be a label of that series, and a value it asks for
 * by equality (or by a plain `a|b` alternation) one the series carries; every label a query groups
 * by must be a label of one of the query's metrics. Labels Prometheus adds when it scrapes a target
 * (TARGET_LABELS) are not on /metrics and are allowed anywhere. The template variables' queries
 * (`label_values(…)`) are checked the same way.
 */
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { metricNamesIn } from './operations-doc.spec-helper.js';

export const DASHBOARD_FILE = resolve(
  dirname(fileURLToPath(import.meta.url)),
  '../../../helm/baton-worker/dashboards/baton-workers.json',
);

/** Labels a Prometheus scrape (or a ServiceMonitor) attaches to every series of a target. */
export const TARGET_LABELS: ReadonlySet<string> = new Set(['job', 'instance', 'namespace', 'pod']);

export interface DashboardQuery {
  /** The panel title and target, or the template variable, the query comes from. */
  where: string;
  expr: string;
}

interface Panel {
  title?: string;
  targets?: { refId?: string; expr?: string }[];
  panels?: Panel[];
}

interface Dashboard {
  panels?: Panel[];
  templating?: { list?: { name: string; type: string; query?: unknown }[] };
}

export function readDashboard(file = DASHBOARD_FILE): Dashboard {
  return JSON.parse(readFileSync(file, 'utf8')) as Dashboard;
}

/**
 * Every PromQL expression of the dashboard: its panels' targets (rows' nested panels included)
 * and its query variables, `label_values(m{…}, l)` read as `count by (l) (m{…})`.
 */
export function dashboardQueries(dashboard: Dashboard): DashboardQuery[] {
  const queries: DashboardQuery[] = [];
  const walk = (panels: Panel[]): void => {
    for (const panel of panels) {
      for (const target of panel.targets ?? []) {
        if (typeof target.expr === 'string' && target.expr.trim() !== '')
          queries.push({ where: `panel '${panel.title}' ${target.refId ?? ''}`.trim(), expr: target.expr });
      }
      walk(panel.panels ?? []);
    }
  };
  walk(dashboard.panels ?? []);
  for (const variable of dashboard.templating?.list ?? []) {
    if (variable.type !== 'query') continue;
    const raw = variable.query;
    const text = typeof raw === 'string' ? raw : (raw as { query?: string } | undefined)?.query;
    const match = /^\s*label_values\((.*),\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\)\s*$/.exec(text ?? '');
    if (match === null)
      throw new Error(`variable '${variable.name}': '${text}' is not label_values(<selector>, <label>)`);
    queries.push({ where: `variable '${variable.name}'`, expr: `count by (${match[2]}) (${match[1]})` });
  }
  return queries;
}

/** What /metrics says of one series name: its label names and the values seen for each. */
export type Exposition = Map<string, Map<string, Set<string>>>;

/** Parses Prometheus text: series name (histograms' `_bucket`, `_sum`, `_count` apart) to labels. */
export function parseExposition(text: string): Exposition {
  const series: Exposition = new Map();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})?\s/.exec(line);
    if (match === null) throw new Error(`/metrics line not understood: ${line}`);
    const [, name, labels = ''] = match;
    let known = series.get(name!);
    if (known === undefined) series.set(name!, (known = new Map()));
    for (const [, label, value] of labels.matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
      let values = known.get(label!);
      if (values === undefined) known.set(label!, (values = new Set()));
      values.add(value!);
    }
  }
  return series;
}

const MATCHER = /([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)\s*"((?:[^"\\]|\\.)*)"/g;

/**
 * What is wrong with one query against a /metrics page: metrics it names that are missing, labels
 * its selectors or groupings use that those metrics lack, values it asks for that never appear.
 * Empty when the query only reads what the page holds.
 */
export function queryProblems(expr: string, exposed: Exposition): string[] {
  const problems: string[] = [];
  const metrics = metricNamesIn(expr);
  if (metrics.length === 0) problems.push('reads no metric');
  for (const name of metrics) if (!exposed.has(name)) problems.push(`metric ${name} is not on /metrics`);

  for (const selector of expr.matchAll(/([a-zA-Z_:][a-zA-Z0-9_:]*)\s*\{([^}]*)\}/g)) {
    const [, name, body] = selector;
    const labels = exposed.get(name!);
    if (labels === undefined) continue; // reported above
    for (const [, label, op, value] of body!.matchAll(MATCHER)) {
      if (TARGET_LABELS.has(label!)) continue;
      const values = labels.get(label!);
      if (values === undefined) {
        problems.push(`${name} has no label ${label}`);
        continue;
      }
      if (value!.includes('$')) continue; // a template variable: any value
      const wanted =
        op === '='
          ? [value!]
          : op === '=~' && /^[a-zA-Z0-9_.-]+(\|[a-zA-Z0-9_.-]+)*$/.test(value!)
            ? value!.split('|')
            : [];
      for (const one of wanted) {
        if (!values.has(one))
          problems.push(`${name} never has ${label}="${one}" (seen: ${[...values].join(', ')})`);
      }
    }
  }

  const ofQuery = new Set(metrics.flatMap((name) => [...(exposed.get(name)?.keys() ?? [])]));
  for (const grouping of expr.matchAll(
    /\b(?:by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)/g,
  )) {
    for (const label of grouping[1]!
      .split(',')
      .map((l) => l.trim())
      .filter((l) => l !== '')) {
      if (!TARGET_LABELS.has(label) && !ofQuery.has(label))
        problems.push(`groups by ${label}, which none of ${metrics.join(', ')} has`);
    }
  }
  return problems;
}
