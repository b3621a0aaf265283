/**
 * A small reader of Server-Sent Events for the specs (http-api-streams.spec.ts, apps/cli's
 * run-streams-readers.int.spec.ts): parses a fetch answer's body as it arrives, as the HTML
 * standard's event stream format says (fields `id`, `event`, `data`, `retry`; a line starting with
 * `:` is a comment; an empty line ends an event), without the auto-reconnection of EventSource.
 */

/** One event, or one comment line. */
export type SseMessage =
  | { type: 'event'; id?: string; event: string; data: string }
  | { type: 'comment'; text: string }
  | { type: 'retry'; ms: number };

/** The messages of `body` as they arrive; ends when the body does. */
export async function* sseMessages(body: ReadableStream<Uint8Array>): AsyncGenerator<SseMessage> {
  const decoder = new TextDecoder();
  let buffer = '';
  let fields: { id?: string; event?: string; data: string[] } = { data: [] };
  for await (const bytes of body) {
    buffer += decoder.decode(bytes, { stream: true });
    for (let at = buffer.search(/\r\n|\r|\n/); at >= 0; at = buffer.search(/\r\n|\r|\n/)) {
      const line = buffer.slice(0, at);
      buffer = buffer.slice(at + (buffer.startsWith('\r\n', at) ? 2 : 1));
      if (line === '') {
        if (fields.data.length > 0 || fields.event !== undefined)
          yield {
            type: 'event',
            ...(fields.id !== undefined && { id: fields.id }),
            event: fields.event ?? 'message',
            data: fields.data.join('\n'),
          };
        fields = { data: [] };
        continue;
      }
      if (line.startsWith(':')) {
        yield { type: 'comment', text: line.slice(1).trim() };
        continue;
      }
      const colon = line.indexOf(':');
      const name = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (name === 'id') fields.id = value;
      else if (name === 'event') fields.event = value;
      else if (name === 'data') fields.data.push(value);
      else if (name === 'retry') yield { type: 'retry', ms: Number(value) };
    }
  }
}

/** The events of `body` (comments and retry left out), each with its data parsed as JSON. */
export async function* sseEvents(
  body: ReadableStream<Uint8Array>,
): AsyncGenerator<{ id?: string; event: string; data: unknown }> {
  for await (const message of sseMessages(body)) {
    if (message.type !== 'event') continue;
    yield {
      ...(message.id !== undefined && { id: message.id }),
      event: message.event,
      data: JSON.parse(message.data) as unknown,
    };
  }
}
