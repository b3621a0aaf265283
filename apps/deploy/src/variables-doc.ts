/**
 * The README's tables of BATON_* variables, generated from `@baton/host`'s VARIABLES so that what
 * an operator reads is what the processes read. Each table sits between
 * `<!-- variables:start <table> -->` and `<!-- variables:end -->` in README.md;
 * `npm run docs:variables` rewrites them and variables-doc.spec.ts fails while they are stale.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { format, resolveConfig } from 'prettier';
import { VARIABLES, type BatonVariable, type VariableReader } from '@baton/host';
import { REPO } from './api-report.js';

export const README_PATH = resolve(REPO, 'README.md');

/** What each generated table shows. */
interface TableSpec {
  /** The rows it shows; a shared variable a reader reads as the worker does is left to the worker's table. */
  rows(v: BatonVariable): boolean;
  reader: VariableReader;
  /** Its "read by" column (the worker's: which other processes read each variable too). */
  readBy?: boolean;
  /** Its "CLI flag" column: the flags of the `baton` CLI (and its console) overriding a variable. */
  flags?: boolean;
  /** Rows that are not BATON_* variables, after the others (the OpenTelemetry SDK's). */
  extra?: string[][];
}

const TABLES: Record<string, TableSpec> = {
  worker: {
    reader: 'worker',
    rows: (v) => v.readBy.includes('worker'),
    readBy: true,
    flags: true,
    extra: [
      [
        '`OTEL_*`',
        'tracing off',
        'worker, producer',
        '',
        'standard OpenTelemetry variables: tracing starts when an exporter is set (`OTEL_EXPORTER_OTLP_ENDPOINT`, `OTEL_TRACES_EXPORTER`); `OTEL_METRICS_EXPORTER=otlp` pushes metrics too',
      ],
    ],
  },
  producer: {
    reader: 'producer',
    rows: (v) =>
      v.readBy.includes('producer') && (!v.readBy.includes('worker') || v.notes?.producer !== undefined),
  },
  console: { reader: 'console', rows: (v) => v.readBy.includes('console'), flags: true },
};

const READER_LABELS: Record<VariableReader, string> = {
  worker: 'worker',
  producer: 'producer',
  operator: 'CLI, console',
  console: 'console',
};

function cell(text: string): string {
  return text.replaceAll('|', '\\|');
}

/** One table, as Markdown rows (prettier aligns them). */
export function renderTable(name: string): string {
  const spec = TABLES[name];
  if (spec === undefined)
    throw new Error(`no table of variables called '${name}' (${Object.keys(TABLES).join(', ')})`);
  const rows = VARIABLES.filter(spec.rows);
  const withFlags = spec.flags === true;
  const header = [
    'variable',
    'default',
    ...(spec.readBy ? ['read by'] : []),
    ...(withFlags ? ['CLI flag'] : []),
    'meaning',
  ];
  const body = rows.map((v) => [
    `\`${v.name}\``,
    v.default,
    ...(spec.readBy ? [v.readBy.map((r) => READER_LABELS[r]).join(', ')] : []),
    ...(withFlags ? [v.flag === undefined ? '' : `\`${v.flag.name}\``] : []),
    v.notes?.[spec.reader] ?? v.description,
  ]);
  const extra = (spec.extra ?? []).map((row) =>
    row.filter((_, i) => withFlags || i !== 3).filter((_, i) => spec.readBy || i !== 2),
  );
  return [header, header.map(() => '---'), ...body, ...extra]
    .map((row) => `| ${row.map(cell).join(' | ')} |`)
    .join('\n');
}

const REGION = /(<!-- variables:start (\w+) -->)[\s\S]*?(<!-- variables:end -->)/g;

/** The README with every marked table generated afresh, formatted as `npx prettier --write` would. */
export async function generateReadme(text: string): Promise<string> {
  let found = 0;
  const replaced = text.replace(REGION, (_all, start: string, name: string, end: string) => {
    found++;
    return `${start}\n\n${renderTable(name)}\n\n${end}`;
  });
  if (found === 0) throw new Error('README.md has no <!-- variables:start <table> --> marker');
  const options = await resolveConfig(README_PATH);
  return format(replaced, { ...options, filepath: README_PATH });
}

export function currentReadme(): string {
  return readFileSync(README_PATH, 'utf8');
}
