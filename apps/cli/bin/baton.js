#!/usr/bin/env node
// The `baton` command's launcher, checked in rather than built: npm links a package's bin when it
// installs the package, and in this repository that is `npm ci`, before anything is built. A bin
// pointing into dist/ would not exist then, and npm would make no link, so `npx baton` would fail
// even after `npm run build`. This file always exists; it starts the built CLI, or says how to build it.
import { existsSync } from 'node:fs';
import process from 'node:process';
import { fileURLToPath, URL } from 'node:url';

const main = new URL('../dist/main.js', import.meta.url);
if (!existsSync(main)) {
  process.stderr.write(
    `baton: the CLI is not built (${fileURLToPath(main)} is missing): run \`npm run build\` first\n`,
  );
  process.exit(1);
}
await import(main.href);
