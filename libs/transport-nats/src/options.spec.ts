import { describe, expect, it } from 'vitest';
import { maskServerUrl, natsTransport, resolveNatsTransportOptions } from './index.js';

const CONFIG = { name: 'ConfigError', code: 'BATON_CONFIG' };

function configError(make: () => unknown): Error {
  try {
    make();
  } catch (err) {
    expect(err).toMatchObject(CONFIG);
    return err as Error;
  }
  throw new Error('expected a ConfigError');
}

const CREDS = [
  '-----BEGIN NATS USER JWT-----',
  'eyJ0eXAiOiJKV1QiLCJhbGciOiJlZDI1NTE5LW5rZXkifQ.e30.sig',
  '------END NATS USER JWT------',
  '-----BEGIN USER NKEY SEED-----',
  'SUAIBDPBAUTWCWBKIO6XHQNINK5FWJW4OHLXC3HQ2KFE4PEJUA44CNHTC4',
  '------END USER NKEY SEED------',
].join('\n');

describe('nats transport options', () => {
  it('resolves defaults: local server, baton prefix, file storage, 30 s ack wait', () => {
    expect(resolveNatsTransportOptions()).toEqual({
      servers: ['nats://127.0.0.1:4222'],
      displayServers: 'nats://127.0.0.1:4222',
      credentials: { kind: 'none' },
      tls: undefined,
      prefix: 'baton',
      ackWaitMs: 30_000,
      storage: 'file',
      replicas: 1,
      priorityLanes: false,
      duplicateWindowMs: 120_000,
      maxAckPending: 10_000,
      connectTimeoutMs: 5_000,
      requestTimeoutMs: 5_000,
      leaderWaitMs: 20_000,
      name: 'baton-baton',
      explicitSettings: new Set(),
    });
  });

  it('refuses a leaderWaitMs that is not a positive whole number, naming it', () => {
    expect(() => resolveNatsTransportOptions({ leaderWaitMs: 0 })).toThrow(
      /leaderWaitMs is 0; use a positive whole number/,
    );
    expect(resolveNatsTransportOptions({ leaderWaitMs: 60_000 }).leaderWaitMs).toBe(60_000);
  });

  it('takes user and password out of the URL, decoded, and masks the password for messages', () => {
    const resolved = resolveNatsTransportOptions({ servers: 'nats://app:p%40ss@nats.internal:4333' });
    expect(resolved).toMatchObject({
      servers: ['nats://nats.internal:4333'],
      displayServers: 'nats://app:***@nats.internal:4333',
      credentials: { kind: 'userPass', user: 'app', pass: 'p@ss' },
    });
  });

  it('reads a user without password as a token, and masks the whole token', () => {
    const resolved = resolveNatsTransportOptions({ servers: 'nats://s3cr3t-token@127.0.0.1' });
    expect(resolved.credentials).toEqual({ kind: 'token', token: 's3cr3t-token' });
    expect(resolved.displayServers).toBe('nats://***@127.0.0.1');
    expect(resolved.servers).toEqual(['nats://127.0.0.1:4222']);
  });

  it('accepts several servers, comma-separated or as an array, and bare host:port', () => {
    expect(resolveNatsTransportOptions({ servers: 'nats://a:4222, b:4223' }).servers).toEqual([
      'nats://a:4222',
      'nats://b:4223',
    ]);
    expect(resolveNatsTransportOptions({ servers: ['nats://a', 'nats://b:5222'] }).servers).toEqual([
      'nats://a:4222',
      'nats://b:5222',
    ]);
  });

  it('requires TLS for tls:// URLs, and keeps explicit tls options', () => {
    expect(resolveNatsTransportOptions({ servers: 'tls://nats.internal' }).tls).toEqual({});
    expect(resolveNatsTransportOptions({ tls: { caFile: '/etc/ca.pem' } }).tls).toEqual({
      caFile: '/etc/ca.pem',
    });
  });

  it('lets credential options override the URL', () => {
    const resolved = resolveNatsTransportOptions({ servers: 'nats://app:old@127.0.0.1', token: 't' });
    expect(resolved.credentials).toEqual({ kind: 'token', token: 't' });
    expect(resolveNatsTransportOptions({ creds: CREDS }).credentials).toEqual({
      kind: 'creds',
      content: CREDS,
    });
    expect(resolveNatsTransportOptions({ credsFile: '/run/secrets/app.creds' }).credentials).toEqual({
      kind: 'credsFile',
      path: '/run/secrets/app.creds',
    });
  });

  it('remembers which stream settings were given explicitly', () => {
    const resolved = resolveNatsTransportOptions({ ackWaitMs: 30_000, storage: 'memory', name: 'w1' });
    expect([...resolved.explicitSettings].sort()).toEqual(['ackWaitMs', 'storage']);
  });

  it('rejects a malformed URL, naming it with the secret masked and the expected form', () => {
    const err = configError(() => natsTransport({ servers: 'nats://app:hunter2@:4222/x' }));
    expect(err.message).toContain("'nats://app:***@:4222/x'");
    expect(err.message).toContain('expected nats://[user:password@]host[:port]');
    expect(err.message).not.toContain('hunter2');
    const scheme = configError(() => natsTransport({ servers: 'http://127.0.0.1:4222' }));
    expect(scheme.message).toContain("the scheme is 'http'");
    const port = configError(() => natsTransport({ servers: 'nats://127.0.0.1:99999' }));
    expect(port.message).toContain('nats://127.0.0.1:99999');
    configError(() => natsTransport({ servers: 'nats://a:4222,,nats://b:4222' }));
  });

  it('rejects URLs that disagree on credentials', () => {
    const err = configError(() => natsTransport({ servers: 'nats://a:one@h1,nats://a:two@h2' }));
    expect(err.message).toContain('different credentials');
    expect(err.message).not.toMatch(/one|two/);
  });

  it('rejects a prefix that is not one safe lower-case token, saying what is allowed', () => {
    for (const prefix of ['', 'Baton', 'baton.prod', 'ba ton', 'b*', '>', '9lives', 'x'.repeat(49)]) {
      const err = configError(() => natsTransport({ prefix }));
      expect(err.message).toContain('prefix');
      expect(err.message).toContain("lower-case letters, digits, '-' and '_'");
    }
    expect(resolveNatsTransportOptions({ prefix: 'tenant_a-1' }).prefix).toBe('tenant_a-1');
  });

  it('rejects durations and counts that are not positive whole numbers, naming the option', () => {
    for (const [option, value] of [
      ['ackWaitMs', 0],
      ['ackWaitMs', 1.5],
      ['duplicateWindowMs', -1],
      ['maxAckPending', Number.NaN],
      ['connectTimeoutMs', '5000'],
      ['requestTimeoutMs', 0],
      ['replicas', 0],
      ['replicas', 7],
    ] as const) {
      const err = configError(() => natsTransport({ [option]: value }));
      expect(err.message).toContain(option);
    }
  });

  it('rejects an unknown option, an unknown storage and an empty name', () => {
    expect(configError(() => natsTransport({ url: 'nats://x' } as never)).message).toContain(
      "unknown option 'url'",
    );
    expect(configError(() => natsTransport({ storage: 'disk' as never })).message).toContain("'file'");
    configError(() => natsTransport({ name: ' ' }));
    configError(() => natsTransport({ tls: 'yes' as never }));
  });

  it('rejects several credentials at once, half a user/password pair and malformed secrets', () => {
    expect(configError(() => natsTransport({ token: 't', creds: CREDS })).message).toContain('set only one');
    expect(configError(() => natsTransport({ user: 'app' })).message).toContain('user and pass go together');
    expect(configError(() => natsTransport({ creds: 'not a creds file' })).message).toContain('credsFile');
    expect(configError(() => natsTransport({ nkeySeed: 'UABC' })).message).toContain("starts with 'SU'");
  });
});

describe('maskServerUrl', () => {
  it('masks passwords and tokens, also in URLs that do not parse', () => {
    expect(maskServerUrl('nats://app:pw@host:4222')).toBe('nats://app:***@host:4222');
    expect(maskServerUrl('nats://tok@host')).toBe('nats://***@host');
    expect(maskServerUrl('nats://app:p@ss@host')).toBe('nats://app:***@host');
    expect(maskServerUrl('host:4222')).toBe('host:4222');
  });
});
