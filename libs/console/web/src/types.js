/**
 * Every run status, in the order the runs page shows them. A value the page needs at run time, so
 * not imported (that would bundle the client); the check below fails the typecheck when the
 * client gains or loses a status.
 */
export const RUN_STATUSES = [
    'pending',
    'running',
    'suspended',
    'paused',
    'completed',
    'failed',
    'cancelled',
];
export const EVERY_STATUS_LISTED = true;
//# sourceMappingURL=types.js.map