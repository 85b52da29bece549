import type { Job, Run } from './types.js';

type WorkflowJobAction = 'queued' | 'waiting' | 'in_progress' | 'completed';
type WorkflowRunAction = 'requested' | 'in_progress' | 'completed';

/** A change GitHub announces with a webhook. `job` and `run` are live objects: copy what you keep. */
export type GitHubEvent =
  | { type: 'workflow_job'; action: WorkflowJobAction; at: number; job: Job; run: Run }
  | { type: 'workflow_run'; action: WorkflowRunAction; at: number; run: Run };

export type GitHubEventListener = (event: GitHubEvent) => void;

/** A synchronous fan-out: listeners see each change in the order it happened. */
export class EventHub {
  private readonly listeners = new Set<GitHubEventListener>();

  on(listener: GitHubEventListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  emit(event: GitHubEvent): void {
    for (const listener of [...this.listeners]) listener(event);
  }
}
