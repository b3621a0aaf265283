/**
 * `npm run agent`: starts a conversation with the support agent (support-agent.ts) and prints the
 * model's tokens as they stream, each tool call, and the approval the refund waits for, which it
 * asks you for (or `--approve` / `--deny` answer it).
 *
 * By default everything runs in this process on the in-memory bus and store. With
 * BATON_TRANSPORT_URL and BATON_STORE_URL set it runs on those servers instead and leaves the work
 * to the worker processes you started there (README.md beside this file).
 *
 *   npm run agent -- [--order A-1001] [--approve | --deny] [--delay-ms 30]
 */
import { createInterface } from 'node:readline/promises';
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from '@baton/client';
import type { Store, Transport } from '@baton/core/adapter';
import { memoryStore, memoryTransport } from '@baton/core/memory';
import { loadAdapterCode, operatorAdapters, readOperatorConfig } from '@baton/host';
import { Worker } from '@baton/worker';
import type { AgentEvent, AgentInput } from './agent.js';
import { followChain } from './follow.js';
import { memorySystems, supportAgent } from './support-agent.js';

const USAGE = 'usage: npm run agent -- [--order A-1001] [--approve | --deny] [--delay-ms 30]';

/** Asks the person at the terminal, or answers as the flags say. */
async function decide(question: string, flags: { approve?: boolean; deny?: boolean }): Promise<boolean> {
  if (flags.approve || flags.deny) {
    console.log(`${question} ${flags.approve ? 'yes' : 'no'} (from the command line)`);
    return flags.approve === true;
  }
  const rl = createInterface({ input: process.stdin, output: process.stdout });
  try {
    return /^y(es)?$/i.test((await rl.question(`${question} [y/N] `)).trim());
  } finally {
    rl.close();
  }
}

function show(value: unknown): string {
  const text = JSON.stringify(value);
  return text.length > 160 ? `${text.slice(0, 159)}…` : text;
}

async function main(): Promise<number> {
  const { values: flags } = parseArgs({
    options: {
      order: { type: 'string', default: 'A-1001' },
      approve: { type: 'boolean' },
      deny: { type: 'boolean' },
      'delay-ms': { type: 'string', default: '30' },
      help: { type: 'boolean' },
    },
  });
  if (flags.help) {
    console.log(USAGE);
    return 0;
  }
  const agent = supportAgent(memorySystems(), { tokenDelayMs: Number(flags['delay-ms']) });
  const external = process.env.BATON_TRANSPORT_URL !== undefined;
  let adapters: { transport: Transport; store: Store };
  let worker: Worker | undefined;
  if (external) {
    const config = readOperatorConfig(process.env);
    await loadAdapterCode(config);
    adapters = operatorAdapters(config);
  } else {
    const transport = memoryTransport();
    const store = memoryStore();
    adapters = { transport, store };
    worker = new Worker({ transport, store, workflows: [agent.workflow] });
    await worker.start();
  }
  const client = new Client({ transport: adapters.transport, store: adapters.store });
  try {
    const request = `Order ${flags.order} arrived broken. Please refund it and let me know by email.`;
    const input: AgentInput = { messages: [{ role: 'user', content: request }] };
    const run = await client.start(agent.workflow, input);
    console.log(`run ${run.runId}${external ? ' (on the worker fleet)' : ''}\nyou   › ${request}`);

    let lineOpen = false;
    const newLine = (): void => {
      if (lineOpen) process.stdout.write('\n');
      lineOpen = false;
    };
    // The two streams are read side by side; an event waits until the tokens reader is on its
    // run, so a continued conversation prints in order.
    let tokensAt = run.runId;
    const tokens = (async () => {
      let step: string | undefined;
      for await (const { runId, item } of followChain<string>(client, run.runId, 'tokens')) {
        tokensAt = runId;
        if (item.kind === 'reset') {
          // The step's earlier attempt was cut off; its text comes again whole.
          newLine();
          console.log(`      (the model's answer was cut off; it starts again)`);
        }
        if (item.kind !== 'chunk') continue;
        const at = `${runId}#${item.step}`;
        if (at !== step) {
          newLine();
          step = at;
        }
        process.stdout.write(lineOpen ? item.value : `agent › ${item.value.trimStart()}`);
        lineOpen = true;
      }
      newLine();
    })();
    const events = (async () => {
      for await (const { runId, item } of followChain<AgentEvent>(client, run.runId, 'events')) {
        if (item.kind !== 'chunk') continue;
        while (tokensAt !== runId) await sleep(10);
        const event = item.value;
        if (event.type === 'tool-call') {
          newLine();
          console.log(`      ⚙ ${event.tool} ${show(event.input)}`);
        } else if (event.type === 'approval-needed') {
          newLine();
          const approved = await decide(
            `      ? ${event.tool} ${show(event.input)} needs approval. Approve?`,
            flags,
          );
          await client.promises.resolve(event.token, { approved, by: 'you at the terminal' });
        } else if (event.type === 'tool-result') {
          newLine();
          console.log(
            `      ${event.output.type === 'json' ? '✓' : '✗'} ${event.tool}: ${show(event.output)}`,
          );
        } else if (event.type === 'continued') {
          newLine();
          console.log(
            `      ↻ run ${runId} continued as new after turn ${event.turn} (its history ends here)`,
          );
        }
      }
    })();
    const result = await run.result({ timeoutMs: 10 * 60_000 });
    await Promise.all([tokens, events]);
    console.log(
      `done  › ${result.stopped === 'answer' ? 'answered' : 'stopped'} after ${result.turns} turns`,
    );
    return 0;
  } finally {
    await worker?.stop();
    await client.close(); // and the transport and the store with it
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
