/**
 * A module of webhooks only, for load-workflows-source.spec.ts: two webhooks, both also exported
 * in an array (the same objects: two webhooks, not four). clashing-webhooks.spec-helper.ts has
 * two different webhooks of one name.
 */
import { defineWebhook, hmac } from '@baton/client/webhooks';

const verify = hmac({ secret: 'spec-loader-secret-01' });

export const stripe = defineWebhook({ name: 'stripe', verify, route: () => ({ ignore: 'spec' }) });
export const github = defineWebhook({ name: 'github', verify, route: () => ({ ignore: 'spec' }) });
export const both = [stripe, github];
