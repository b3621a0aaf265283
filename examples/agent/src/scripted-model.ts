/**
 * A language model that needs no network: the AI SDK's mock model (`MockLanguageModelV4` from
 * `ai/test`) playing a customer-support script, its text streamed token by token with
 * `simulateReadableStream`, so the agent runs offline (in CI, in the examples) exactly as it would
 * against a provider: `streamText` drives it, text deltas arrive over time, tool calls come at the
 * end of a step.
 *
 * The script reacts to the conversation's last message, as a model would, not to a turn counter,
 * so it answers the same way after a resume or after the agent carried a compacted conversation
 * into a new run:
 *
 * | the conversation ends with            | the model says                 | and calls        |
 * | ------------------------------------- | ------------------------------ | ---------------- |
 * | the user's request                    | it will look the order up      | `lookup_order`   |
 * | `lookup_order`'s result               | what it found, it will refund  | `refund_payment` |
 * | `refund_payment`'s result             | the refund's reference         | `send_email`     |
 * | `refund_payment` denied               | it could not refund, and why   | nothing: done    |
 * | a tool's error                        | what failed                    | nothing: done    |
 * | `send_email`'s result (or any other)  | a summary of what it did       | nothing: done    |
 *
 * `onCall` sees every call (its prompt and headers, the idempotency key among them): a test counts
 * model calls per key with it, as a provider would log them.
 */
import { randomUUID } from 'node:crypto';
import { simulateReadableStream } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';

/** What a call to the model carries (the prompt, the headers, the abort signal): the provider's view. */
export type ModelCall = Parameters<MockLanguageModelV4['doStream']>[0];
/** One part of a streamed reply, as a provider sends it. */
type StreamPart =
  Awaited<ReturnType<MockLanguageModelV4['doStream']>>['stream'] extends ReadableStream<infer P> ? P : never;

export interface ScriptedModelOptions {
  /** Milliseconds between two streamed tokens. @defaultValue 30 */
  tokenDelayMs?: number;
  /**
   * Called when a call starts; its promise is awaited before the stream begins. `done` is called
   * once the stream was read to its end (not when the caller stopped reading: a killed worker's).
   */
  onCall?: (call: ModelCall) => Promise<{ done(): Promise<void> } | void>;
}

/** One step of the script: text, then at most one tool call. */
interface Reply {
  text: string;
  call?: { toolName: string; input: Record<string, unknown> };
}

type PromptMessage = ModelCall['prompt'][number];

/** The last tool result of the prompt, if its last message is a tool message. */
function lastToolResult(
  prompt: readonly PromptMessage[],
): { toolName: string; output: { type: string; value?: unknown; reason?: string } } | undefined {
  const last = prompt.at(-1);
  if (last?.role !== 'tool') return undefined;
  const result = last.content.findLast((part) => part.type === 'tool-result');
  return result?.type === 'tool-result'
    ? { toolName: result.toolName, output: result.output as { type: string; value?: unknown } }
    : undefined;
}

/** The order number in the user's first message (A-1001 when none is named). */
function orderIdOf(prompt: readonly PromptMessage[]): string {
  for (const message of prompt) {
    if (message.role !== 'user') continue;
    for (const part of message.content) {
      const match = part.type === 'text' ? /\b[A-Z]-\d{3,}\b/.exec(part.text) : null;
      if (match) return match[0];
    }
  }
  return 'A-1001';
}

function money(cents: number): string {
  return (cents / 100).toFixed(2);
}

/** What the script says next, given the conversation so far. */
export function scriptedReply(prompt: readonly PromptMessage[]): Reply {
  const orderId = orderIdOf(prompt);
  const last = lastToolResult(prompt);
  if (last === undefined) {
    return {
      text: `Sorry to hear about order ${orderId}. Let me look it up first, so I can see what was ordered and how it was paid.`,
      call: { toolName: 'lookup_order', input: { orderId } },
    };
  }
  if (last.output.type === 'error-text') {
    return {
      text: `I could not finish that: ${last.toolName} failed (${String(last.output.value)}). A colleague will look into order ${orderId}.`,
    };
  }
  const value = (last.output.value ?? {}) as Record<string, unknown>;
  if (last.toolName === 'lookup_order' && last.output.type === 'json') {
    const cents = Number(value.totalCents ?? 0);
    return {
      text: `Order ${orderId} is ${String(value.items ?? 'an order')} for ${money(cents)}, paid by card on ${String(value.paidOn ?? 'file')}. I will refund the full amount to that card.`,
      call: { toolName: 'refund_payment', input: { orderId, cents } },
    };
  }
  if (last.toolName === 'refund_payment' && last.output.type === 'execution-denied') {
    return {
      text: `I could not refund order ${orderId}: the refund was not approved (${last.output.reason ?? 'no reason given'}). A colleague will get back to you about it.`,
    };
  }
  if (last.toolName === 'refund_payment' && last.output.type === 'json') {
    return {
      text: `The refund of ${money(Number(value.cents ?? 0))} went through, reference ${String(value.refundId)}. I will send the customer a confirmation by email.`,
      call: {
        toolName: 'send_email',
        input: {
          to: `customer-${orderId.toLowerCase()}@example.com`,
          subject: `Your refund for order ${orderId}`,
          body: `We refunded ${money(Number(value.cents ?? 0))} to your card (reference ${String(value.refundId)}).`,
        },
      },
    };
  }
  return {
    text: `All done: order ${orderId} was refunded in full and the customer has a confirmation by email. Is there anything else I can do?`,
  };
}

/** A reply as the stream parts a provider sends: text deltas word by word, then the tool call. */
export function replyParts(reply: Reply): StreamPart[] {
  const words = reply.text.split(/(?= )/);
  const parts: StreamPart[] = [
    { type: 'stream-start', warnings: [] },
    { type: 'text-start', id: 'text-1' },
    ...words.map((delta): StreamPart => ({ type: 'text-delta', id: 'text-1', delta })),
    { type: 'text-end', id: 'text-1' },
  ];
  if (reply.call) {
    parts.push({
      type: 'tool-call',
      toolCallId: `call_${randomUUID().slice(0, 8)}`,
      toolName: reply.call.toolName,
      input: JSON.stringify(reply.call.input),
    });
  }
  parts.push({
    type: 'finish',
    finishReason: { unified: reply.call ? 'tool-calls' : 'stop', raw: undefined },
    usage: {
      inputTokens: { total: 0, noCache: 0, cacheRead: undefined, cacheWrite: undefined },
      outputTokens: { total: words.length, text: words.length, reasoning: undefined },
    },
  });
  return parts;
}

/** The scripted model: a fresh `MockLanguageModelV4` whose every call plays the next step. */
export function scriptedModel(options: ScriptedModelOptions = {}): MockLanguageModelV4 {
  return new MockLanguageModelV4({
    provider: 'scripted',
    modelId: 'support-script',
    doStream: async (call) => {
      const watch = await options.onCall?.(call);
      const parts = replyParts(scriptedReply(call.prompt));
      const stream = simulateReadableStream({
        chunks: parts,
        initialDelayInMs: null,
        chunkDelayInMs: options.tokenDelayMs ?? 30,
      });
      if (!watch) return { stream };
      // Tells `watch` when the caller read the whole stream.
      const ended = new TransformStream<StreamPart, StreamPart>({
        flush: () => watch.done(),
      });
      return { stream: stream.pipeThrough(ended) };
    },
  });
}
