/**
 * Build v3 of the rollout scenario (rollout-scenario.ts): version 1 removed (deployed once the
 * fleet reported it drained), version 2 unchanged.
 */
export { rolloutOrderV2 } from './rollout-workflows-v2.js';
