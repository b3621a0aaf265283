/** Fresh random keys for the payload specs, with their material, so tests can look for leaks. */
import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import { parseKeyring, type KeyPurpose, type Keyring } from './keyring.js';

export interface TestKeys {
  /** `id:base64` entries joined by commas, as the environment variable holds them. */
  spec: string;
  /** The base64 material of every key, to assert it appears nowhere. */
  secrets: string[];
}

export function testKeys(ids: readonly string[], bytes = 32): TestKeys {
  const secrets = ids.map(() => randomBytes(bytes).toString('base64'));
  return { spec: ids.map((id, i) => `${id}:${secrets[i]}`).join(','), secrets };
}

export function testKeyring(
  purpose: KeyPurpose,
  ids: readonly string[],
  activeId?: string,
): { ring: Keyring; secrets: string[] } {
  const keys = testKeys(ids);
  return { ring: parseKeyring(keys.spec, { purpose, activeId }), secrets: keys.secrets };
}

/** Every form a key can take in text: base64, base64url, hex, and a 16-character fragment of each. */
function leakForms(secret: string): string[] {
  const bytes = Buffer.from(secret, 'base64');
  const forms = [secret, bytes.toString('base64url'), bytes.toString('hex')];
  return [...forms, ...forms.map((form) => form.slice(8, 24))];
}

/** Asserts that no form of any of the keys appears in `text`. */
export function expectNoLeak(text: string, secrets: readonly string[]): void {
  expect(text.length).toBeGreaterThan(0);
  for (const secret of secrets) {
    for (const form of leakForms(secret)) expect(text).not.toContain(form);
  }
}
