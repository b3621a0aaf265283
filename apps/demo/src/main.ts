/**
 * `npm start`: three workers on the embedded default process 50 loan applications while one of
 * them is crashed mid-run; exits 0 only if every invariant held.
 *
 * Options: `--runs N`, `--seed N`, `--plain` (no in-place redraw), `--quiet` (summary only).
 */
import { parseArgs } from 'node:util';
import { runDemo } from './demo.js';
import { formatSummary } from './summary.js';

function integer(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 1)
    throw new Error(`--${name} must be a positive integer, got '${value}'`);
  return parsed;
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      runs: { type: 'string' },
      seed: { type: 'string' },
      plain: { type: 'boolean', default: false },
      quiet: { type: 'boolean', default: false },
    },
  });
  const summary = await runDemo({
    runs: integer('runs', values.runs),
    seed: integer('seed', values.seed),
    output: values.quiet ? 'silent' : values.plain ? 'plain' : 'auto',
  });
  console.log(formatSummary(summary).join('\n'));
  return summary.ok ? 0 : 1;
}

// process.exit: the crashed worker is left hanging on purpose (a dead pod is never stopped), so
// the demo ends the process itself instead of relying on the event loop to drain.
main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error('demo failed:', err);
    process.exit(1);
  },
);
