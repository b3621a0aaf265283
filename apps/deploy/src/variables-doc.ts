/**
 * The tables of BATON_* variables in docs/configuration.md, generated from `@baton/host`'s
 * VARIABLES so that what an operator reads is what the processes read. Each table sits between
 * `<!-- variables:start <table> -->` and `<!-- variables:end -->`;
 * `npm run docs:variables` rewrites them and variables-doc.spec.ts fails while they are stale.
 * A description's relative links are written from the repository root (as `baton --help` and the
 * source show them) and rebased here to the page's folder, so they resolve where they are read.
 */
import { readFileSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import { format, resolveConfig } from 'prettier';
import { VARIABLES, type BatonVariable, type VariableReader } from '@baton/host';
import { REPO } from './api-report.js';

/** The page that holds the tables. */
export const CONFIGURATION_DOC_PATH = resolve(REPO, 'docs/configuration.md');

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

/** A Markdown link target that is a path inside the repository (not a URL, not an anchor alone). */
const RELATIVE_LINK = /\]\((?![a-z][a-z0-9+.-]*:|#|\/)([^)\s]+)\)/gi;

/** `text`'s relative links, written from the repository root, as seen from the configuration page. */
function rebaseLinks(text: string): string {
  const from = dirname(CONFIGURATION_DOC_PATH);
  return text.replace(RELATIVE_LINK, (_all, target: string) => `](${relative(from, resolve(REPO, target))})`);
}

function cell(text: string): string {
  return rebaseLinks(text).replaceAll('|', '\\|');
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

/** The page with every marked table generated afresh, formatted as `npx prettier --write` would. */
export async function generateConfigurationDoc(text: string): Promise<string> {
  let found = 0;
  const replaced = text.replace(REGION, (_all, start: string, name: string, end: string) => {
    found++;
    return `${start}\n\n${renderTable(name)}\n\n${end}`;
  });
  if (found === 0) throw new Error('docs/configuration.md has no <!-- variables:start <table> --> marker');
  const options = await resolveConfig(CONFIGURATION_DOC_PATH);
  return format(replaced, { ...options, filepath: CONFIGURATION_DOC_PATH });
}

export function currentConfigurationDoc(): string {
  return readFileSync(CONFIGURATION_DOC_PATH, 'utf8');
}
