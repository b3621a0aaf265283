import { describe, expect, it } from 'vitest';
import { ConfigError } from '@baton/core';
import { clientConfig } from './db.js';
import { maskPassword, resolvePostgresStoreOptions, type SynchronousCommit } from './options.js';
import { asynchronousReason } from './replication.js';
import { postgresStore } from './index.js';

describe('postgres store options', () => {
  it('applies the defaults', () => {
    expect(resolvePostgresStoreOptions()).toMatchObject({
      url: 'postgres://postgres@127.0.0.1:5432/test',
      server: '127.0.0.1:5432',
      database: 'test',
      user: 'postgres',
      schema: 'baton',
      quotedSchema: '"baton"',
      ssl: undefined,
      poolSize: 10,
      connectTimeoutMs: 5_000,
      statementTimeoutMs: undefined,
    });
  });

  it('accepts postgresql:// URLs and keeps explicit values', () => {
    const resolved = resolvePostgresStoreOptions({
      url: 'postgresql://app:s3cret@db.internal:6543/prod?sslmode=require',
      schema: 'Baton_Staging',
      ssl: { rejectUnauthorized: true },
      poolSize: 3,
      connectTimeoutMs: 1_000,
      statementTimeoutMs: 30_000,
    });
    expect(resolved).toMatchObject({
      server: 'db.internal:6543',
      database: 'prod',
      user: 'app',
      schema: 'Baton_Staging',
      quotedSchema: '"Baton_Staging"',
      poolSize: 3,
      connectTimeoutMs: 1_000,
      statementTimeoutMs: 30_000,
    });
    expect(resolved.displayUrl).toBe('postgresql://app:***@db.internal:6543/prod?sslmode=require');
  });

  it('names a malformed URL with its password masked and the expected form', () => {
    for (const url of ['postgres://app:hunter2@db:notaport/x', 'mysql://app:hunter2@db/x', 'db:5432', '']) {
      let error: unknown;
      try {
        postgresStore({ url });
      } catch (err) {
        error = err;
      }
      expect(error).toBeInstanceOf(ConfigError);
      expect(error).toMatchObject({ code: 'BATON_CONFIG' });
      const message = (error as Error).message;
      expect(message).toContain('postgres://user:password@host:5432/database');
      expect(message).not.toContain('hunter2');
    }
    expect(() => postgresStore({ url: 'postgres://app:hunter2@db:notaport/x' })).toThrow(
      "url 'postgres://app:***@db:notaport/x'",
    );
  });

  it('refuses schema names that are not plain identifiers, naming them', () => {
    for (const schema of ['', 'baton; drop table x', '1baton', 'ba"ton', 'a'.repeat(64), 'my-schema']) {
      expect(() => postgresStore({ schema })).toThrow(ConfigError);
      expect(() => postgresStore({ schema })).toThrow(`schema '${schema}'`);
    }
    expect(() => postgresStore({ schema: 'pg_baton' })).toThrow(/reserves for system schemas/);
  });

  it('refuses sizes and timeouts that are not positive integers', () => {
    expect(() => postgresStore({ poolSize: 0 })).toThrow(/poolSize must be a positive integer/);
    expect(() => postgresStore({ connectTimeoutMs: -1 })).toThrow(/connectTimeoutMs/);
    expect(() => postgresStore({ statementTimeoutMs: 1.5 })).toThrow(/statementTimeoutMs/);
    expect(() => postgresStore({ ssl: 'yes' as unknown as boolean })).toThrow(/ssl must be/);
  });

  it('takes a synchronous_commit level and the synchronous-standby requirement, refusing what contradicts it', () => {
    expect(resolvePostgresStoreOptions()).toMatchObject({
      synchronousCommit: undefined,
      requireSynchronousStandby: false,
    });
    expect(
      resolvePostgresStoreOptions({ synchronousCommit: 'remote_write', requireSynchronousStandby: true }),
    ).toMatchObject({ synchronousCommit: 'remote_write', requireSynchronousStandby: true });
    expect(clientConfig(resolvePostgresStoreOptions({ synchronousCommit: 'on' }), 'x').options).toBe(
      '-c synchronous_commit=on',
    );
    expect(clientConfig(resolvePostgresStoreOptions(), 'x').options).toBeUndefined();
    expect(() => postgresStore({ synchronousCommit: 'always' as SynchronousCommit })).toThrow(
      /synchronousCommit must be one of remote_apply, on, remote_write, local, off, got 'always'/,
    );
    expect(() => postgresStore({ synchronousCommit: 'local', requireSynchronousStandby: true })).toThrow(
      /synchronousCommit is 'local', which never waits/,
    );
    expect(() => postgresStore({ requireSynchronousStandby: 'yes' as unknown as boolean })).toThrow(
      /requireSynchronousStandby must be true or false/,
    );
  });

  it('says why replication settings leave acknowledged commits exposed to a failover', () => {
    const sync = {
      synchronousCommit: 'on',
      synchronousStandbyNames: '*',
      inRecovery: false,
      synchronousStandbys: 1,
    };
    expect(asynchronousReason(sync)).toBeUndefined();
    expect(asynchronousReason({ ...sync, synchronousCommit: 'remote_apply' })).toBeUndefined();
    expect(asynchronousReason({ ...sync, synchronousCommit: 'local' })).toMatch(
      /synchronous_commit is 'local'/,
    );
    expect(asynchronousReason({ ...sync, synchronousStandbyNames: '' })).toMatch(
      /synchronous_standby_names is empty/,
    );
    expect(asynchronousReason({ ...sync, inRecovery: true })).toMatch(/the server is a standby/);
  });

  it('masks passwords even in URLs that do not parse', () => {
    expect(maskPassword('postgres://u:p@ss@host/db')).toBe('postgres://u:***@host/db');
    expect(maskPassword('postgres://u:secret@h:x/db')).toBe('postgres://u:***@h:x/db');
    expect(maskPassword('postgres://u@h/db')).toBe('postgres://u@h/db');
  });
});
