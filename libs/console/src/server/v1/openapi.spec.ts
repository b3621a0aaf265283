/**
 * The OpenAPI document against the code it describes: every route has its path and method in the
 * document and every operation there is a route; every `$ref` resolves; and the checked-in copy
 * (docs/openapi.json, rewritten by `npm run api:update`) is exactly what the server serves.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { OPENAPI_FILE, openapiJson } from '../../tools/openapi-file.js';
import { API_ROUTES, OPENAPI_PATH } from './http-api.js';
import { OPENAPI_DOCUMENT } from './openapi.js';

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/** Every `method path` the document describes. */
function documentedOperations(): string[] {
  return Object.entries(OPENAPI_DOCUMENT.paths).flatMap(([path, item]) =>
    Object.keys(item)
      .filter((key) => METHODS.includes(key))
      .map((method) => `${method.toUpperCase()} ${path}`),
  );
}

/** Every `$ref` in `value`, depth first. */
function refs(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(refs);
  if (typeof value !== 'object' || value === null) return [];
  return Object.entries(value).flatMap(([key, v]) =>
    key === '$ref' && typeof v === 'string' ? [v] : refs(v),
  );
}

describe('the OpenAPI document', () => {
  it('describes every route, and nothing that is not one', () => {
    const routes = API_ROUTES.map((r) => `${r.method} ${r.path}`).sort();
    expect(documentedOperations().sort()).toEqual(routes);
    expect(new Set(routes).size).toBe(routes.length);
    // The document itself is served beside them, outside the table.
    expect(OPENAPI_PATH).toBe('/v1/openapi.json');
  });

  it('names every operation once, gives each its answers, and resolves every $ref', () => {
    const ids = Object.values(OPENAPI_DOCUMENT.paths).flatMap((item) =>
      Object.values(item as Record<string, { operationId: string; responses: object }>).map((op) => {
        expect(Object.keys(op.responses).length, op.operationId).toBeGreaterThan(3);
        return op.operationId;
      }),
    );
    expect(new Set(ids).size).toBe(ids.length);
    for (const ref of refs(OPENAPI_DOCUMENT)) {
      const target = ref
        .replace(/^#\//, '')
        .split('/')
        .reduce<unknown>(
          (node, part) => (node as Record<string, unknown> | undefined)?.[part],
          OPENAPI_DOCUMENT,
        );
      expect(target, ref).toBeDefined();
    }
    // Path parameters are declared for each template name.
    for (const [path, item] of Object.entries(OPENAPI_DOCUMENT.paths)) {
      const names = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
      for (const op of Object.values(
        item as Record<string, { parameters?: readonly { name: string; in: string }[] }>,
      )) {
        const declared = (op.parameters ?? []).filter((p) => p.in === 'path').map((p) => p.name);
        expect(declared.sort(), path).toEqual([...names].sort());
      }
    }
  });

  it('is checked in as docs/openapi.json exactly as served (npm run api:update rewrites it)', () => {
    expect(readFileSync(OPENAPI_FILE, 'utf8')).toBe(openapiJson());
  });
});
