/**
 * The checked-in copy of the OpenAPI document: where it is (docs/openapi.json) and its exact text,
 * shared by the script that writes it (openapi-update-main.ts) and the spec that compares it
 * (server/v1/openapi.spec.ts).
 */
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { OPENAPI_DOCUMENT } from '../server/v1/openapi.js';

/** docs/openapi.json, from this file (libs/console/src/tools/; never built, run from the sources). */
export const OPENAPI_FILE = resolve(dirname(fileURLToPath(import.meta.url)), '../../../../docs/openapi.json');

/** The document as the checked-in file holds it: two-space JSON and a final newline. */
export function openapiJson(): string {
  return `${JSON.stringify(OPENAPI_DOCUMENT, null, 2)}\n`;
}
