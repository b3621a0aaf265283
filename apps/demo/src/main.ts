/**
 * `npm start`: three workers on the embedded default process 50 loan applications while one of
 * them is crashed mid-run; exits 0 only if every invariant held.
 *
 * Options (args.ts): `--runs N`, `--seed N`, `--plain` (no in-place redraw), `--quiet` (summary
 * only), `--console` (then serve the web console until Ctrl-C), `--help`.
 */
import { startConsole } from '@baton/console';
import type { Client } from '@baton/client';
import { parseDemoArgs, USAGE, UsageError, type DemoArgs } from './args.js';
import { runDemo } from './demo.js';
import { formatSummary, type DemoSummary } from './summary.js';

/**
 * `--console`: prints the summary, serves the console over the demo's still-running fleet, and
 * resolves on Ctrl-C or SIGTERM (the fleet then stops).
 */
async function serveConsole(client: Client, summary: DemoSummary): Promise<void> {
  console.log(formatSummary(summary).join('\n'));
  // The console's own variables apply; the fleet is the demo's in-memory bus and store.
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => name.startsWith('BATON_CONSOLE_')),
  );
  const server = await startConsole({
    client,
    env: { ...env, BATON_TRANSPORT_URL: 'memory:', BATON_STORE_URL: 'memory:' },
    log: (line) => console.error(line),
  });
  console.log(
    `\nThe console on ${server.url} shows these runs, each one's steps per worker and epoch (Ctrl-C to stop)`,
  );
  await new Promise<void>((resolve) => {
    process.once('SIGINT', () => resolve());
    process.once('SIGTERM', () => resolve());
  });
  await server.close();
}

async function main(): Promise<number> {
  let options: DemoArgs | 'help';
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
  const { console: withConsole, ...demo } = options;
  const summary = await runDemo({ ...demo, ...(withConsole && { keepFleetWith: serveConsole }) });
  if (!withConsole) console.log(formatSummary(summary).join('\n'));
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
