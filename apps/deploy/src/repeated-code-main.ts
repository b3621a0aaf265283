/**
 * `npm run repeated:update`: writes the repeated-code baseline from the tree as it is, and lists
 * every clone so the change that moves the baseline can say why each one stays.
 */
import { countClones, findClones, writeBaseline } from './repeated-code.js';

const clones = await findClones();
for (const { a, b, lines } of clones) console.log(`${lines} lines: ${a} ~ ${b}`);
const counts = countClones(clones);
writeBaseline(counts);
console.log(
  `${clones.length} clones in ${Object.keys(counts).length} pairs of files written to apps/deploy/repeated-code-baseline.json`,
);
