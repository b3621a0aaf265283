#!/usr/bin/env node
/**
 * `baton`: the command line over @baton/client's operator API. Configured by the worker's BATON_*
 * variables (flags override them); `baton --help` lists the commands, docs/operations.md
 * ("Operate runs") walks through them.
 */
import { runCli } from './program.js';

const code = await runCli(process.argv.slice(2), {
  env: process.env,
  io: { out: (text) => process.stdout.write(text), err: (text) => process.stderr.write(text) },
});
process.exitCode = code;
