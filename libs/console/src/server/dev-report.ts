/**
 * What `baton dev` tells the page about its last reload (`GET /api/dev`): which workflows run, and
 * the runs in flight the change would break, each with where code and journal part.
 */
export interface DevReport {
  /** The workflows the workers run now, as `name@version`. */
  workflows: string[];
  /** When the workers last started on new code (ms since the epoch); none before the first reload. */
  reloadedAt?: number;
  /** The runs the last reload's check found the new code would break. */
  broken: { runId: string; workflow: string; detail: string }[];
  /** Why the last change was not loaded (the workers kept their code); none when it was. */
  notLoaded?: string;
}
