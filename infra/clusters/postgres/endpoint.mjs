#!/usr/bin/env node
/**
 * The cluster's stable endpoint: a TCP proxy (no dependencies) that routes every new client
 * connection to the current primary, as a cloud endpoint or a proxy in front of Patroni does.
 * node-postgres takes one host, so clients need one address that follows failovers.
 *
 * Invariants:
 *   1. A new connection goes to the node named in the primary file (written by node.sh promote),
 *      read again for every new connection and polled every 100 ms; with no primary named, or the primary not answering, the
 *      client's connection is closed at once (the client sees a connection error and retries).
 *   2. When the primary file names another node, every open connection to the old one is
 *      dropped: a client must never keep writing to a node that stopped being the primary.
 *   3. Bytes are forwarded unchanged both ways (TLS, if the client asks for it, goes through).
 *
 * Usage: node endpoint.mjs --port 15440 --primary-file <file> --node 1=127.0.0.1:15432 --node 2=…
 */
import { readFileSync, watchFile } from 'node:fs';
import net from 'node:net';

function parseArgs(argv) {
  const args = { port: 0, primaryFile: '', nodes: new Map() };
  for (let i = 0; i < argv.length; i += 2) {
    const [flag, value] = [argv[i], argv[i + 1]];
    if (value === undefined) throw new Error(`${flag} needs a value`);
    if (flag === '--port') args.port = Number(value);
    else if (flag === '--primary-file') args.primaryFile = value;
    else if (flag === '--node') {
      const match = /^(\w+)=([^:]+):(\d+)$/.exec(value);
      if (!match) throw new Error(`--node must be <name>=<host>:<port>, got '${value}'`);
      args.nodes.set(match[1], { host: match[2], port: Number(match[3]) });
    } else throw new Error(`unknown argument '${flag}'`);
  }
  if (!Number.isInteger(args.port) || args.port < 1) throw new Error('--port must be a port number');
  if (args.primaryFile === '') throw new Error('--primary-file is required');
  if (args.nodes.size === 0) throw new Error('at least one --node is required');
  return args;
}

const log = (msg) => console.log(`${new Date().toISOString()} [endpoint] ${msg}`);

let args;
try {
  args = parseArgs(process.argv.slice(2));
} catch (err) {
  console.error(`[endpoint] error: ${err.message}`);
  process.exit(2);
}

/** The node name in the primary file, or undefined when it is absent or names no known node. */
function readPrimary() {
  let name;
  try {
    name = readFileSync(args.primaryFile, 'utf8').trim();
  } catch {
    return undefined;
  }
  return args.nodes.has(name) ? name : undefined;
}

let primary = readPrimary();
/** Open client sockets, by the node they are forwarded to. */
const open = new Map([...args.nodes.keys()].map((name) => [name, new Set()]));

function follow() {
  const next = readPrimary();
  if (next === primary) return;
  log(`primary is now ${next ?? '(none)'} (was ${primary ?? '(none)'})`);
  const previous = primary;
  primary = next;
  if (previous === undefined) return;
  const stale = open.get(previous);
  if (stale.size > 0) log(`dropping ${stale.size} connections to ${previous}`);
  for (const client of stale) client.destroy();
  stale.clear();
}
// A rename replaces the file; watchFile polls its stat, which sees that too.
watchFile(args.primaryFile, { interval: 100 }, follow);

const server = net.createServer((client) => {
  // Read again here, not only on the poll: a connection right after a promote must not reach
  // the old primary in the up to 100 ms before the poll sees the change.
  follow();
  const name = primary;
  if (name === undefined) {
    client.destroy();
    return;
  }
  const target = args.nodes.get(name);
  const upstream = net.connect(target.port, target.host);
  const sockets = open.get(name);
  sockets.add(client);
  client.setNoDelay(true);
  upstream.setNoDelay(true);
  const close = () => {
    sockets.delete(client);
    client.destroy();
    upstream.destroy();
  };
  client.on('error', close).on('close', close);
  upstream.on('error', close).on('close', close);
  client.pipe(upstream);
  upstream.pipe(client);
});
server.on('error', (err) => {
  console.error(`[endpoint] error: cannot listen on ${args.port}: ${err.message}`);
  process.exit(1);
});
server.listen(args.port, '127.0.0.1', () =>
  log(`listening on 127.0.0.1:${args.port}, primary ${primary ?? '(none)'}`),
);
for (const signal of ['SIGTERM', 'SIGINT']) {
  process.on(signal, () => {
    server.close();
    for (const sockets of open.values()) for (const s of sockets) s.destroy();
    process.exit(0);
  });
}
