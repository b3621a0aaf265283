/**
 * SQL text helpers. Every statement names its tables as `{{schema}}.table`; the store replaces
 * the token with its schema, validated and quoted once at start-up, so no statement depends on
 * the connection's search_path.
 */

/** The token SQL files and query strings use for the store's schema. */
export const SCHEMA_TOKEN = '{{schema}}';

/** Quotes an identifier for SQL (doubling any embedded quote). */
export function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** Replaces every schema token in `sql` with the quoted schema. */
export function inSchema(sql: string, quotedSchema: string): string {
  return sql.replaceAll(SCHEMA_TOKEN, quotedSchema);
}
