/**
 * The webhooks an HTTP API serves (`defineWebhook` definitions from the modules given to the
 * server), by name: what `POST /v1/webhooks/{name}` looks a delivery's webhook up in
 * (webhook-routes.ts).
 */
import type { WebhookDefinition } from '@baton/client/webhooks';
import { API_CODES, ApiError } from './api-errors.js';

/** The webhooks a server serves, by name; replaced whole on `baton dev`'s reload. */
export class WebhookCatalog {
  private byName = new Map<string, WebhookDefinition>();

  constructor(definitions: readonly WebhookDefinition[] = []) {
    this.replace(definitions);
  }

  /** Serves `definitions` from now on (their names were checked by defineWebhook). */
  replace(definitions: readonly WebhookDefinition[]): void {
    this.byName = new Map(definitions.map((d) => [d.name, d]));
  }

  get names(): string[] {
    return [...this.byName.keys()].sort();
  }

  get(name: string): WebhookDefinition {
    const found = this.byName.get(name);
    if (found !== undefined) return found;
    const served = this.names;
    throw new ApiError(
      API_CODES.noWebhook,
      `no webhook named '${name}' is served here` +
        (served.length > 0
          ? ` (served: ${served.join(', ')})`
          : '; declare one with defineWebhook in a module given to --workflows'),
    );
  }
}
