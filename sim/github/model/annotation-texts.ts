import type { Annotation } from './types.js';

/** The server's text when a runner stops renewing its job lock (reference/github.md §3). */
export function lostCommunication(runnerName: string): string {
  return `The self-hosted runner: ${runnerName} lost communication with the server. Verify the machine is running and has a healthy network connection. Anything in your workflow that terminates the runner process, starves it for CPU/Memory, or blocks its network access can cause this error.`;
}

export const SHUTDOWN_SIGNAL =
  'The runner has received a shutdown signal. This can happen when the runner service is stopped, or a manually started runner is canceled.';
export const OPERATION_CANCELED = 'The operation was canceled.';
export const EXIT_CODE_1 = 'Process completed with exit code 1.';

export function failureAnnotation(message: string, title = ''): Annotation {
  return {
    path: '.github',
    startLine: 1,
    endLine: 1,
    level: 'failure',
    title,
    message,
    rawDetails: '',
  };
}
