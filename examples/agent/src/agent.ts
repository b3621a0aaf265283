/**
 * An agent loop as a Baton workflow, on the Vercel AI SDK (docs/agents.md):
 *
 * - **the model call is an activity** (`<name>.model`): its input is the conversation so far, it
 *   streams the model's text to the run stream `tokens` as it arrives, and returns the whole
 *   assistant message (text and tool calls), which Baton journals as the activity's result;
 * - **each tool call is an activity** (`<name>.tool.<tool>`), handed its idempotency key to pass
 *   to the system it changes; a tool may ask for **a person's approval** first: the workflow makes
 *   a durable promise, writes its token to the run stream `events`, and waits (suspended, no worker
 *   held) until someone resolves it;
 * - **the conversation is the workflow's own state**, a plain array rebuilt on every resume from
 *   the journaled results, so a resume never calls the model again for a turn already journaled,
 *   and never runs a journaled tool call again;
 * - **the history stays bounded**: after `turnsPerRun` turns, or sooner when
 *   `ctx.historyInfo().suggested` says the journal is getting long, the run continues as new with
 *   the conversation (its latest turns whole, the earlier ones as a summary).
 */
import {
  ActivityFailedError,
  defineActivity,
  defineWorkflow,
  PromiseRejectedError,
  PromiseTimeoutError,
  type ActivityDefinition,
  type ActivityIO,
  type ContinueAsNew,
  type Duration,
  type WorkflowContext,
  type WorkflowDefinition,
} from '@baton/core';
import {
  streamText,
  tool,
  type FlexibleSchema,
  type LanguageModel,
  type ModelMessage,
  type ToolSet,
} from 'ai';
import { z } from 'zod';
import { carryOver, toolResultPart, type ToolOutput } from './conversation.js';

/** A tool the agent may call: what the model is told about it, and the activity that does it. */
export interface AgentTool<I = never, O = unknown> {
  description: string;
  /** The tool's input, as the model must give it (a zod schema, or any schema the AI SDK takes). */
  inputSchema: FlexibleSchema<I>;
  /** Whether a person must approve a call before it runs: always, never (the default), or per input. */
  needsApproval?: boolean | ((input: I) => boolean);
  /**
   * Does the work. `io.idempotencyKey` is the same on every attempt and after any crash: hand it
   * to the system the tool changes, so that a repeat is recognised there.
   */
  run(input: I, io: ActivityIO): Promise<O> | O;
  /**
   * For a tool whose worker died mid-call: asks the system whether the call with this key took
   * effect (its result), or not (undefined: it runs again, with the same key). Setting it also
   * journals each call's start, so a resume can tell "never started" from "in doubt".
   */
  reconcile?(input: I, io: ActivityIO): Promise<O | undefined> | O | undefined;
}

/** Any tool, for a record of tools of different inputs. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyAgentTool = AgentTool<any, unknown>;

export interface AgentOptions {
  /** The workflow's name; its activities are `<name>.model` and `<name>.tool.<tool>`. */
  name: string;
  /** @defaultValue 1 */
  version?: number;
  /** The model, made in the worker for each call (a provider's model, or a mock in tests). */
  model: () => LanguageModel;
  /** The system prompt. */
  instructions: string;
  tools: Record<string, AnyAgentTool>;
  /** Turns one run takes before it continues as new. @defaultValue 20 */
  turnsPerRun?: number;
  /** Turns over the whole conversation (every run of the chain) before the agent gives up. @defaultValue 100 */
  maxTurns?: number;
  /** Turns carried whole into the next run; earlier ones go as a summary. @defaultValue 10 */
  carryTurns?: number;
  /** How long an approval is waited for; then the call counts as denied. @defaultValue '1d' */
  approvalTimeout?: Duration;
  /** One attempt of a model call. @defaultValue 120_000 */
  modelTimeoutMs?: number;
}

/** A run's input: the conversation so far. A new conversation is the user's request alone. */
export interface AgentInput {
  messages: ModelMessage[];
  /** Turns the runs before this one took (continue-as-new carries it). */
  turns?: number;
  /** What the turns the carried conversation leaves out did (continue-as-new carries it). */
  summary?: string;
}

export interface AgentResult {
  /** The model's last text: its answer, or what it said when the agent stopped. */
  text: string;
  turns: number;
  stopped: 'answer' | 'max-turns';
}

/** The model activity's input: what `streamText` is called with. */
export interface ModelTurnInput {
  messages: ModelMessage[];
  summary?: string;
}

/** The model activity's result, journaled: the assistant message of one turn. */
export interface ModelReply {
  text: string;
  toolCalls: { toolCallId: string; toolName: string; input: unknown; invalid?: string }[];
  finishReason: string;
}

