#!/usr/bin/env node
/**
 * `baton`: the command line over @baton/client's operator API. Configured by the worker's BATON_*
 * variables (flags override them); `baton --help` lists the commands, docs/operations.md
 * ("Operate runs") walks through them.
 */
import { runCli } from './program.js';

// The first Ctrl-C lets a bulk action finish the items under way and print its summary; a
// second one ends the process at once.
const interrupt = new AbortController();
process.once('SIGINT', () => {
  interrupt.abort();
  process.once('SIGINT', () => process.exit(130));
});

// The reader of stdout went away (`baton runs tail … | head`): nothing more is wanted, so end
// quietly, as `cat` and `grep` do, rather than with Node's unhandled EPIPE.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code !== 'EPIPE') throw err;
  process.exit(0);
});

const code = await runCli(process.argv.slice(2), {
  interrupt: interrupt.signal,
  env: process.env,
  io: { out: (text) => process.stdout.write(text), err: (text) => process.stderr.write(text) },
});
// Exit once the output is written, rather than when the event loop empties: a client library
// that keeps a socket or timer alive after its close must not keep the command from ending.
process.exitCode = code;
process.stdout.write('', () => process.stderr.write('', () => process.exit(code)));
