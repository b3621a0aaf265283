/**
 * Credentials: exactly one way to authenticate (user/password, token, a .creds file or its
 * content, an NKey seed), from the options or else from the server URL. Secrets never appear in
 * messages.
 */
import { readFile } from 'node:fs/promises';
import {
  credsAuthenticator,
  nkeyAuthenticator,
  tokenAuthenticator,
  usernamePasswordAuthenticator,
  type Authenticator,
} from '@nats-io/transport-node';
import { invalidOption } from '@baton/core/adapter';
import type { UrlCredentials } from './server-urls.js';

/** How the transport authenticates. */
export type NatsCredentials =
  | { kind: 'none' }
  | { kind: 'userPass'; user: string; pass: string }
  | { kind: 'token'; token: string }
  | { kind: 'credsFile'; path: string }
  | { kind: 'creds'; content: string }
  | { kind: 'nkey'; seed: string };

/** Credentials of some kind. */
type GivenCredentials = Exclude<NatsCredentials, { kind: 'none' }>;

/** The credential options of {@link NatsTransportOptions}. */
interface CredentialOptions {
  user?: string | undefined;
  pass?: string | undefined;
  token?: string | undefined;
  credsFile?: string | undefined;
  creds?: string | undefined;
  nkeySeed?: string | undefined;
}

const EXCLUSIVE = 'set only one of user/pass, token, credsFile, creds and nkeySeed';
const COMPONENT = 'natsTransport';
/** The option that gives each kind of credential, for the errors that name it. */
const OPTION_OF: Record<GivenCredentials['kind'], string> = {
  userPass: 'user',
  token: 'token',
  credsFile: 'credsFile',
  creds: 'creds',
  nkey: 'nkeySeed',
};

/** Picks the one credential the options (or else the URL) give; throws ConfigError on conflicts. */
export function resolveCredentials(options: CredentialOptions, fromUrl: UrlCredentials): NatsCredentials {
  for (const name of ['user', 'pass', 'token', 'credsFile', 'creds', 'nkeySeed'] as const) {
    const value: unknown = options[name];
    if (value !== undefined && (typeof value !== 'string' || value === '')) {
      // Only a user name or a path may be shown; the others are secrets.
      const shown = name === 'user' || name === 'credsFile' ? JSON.stringify(value) : typeof value;
      throw invalidOption(
        { component: COMPONENT, option: name, value: shown, expected: 'a non-empty string, or left out' },
        `${name} must be a non-empty string, or left out`,
      );
    }
  }
  const given: GivenCredentials[] = [];
  if (options.user !== undefined || options.pass !== undefined) {
    if (options.user === undefined || options.pass === undefined) {
      const [given, missing] = options.user === undefined ? ['pass', 'user'] : ['user', 'pass'];
      throw invalidOption(
        {
          component: COMPONENT,
          option: given,
          value: given === 'user' ? JSON.stringify(options.user) : '***',
          expected: `it goes with ${missing}; set both, or neither`,
          related: [missing],
        },
        'user and pass go together; set both, or neither',
      );
    }
    given.push({ kind: 'userPass', user: options.user, pass: options.pass });
  }
  if (options.token !== undefined) given.push({ kind: 'token', token: options.token });
  if (options.credsFile !== undefined) given.push({ kind: 'credsFile', path: options.credsFile });
  if (options.creds !== undefined) given.push({ kind: 'creds', content: checkCredsContent(options.creds) });
  if (options.nkeySeed !== undefined) given.push({ kind: 'nkey', seed: checkNkeySeed(options.nkeySeed) });
  if (given.length > 1) {
    const [first, ...others] = given.map((c) => OPTION_OF[c.kind]);
    throw invalidOption(
      {
        component: COMPONENT,
        option: first!,
        value: 'set',
        expected: `it is set beside ${others.join(', ')}; ${EXCLUSIVE}`,
        related: others,
      },
      `several credentials are set (${given.map((c) => c.kind).join(', ')}); ${EXCLUSIVE}`,
    );
  }
  // Options win over the URL, as for every other adapter: a secret store can override a URL.
  return given[0] ?? fromUrl;
}

function checkCredsContent(content: string): string {
  if (!content.includes('NATS USER JWT') || !content.includes('USER NKEY SEED')) {
    const expected =
      'the content of a .creds file (it must hold a NATS USER JWT and a USER NKEY SEED block, as ' +
      '`nsc generate creds` writes); to pass a path, use credsFile';
    throw invalidOption(
      { component: COMPONENT, option: 'creds', value: '***', expected: `use ${expected}` },
      `creds is not ${expected}`,
    );
  }
  return content;
}

function checkNkeySeed(seed: string): string {
  if (!/^SU[A-Z2-7]{50,}$/.test(seed.trim())) {
    const expected = "it starts with 'SU' (as `nk -gen user` prints it), and is not the public key (U…)";
    throw invalidOption(
      {
        component: COMPONENT,
        option: 'nkeySeed',
        value: '***',
        expected: `use an NKey user seed: ${expected}`,
      },
      `nkeySeed is not an NKey user seed; ${expected}`,
    );
  }
  return seed.trim();
}

/** The nats.js authenticator for the credentials; reads a creds file now, naming it if it fails. */
export async function authenticatorFor(credentials: NatsCredentials): Promise<Authenticator | undefined> {
  const encoder = new TextEncoder();
  switch (credentials.kind) {
    case 'none':
      return undefined;
    case 'userPass':
      return usernamePasswordAuthenticator(credentials.user, credentials.pass);
    case 'token':
      return tokenAuthenticator(credentials.token);
    case 'creds':
      return credsAuthenticator(encoder.encode(credentials.content));
    case 'nkey':
      return nkeyAuthenticator(encoder.encode(credentials.seed));
    case 'credsFile': {
      let content: string;
      try {
        content = await readFile(credentials.path, 'utf8');
      } catch (err) {
        const problem = `it cannot be read (${(err as Error).message})`;
        const fix = 'check the path and that the worker may read it';
        throw invalidOption(
          {
            component: COMPONENT,
            option: 'credsFile',
            value: credentials.path,
            expected: `${problem}; ${fix}`,
          },
          `credsFile ${credentials.path} cannot be read (${(err as Error).message}); ${fix}`,
          { cause: err },
        );
      }
      return credsAuthenticator(encoder.encode(checkCredsContent(content)));
    }
  }
}
