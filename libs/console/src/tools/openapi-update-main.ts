/**
 * Writes the HTTP API's OpenAPI document (server/v1/openapi.ts) to docs/openapi.json, the copy a
 * producer in another language reads or generates a client from. Run by `npm run api:update`;
 * openapi.spec.ts fails while the checked-in copy differs from what the server serves.
 */
import { readFileSync, writeFileSync, existsSync } from 'node:fs';
import { openapiJson, OPENAPI_FILE } from './openapi-file.js';

const next = openapiJson();
if (existsSync(OPENAPI_FILE) && readFileSync(OPENAPI_FILE, 'utf8') === next) {
  console.log('docs/openapi.json is up to date');
} else {
  writeFileSync(OPENAPI_FILE, next);
  console.log('updated docs/openapi.json: review the diff');
}
