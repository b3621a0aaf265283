/**
 * The conversation as the agent keeps it: AI SDK `ModelMessage`s (plain JSON, so a run's input,
 * an activity's input and a journaled result can all hold them), and what continue-as-new carries
 * into the next run.
 */
import type { JSONValue, ModelMessage, ToolResultPart } from 'ai';

/** What a tool call gave back, as the model reads it. */
export type ToolOutput =
  | { type: 'json'; value: JSONValue }
  | { type: 'error-text'; value: string }
  | { type: 'execution-denied'; reason?: string };

/** The tool message part answering `call`. */
export function toolResultPart(
  call: { toolCallId: string; toolName: string },
  output: ToolOutput,
): ToolResultPart {
  return { type: 'tool-result', toolCallId: call.toolCallId, toolName: call.toolName, output };
}

/** The summary keeps the latest lines only: a conversation of any length carries a bounded one. */
export const MAX_SUMMARY_LINES = 100;

/** At most `max` characters of `text`, with an ellipsis when cut. */
function cut(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** One line per thing a turn did: what the assistant said, each tool call and what it gave. */
function digest(turn: readonly ModelMessage[]): string[] {
  const lines: string[] = [];
  for (const message of turn) {
    if (typeof message.content === 'string') {
      lines.push(`${message.role}: ${cut(message.content, 200)}`);
      continue;
    }
    for (const part of message.content) {
      if (part.type === 'text') lines.push(`${message.role}: ${cut(part.text, 200)}`);
      else if (part.type === 'tool-call')
        lines.push(`called ${part.toolName}(${cut(JSON.stringify(part.input), 200)})`);
      else if (part.type === 'tool-result') {
        lines.push(`${part.toolName} gave ${cut(JSON.stringify(part.output), 200)}`);
      }
    }
  }
  return lines;
}

/**
 * What the next run takes over: the messages before the first assistant message (the user's
 * request), the last `keepTurns` turns whole (a turn is an assistant message and the tool results
 * answering it, so no tool call is ever carried without its result), and a summary of the turns
 * left out, added to `summary` (the earlier runs'), its latest {@link MAX_SUMMARY_LINES} lines. A real agent might ask the model for the
 * summary instead: as an activity, so that it too is journaled once.
 */
export function carryOver(
  messages: readonly ModelMessage[],
  keepTurns: number,
  summary: string | undefined,
): { messages: ModelMessage[]; summary?: string } {
  const first = messages.findIndex((m) => m.role === 'assistant');
  if (first < 0) return { messages: [...messages], ...(summary && { summary }) };
  const head = messages.slice(0, first);
  const turns: ModelMessage[][] = [];
  for (const message of messages.slice(first)) {
    if (message.role === 'assistant' || turns.length === 0) turns.push([message]);
    else turns.at(-1)!.push(message);
  }
  const kept = keepTurns > 0 ? turns.slice(-keepTurns) : [];
  const dropped = turns.slice(0, turns.length - kept.length);
  const lines = dropped.flatMap(digest);
  const all = [...(summary ? summary.split('\n') : []), ...lines].slice(-MAX_SUMMARY_LINES);
  return { messages: [...head, ...kept.flat()], ...(all.length > 0 && { summary: all.join('\n') }) };
}
