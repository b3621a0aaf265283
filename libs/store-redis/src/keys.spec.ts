/**
 * KEY_SEGMENTS names every key the store writes: each key of keyLayout and each key the Lua
 * scripts build from the prefix has a family, and a key of another installation whose prefix
 * starts with this one's has none (what `baton admin drop` refuses on).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { KEY_SEGMENTS, keyLayout, storeKeyFamily } from './keys.js';

const PREFIX = 'baton:';
const LUA_DIR = new URL('./lua/', import.meta.url);

/** Every key keyLayout gives, its variable parts filled in. */
function layoutKeys(): string[] {
  const layout = keyLayout(PREFIX) as unknown as Record<string, unknown>;
  return Object.entries(layout).flatMap(([name, value]) => {
    if (name === 'prefix') return [];
    if (typeof value === 'string') return [value];
    if (typeof value === 'function') return [(value as (...args: string[]) => string)('x1', 'k1')];
    throw new Error(`keyLayout.${name} is neither a key nor a key builder`);
  });
}

/**
 * The literal that follows the prefix wherever a Lua script builds a key from it (`prefix ..
 * 'run:'`); a PUBLISH channel (`cancels:`) is no key, and is left out.
 */
function luaSegments(): string[] {
  const segments = new Set<string>();
  for (const file of readdirSync(LUA_DIR).filter((f) => f.endsWith('.lua'))) {
    for (const line of readFileSync(new URL(file, LUA_DIR), 'utf8').split('\n')) {
      if (line.includes("'PUBLISH'")) continue;
      for (const match of line.matchAll(/(?:\bprefix|ARGV\[1\])\s*\.\.\s*'([^']+)'/g))
        segments.add(match[1]!);
    }
  }
  return [...segments];
}

describe('the Redis store key families', () => {
  it("name every key of keyLayout and of the Lua scripts as the store's", () => {
    const keys = [
      ...layoutKeys(),
      ...luaSegments().map((s) => `${PREFIX}${s}${s.endsWith(':') ? 'x1' : ''}`),
    ];
    expect(keys.length).toBeGreaterThan(40);
    const unnamed = keys.filter((k) => storeKeyFamily(PREFIX, k) === undefined);
    expect(unnamed, 'add these to KEY_SEGMENTS (keys.ts)').toEqual([]);
  });

  it('group a family under one pattern and keep a key of its own as it is', () => {
    expect(storeKeyFamily(PREFIX, 'baton:run:r-1')).toBe('baton:run:*');
    expect(storeKeyFamily(PREFIX, 'baton:ckpt-sum:r-1')).toBe('baton:ckpt-sum:*');
    expect(storeKeyFamily(PREFIX, 'baton:held')).toBe('baton:held');
    expect(storeKeyFamily(PREFIX, 'baton:index:status:failed')).toBe('baton:index:*');
  });

  it("name no key of another installation whose prefix starts with this one's, nor of another application", () => {
    for (const key of [
      'baton:eu:run:r-1',
      'baton:eu:held',
      'baton:held2',
      'baton-bus:runs:wait',
      'baton:sessions:7',
    ])
      expect(storeKeyFamily(PREFIX, key), key).toBeUndefined();
    expect(new Set(KEY_SEGMENTS).size).toBe(KEY_SEGMENTS.length);
  });
});
