/**
 * Reads the queries out of docs/operations.md: its ```promql blocks, the `expr:` of each alert in
 * its alert rules block, and inline PromQL in backticks; and the metric names each query reads. The
 * doc's spec checks those names against a worker's real /metrics, the chart's spec checks its
 * PrometheusRule against the alerts.
 */
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const OPERATIONS_DOC = resolve(dirname(fileURLToPath(import.meta.url)), '../../../docs/operations.md');

export function readOperationsDoc(): string {
  return readFileSync(OPERATIONS_DOC, 'utf8');
}

/** The bodies of the doc's fenced blocks in `language`. */
export function fencedBlocks(doc: string, language: string): string[] {
  const blocks: string[] = [];
  const fence = new RegExp('^```' + language + '\\s*\\n([\\s\\S]*?)^```', 'gm');
  for (const match of doc.matchAll(fence)) blocks.push(match[1]!);
  return blocks;
}

/** The alert rules block: the ```yaml block holding `groups:`. */
export function alertRulesBlock(doc: string): string {
  const block = fencedBlocks(doc, 'yaml').find((b) => /^groups:/m.test(b));
  if (block === undefined)
    throw new Error('docs/operations.md has no ```yaml block with the alert rules (groups:)');
  return block;
}

/** Every PromQL expression of the doc: one per line of its promql blocks, each alert's expr, inline ones. */
export function docQueries(doc: string): string[] {
  const queries: string[] = [];
  for (const block of fencedBlocks(doc, 'promql')) {
    for (const line of block.split('\n')) {
      const query = line.replace(/\s#.*$/, '').trim();
      if (query !== '') queries.push(query);
    }
  }
  for (const match of alertRulesBlock(doc).matchAll(/^\s*expr:\s*(.+)$/gm)) queries.push(match[1]!.trim());
  // Inline queries: a backticked function call over a Baton metric, e.g. `sum(rate(baton_x_total[5m]))`.
  for (const match of doc.matchAll(/`([a-z_]+\([^`]*\b(?:baton|nodejs|v8js)_[^`]*)`/g))
    queries.push(match[1]!);
  return queries;
}

const KEYWORDS = new Set([
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'bool',
  'and',
  'or',
  'unless',
  'offset',
  'inf',
  'nan',
]);

/**
 * The metric names a PromQL expression reads: identifiers that are not functions or aggregations
 * (followed by `(`), keywords, label names (in `{…}`, `by (…)`, `without (…)`, `on (…)`,
 * `ignoring (…)`), strings, durations or numbers.
 */
export function metricNamesIn(query: string): string[] {
  const stripped = query
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'/g, ' ')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ')
    .replace(/\b\d+(?:\.\d+)?(?:e[+-]?\d+)?\b/gi, ' ');
  const names = new Set<string>();
  for (const match of stripped.matchAll(/[a-zA-Z_:][a-zA-Z0-9_:]*(\s*\()?/g)) {
    const [whole, call] = match;
    const name = whole.replace(/\s*\($/, '');
    if (call !== undefined || KEYWORDS.has(name.toLowerCase())) continue;
    names.add(name);
  }
  return [...names];
}
