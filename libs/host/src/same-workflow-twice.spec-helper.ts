/** A workflow module for config.spec.ts: one definition under three exports, accepted as one. */
import { same } from './duplicate-workflows.spec-helper.js';

export { same };
export const again = same;
export default [same];
