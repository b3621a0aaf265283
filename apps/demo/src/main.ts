/**
 * `npm start`: three workers on the embedded default process 50 loan applications while one of
 * them is crashed mid-run; exits 0 only if every invariant held.
 *
 * Options (args.ts): `--runs N`, `--seed N`, `--plain` (no in-place redraw), `--quiet` (summary
 * only), `--help`.
 */
import { parseDemoArgs, USAGE, UsageError } from './args.js';
import { runDemo, type DemoOptions } from './demo.js';
import { formatSummary } from './summary.js';

async function main(): Promise<number> {
  let options: DemoOptions | 'help';
  try {
    options = parseDemoArgs(process.argv.slice(2));
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    console.error(err.message);
    return 2;
  }
  if (options === 'help') {
    console.log(USAGE);
    return 0;
  }
  const summary = await runDemo(options);
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