/** What a person answers to an approval request (the durable promise's value). */
export const approvalSchema = z.object({
  approved: z.boolean(),
  by: z.string().optional(),
  reason: z.string().optional(),
});
export type Approval = z.infer<typeof approvalSchema>;

/** The items of the run stream `events`, written by the workflow (once each, whatever replays). */
export type AgentEvent =
  | { type: 'tool-call'; turn: number; toolCallId: string; tool: string; input: unknown }
  | {
      type: 'approval-needed';
      turn: number;
      toolCallId: string;
      tool: string;
      input: unknown;
      /** Resolve it with an {@link Approval}: `client.promises.resolve(token, { approved: true })`. */
      token: string;
    }
  | ({ type: 'approval'; turn: number; toolCallId: string; tool: string } & Approval)
  | { type: 'tool-result'; turn: number; toolCallId: string; tool: string; output: ToolOutput }
  | { type: 'answer'; turn: number; text: string }
  | { type: 'continued'; turn: number };

export interface Agent {
  /** Its result is the last run's {@link AgentResult} (a client's `result()` follows the chain). */
  workflow: WorkflowDefinition<AgentInput, AgentResult | ContinueAsNew<AgentInput>>;
  /** The model activity (for tests and for reading journals: its name). */
  model: ActivityDefinition<ModelTurnInput, ModelReply>;
  /** One activity per tool, by tool name. */
  tools: Record<string, ActivityDefinition<unknown, unknown>>;
}

/** The text of an error, for the model to read. */
function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * Writes every text delta of `result` to `tokens` without waiting for each to be durable (writes
 * made while one is on its way go to the bus together), and waits for all of them at the end.
 */
async function streamTokens(
  deltas: AsyncIterable<string>,
  tokens: { write(value: string): Promise<void> },
): Promise<void> {
  let written: Promise<unknown> = Promise.resolve();
  for await (const delta of deltas) {
    written = Promise.all([written, tokens.write(delta)]);
    // Handled here so an early failure is not an unhandled rejection; awaited below.
    written.catch(() => undefined);
  }
  await written;
}

