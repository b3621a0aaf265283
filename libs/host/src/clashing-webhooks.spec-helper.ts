/** Two different webhooks of one name, for load-workflows-source.spec.ts (refused). */
import { defineWebhook, hmac } from '@baton/client/webhooks';

const verify = hmac({ secret: 'spec-loader-secret-01' });

export const first = defineWebhook({ name: 'clash', verify, route: () => ({ ignore: 'first' }) });
export const second = defineWebhook({ name: 'clash', verify, route: () => ({ ignore: 'second' }) });
