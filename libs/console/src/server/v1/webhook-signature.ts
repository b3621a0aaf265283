/**
 * The `Baton-Signature` of a signed POST (`BATON_API_WEBHOOK_SECRET`: any route, no token), as
 * @baton/client/webhooks defines it for both ends: the console's door re-exports these names, as
 * it did before the webhooks door existed.
 */
export {
  SIGNATURE_HEADER,
  SIGNATURE_TOLERANCE_MS,
  signWebhook,
  verifyWebhook,
  type SignatureCheck,
} from '@baton/client/webhooks';