/** Defines the agent: its workflow, its model activity, one activity per tool. */
export function defineAgent(options: AgentOptions): Agent {
  const { name } = options;
  const turnsPerRun = options.turnsPerRun ?? 20;
  const maxTurns = options.maxTurns ?? 100;
  const carryTurns = options.carryTurns ?? 10;
  const approvalTimeout = options.approvalTimeout ?? '1d';

  // What the model is told about the tools: their descriptions and input schemas, no `execute`
  // (the workflow runs them, each as an activity of its own).
  const toolSet: ToolSet = Object.fromEntries(
    Object.entries(options.tools).map(([toolName, spec]) => [
      toolName,
      tool({ description: spec.description, inputSchema: spec.inputSchema }),
    ]),
  );

  const model = defineActivity({
    name: `${name}.model`,
    // Baton retries a failed call (the AI SDK's own retries are off): each new attempt's first
    // token puts a `reset` item in `tokens`, so a reader drops what the failed attempt streamed.
    retry: { maxAttempts: 4, initialDelayMs: 1_000, maxDelayMs: 30_000 },
    timeoutMs: options.modelTimeoutMs ?? 120_000,
    run: async (input: ModelTurnInput, io): Promise<ModelReply> => {
      const result = streamText({
        model: options.model(),
        instructions: input.summary
          ? `${options.instructions}\n\nEarlier in this conversation: ${input.summary}`
          : options.instructions,
        messages: input.messages,
        tools: toolSet,
        abortSignal: io.signal,
        maxRetries: 0,
        // The same key on every attempt and after any crash: a provider that takes one (or a
        // gateway that logs it) sees one logical call.
        headers: { 'Idempotency-Key': io.idempotencyKey },
      });
      await streamTokens(result.textStream, io.stream<string>('tokens'));
      const [text, toolCalls, finishReason] = await Promise.all([
        result.text,
        result.toolCalls,
        result.finishReason,
      ]);
      return {
        text,
        toolCalls: toolCalls.map((call) => ({
          toolCallId: call.toolCallId,
          toolName: call.toolName,
          input: call.input,
          ...(call.invalid === true && { invalid: messageOf(call.error) }),
        })),
        finishReason,
      };
    },
  });

  const tools: Record<string, ActivityDefinition<unknown, unknown>> = Object.fromEntries(
    Object.entries(options.tools).map(([toolName, spec]) => [
      toolName,
      defineActivity<unknown, unknown>({
        name: `${name}.tool.${toolName}`,
        run: (input, io) => spec.run(input as never, io),
        ...(spec.reconcile && { reconcile: (input, io) => spec.reconcile!(input as never, io) }),
      }),
    ]),
  );

  /** Asks a person, through a durable promise whose token goes out on `events`; waits for the answer. */
  async function approval(
    ctx: WorkflowContext,
    events: { write(event: AgentEvent): void },
    turn: number,
    call: ModelReply['toolCalls'][number],
  ): Promise<Approval> {
    const promise = ctx.promise<Approval>({ timeout: approvalTimeout, schema: approvalSchema });
    const about = { turn, toolCallId: call.toolCallId, tool: call.toolName };
    events.write({ type: 'approval-needed', ...about, input: call.input, token: promise.token });
    let answer: Approval;
    try {
      answer = await promise.value;
    } catch (err) {
      if (err instanceof PromiseTimeoutError) answer = { approved: false, reason: 'nobody answered in time' };
      else if (err instanceof PromiseRejectedError) answer = { approved: false, reason: err.message };
      else throw err;
    }
    events.write({ type: 'approval', ...about, ...answer });
    return answer;
  }

  /** One tool call: approved first if it must be, then its activity; what the model is told back. */
  async function callTool(
    ctx: WorkflowContext,
    events: { write(event: AgentEvent): void },
    turn: number,
    call: ModelReply['toolCalls'][number],
  ): Promise<ToolOutput> {
    const spec = options.tools[call.toolName];
    const activity = tools[call.toolName];
    if (spec === undefined || activity === undefined) {
      return { type: 'error-text', value: `there is no tool named ${call.toolName}` };
    }
    if (call.invalid !== undefined) return { type: 'error-text', value: call.invalid };
    events.write({
      type: 'tool-call',
      turn,
      toolCallId: call.toolCallId,
      tool: call.toolName,
      input: call.input,
    });
    const ask =
      typeof spec.needsApproval === 'function' ? spec.needsApproval(call.input as never) : spec.needsApproval;
    if (ask === true) {
      const answer = await approval(ctx, events, turn, call);
      if (!answer.approved) {
        const who = answer.by ? ` by ${answer.by}` : '';
        return {
          type: 'execution-denied',
          reason: `denied${who}${answer.reason ? `: ${answer.reason}` : ''}`,
        };
      }
    }
    try {
      return { type: 'json', value: ((await ctx.run(activity, call.input)) ?? null) as never };
    } catch (err) {
      // The tool failed for good (after its retries): the model hears why and decides what to do.
      // Anything else (a cancel, a lost lease) ends the turn as it would any workflow code.
      if (!(err instanceof ActivityFailedError)) throw err;
      return { type: 'error-text', value: messageOf(err.cause ?? err) };
    }
  }

  const workflow = defineWorkflow({
    name,
    version: options.version ?? 1,
    run: async (ctx, input: AgentInput): Promise<AgentResult | ContinueAsNew<AgentInput>> => {
      const events = ctx.stream<AgentEvent>('events');
      let messages = input.messages;
      const before = input.turns ?? 0;
      for (let turn = before + 1; ; turn++) {
        // The journaled result on a resume; a live call (streaming to `tokens`) otherwise.
        const reply = await ctx.run(model, { messages, ...(input.summary && { summary: input.summary }) });
        messages = [
          ...messages,
          {
            role: 'assistant',
            content: [
              ...(reply.text ? [{ type: 'text' as const, text: reply.text }] : []),
              ...reply.toolCalls.map((call) => ({
                type: 'tool-call' as const,
                toolCallId: call.toolCallId,
                toolName: call.toolName,
                input: call.input,
              })),
            ],
          },
        ];
        if (reply.toolCalls.length === 0 || turn >= maxTurns) {
          events.write({ type: 'answer', turn, text: reply.text });
          events.close();
          ctx.stream('tokens').close();
          return {
            text: reply.text,
            turns: turn,
            stopped: reply.toolCalls.length === 0 ? 'answer' : 'max-turns',
          };
        }
        // One after another, in the model's order: an approval holds the calls after it.
        const results = [];
        for (const call of reply.toolCalls) {
          const output = await callTool(ctx, events, turn, call);
          events.write({
            type: 'tool-result',
            turn,
            toolCallId: call.toolCallId,
            tool: call.toolName,
            output,
          });
          results.push(toolResultPart(call, output));
        }
        messages = [...messages, { role: 'tool', content: results }];
        if (turn - before >= turnsPerRun || ctx.historyInfo().suggested) {
          // Each run of the chain has its own streams: this one's end here (follow.ts reads on).
          events.write({ type: 'continued', turn });
          events.close();
          ctx.stream('tokens').close();
          return ctx.continueAsNew<AgentInput>({
            turns: turn,
            ...carryOver(messages, carryTurns, input.summary),
          });
        }
      }
    },
  });

  return { workflow, model, tools };
}
