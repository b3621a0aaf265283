import { describe, expect, it } from 'vitest';
import { VARIABLES } from '@baton/host';
import { CONSOLE_ENV, isLoopbackHost, resolveConsoleOptions } from './config.js';

const TOKEN = 'a-long-enough-console-token';

describe('resolveConsoleOptions', () => {
  it('defaults to 127.0.0.1:8636, writable, no token', () => {
    expect(resolveConsoleOptions({}, {})).toEqual({
      host: '127.0.0.1',
      port: 8636,
      token: undefined,
      readOnly: false,
      trustedHeader: undefined,
      loopback: true,
      metricsUrls: [],
      storeTimeoutMs: 5_000,
      clientAddressHeader: undefined,
      webhookSecrets: [],
    });
  });

  it('reads the webhook secrets from the option or the comma-separated variable, and refuses a short one', () => {
    const env = { [CONSOLE_ENV.apiWebhookSecret]: ' new-secret-0123456789ab, ,old-secret-0123456789ab' };
    expect(resolveConsoleOptions({}, env).webhookSecrets).toEqual([
      'new-secret-0123456789ab',
      'old-secret-0123456789ab',
    ]);
    expect(
      resolveConsoleOptions({ webhookSecrets: ['given-secret-0123456789'] }, env).webhookSecrets,
    ).toEqual(['given-secret-0123456789']);
    expect(() =>
      resolveConsoleOptions({}, { [CONSOLE_ENV.apiWebhookSecret]: 'long-enough-secret-0123,tiny' }),
    ).toThrow(/^(?!.*tiny).*BATON_API_WEBHOOK_SECRET must hold secrets of at least 16 characters/);
    expect(VARIABLES.find((v) => v.name === CONSOLE_ENV.apiWebhookSecret)?.secret).toBe(true);
  });

  it("applies the defaults the table of variables shows (docs/configuration.md's and `baton console --help`'s)", () => {
    const resolved = resolveConsoleOptions({}, {});
    const shown = (name: string) => VARIABLES.find((v) => v.name === name)?.default;
    expect(shown(CONSOLE_ENV.host)).toBe(`\`${resolved.host}\``);
    expect(shown(CONSOLE_ENV.port)).toBe(`\`${resolved.port}\``);
    expect(shown(CONSOLE_ENV.readOnly)).toBe(`\`${resolved.readOnly}\``);
    expect(shown(CONSOLE_ENV.storeTimeoutMs)).toBe(`\`${resolved.storeTimeoutMs}\``);
    expect(shown(CONSOLE_ENV.token)).toBe('none');
    expect(resolved.token).toBeUndefined();
  });

  it('reads the bound on store calls from the option or the variable, and refuses one out of range', () => {
    expect(resolveConsoleOptions({}, { [CONSOLE_ENV.storeTimeoutMs]: '1500' }).storeTimeoutMs).toBe(1_500);
    expect(
      resolveConsoleOptions({ storeTimeoutMs: 250 }, { [CONSOLE_ENV.storeTimeoutMs]: '1500' }).storeTimeoutMs,
    ).toBe(250);
    for (const bad of ['0', '2.5', '5s', '300001'])
      expect(() => resolveConsoleOptions({}, { [CONSOLE_ENV.storeTimeoutMs]: bad })).toThrow(
        new RegExp(
          `BATON_CONSOLE_STORE_TIMEOUT_MS must be a whole number of milliseconds from 1 to 300000, got '${bad.replace('.', '\\.')}'`,
        ),
      );
  });

  it('reads the metrics URLs from the flag or the comma-separated variable, and refuses a non-http one', () => {
    const env = { [CONSOLE_ENV.metricsUrls]: ' http://w1:8080/metrics, ,https://w2:8080/metrics' };
    expect(resolveConsoleOptions({}, env).metricsUrls).toEqual([
      'http://w1:8080/metrics',
      'https://w2:8080/metrics',
    ]);
    expect(resolveConsoleOptions({ metricsUrls: ['http://w3:8080/metrics'] }, env).metricsUrls).toEqual([
      'http://w3:8080/metrics',
    ]);
    expect(() => resolveConsoleOptions({}, { [CONSOLE_ENV.metricsUrls]: 'w1:8080' })).toThrow(
      /BATON_CONSOLE_METRICS_URLS: 'w1:8080' is not an http\(s\) URL/,
    );
    // A password in a bad URL is not repeated in the message.
    expect(() => resolveConsoleOptions({ metricsUrls: ['ftp://u:secret@w1/metrics'] }, {})).toThrow(
      /^(?!.*secret).*not an http\(s\) URL/,
    );
  });

  it('takes flags over variables', () => {
    const env = {
      [CONSOLE_ENV.port]: '9000',
      [CONSOLE_ENV.readOnly]: 'false',
      [CONSOLE_ENV.host]: 'localhost',
    };
    const resolved = resolveConsoleOptions({ port: 8301, readOnly: true }, env);
    expect(resolved).toMatchObject({ port: 8301, readOnly: true, host: 'localhost', loopback: true });
    expect(resolveConsoleOptions({}, env)).toMatchObject({ port: 9000, readOnly: false });
  });

  it('refuses to bind beyond loopback without a token or a trusted header', () => {
    expect(() => resolveConsoleOptions({ host: '0.0.0.0' }, {})).toThrow(
      /no access control.*BATON_CONSOLE_TOKEN/,
    );
    expect(resolveConsoleOptions({ host: '0.0.0.0', token: TOKEN }, {})).toMatchObject({ loopback: false });
    expect(
      resolveConsoleOptions({ host: '10.0.0.5' }, { [CONSOLE_ENV.trustedHeader]: 'X-Forwarded-User' }),
    ).toMatchObject({ trustedHeader: 'x-forwarded-user' });
  });

  it('refuses a short token, a bad port, a bad boolean and a bad header name, naming each', () => {
    expect(() => resolveConsoleOptions({ token: 'short' }, {})).toThrow(/at least 16 characters/);
    expect(() => resolveConsoleOptions({}, { [CONSOLE_ENV.port]: 'http' })).toThrow(
      /BATON_CONSOLE_PORT.*'http'/,
    );
    expect(() => resolveConsoleOptions({ port: 70_000 }, {})).toThrow(/0 to 65535/);
    expect(() => resolveConsoleOptions({}, { [CONSOLE_ENV.readOnly]: 'maybe' })).toThrow(
      /BATON_CONSOLE_READ_ONLY must be true or false/,
    );
    expect(() => resolveConsoleOptions({}, { [CONSOLE_ENV.trustedHeader]: 'X User' })).toThrow(/header name/);
    expect(() =>
      resolveConsoleOptions({}, { [CONSOLE_ENV.clientAddressHeader]: 'X-Forwarded-For:' }),
    ).toThrow(/BATON_CONSOLE_CLIENT_ADDRESS_HEADER must be a header name/);
    expect(
      resolveConsoleOptions({}, { [CONSOLE_ENV.clientAddressHeader]: 'X-Forwarded-For' }).clientAddressHeader,
    ).toBe('x-forwarded-for');
  });

  it('tells loopback names from the rest', () => {
    for (const host of ['127.0.0.1', '127.1.2.3', 'localhost', '::1', '[::1]'])
      expect(isLoopbackHost(host)).toBe(true);
    for (const host of ['0.0.0.0', '::', '10.0.0.1', 'example.com', '127.0.0.1.evil.com'])
      expect(isLoopbackHost(host)).toBe(false);
  });
});
