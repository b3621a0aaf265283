/** `npm run docs:variables`: regenerates the README's tables of BATON_* variables from `@baton/host`'s VARIABLES. */
import { writeFileSync } from 'node:fs';
import { currentReadme, generateReadme, README_PATH } from './variables-doc.js';

const before = currentReadme();
const after = await generateReadme(before);
if (after === before) console.log("README.md's tables of variables are up to date");
else {
  writeFileSync(README_PATH, after);
  console.log("README.md's tables of variables regenerated: review the diff");
}
