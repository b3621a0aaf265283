/** `npm run docs:variables`: regenerates docs/configuration.md's tables of BATON_* variables from `@baton/host`'s VARIABLES. */
import { writeFileSync } from 'node:fs';
import {
  CONFIGURATION_DOC_PATH,
  currentConfigurationDoc,
  generateConfigurationDoc,
} from './variables-doc.js';

const before = currentConfigurationDoc();
const after = await generateConfigurationDoc(before);
if (after === before) console.log("docs/configuration.md's tables of variables are up to date");
else {
  writeFileSync(CONFIGURATION_DOC_PATH, after);
  console.log("docs/configuration.md's tables of variables regenerated: review the diff");
}
