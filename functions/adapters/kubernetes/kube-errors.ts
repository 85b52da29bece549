import { ApiException } from './client-node.js';
import { ClusterUnavailableError } from '../../ports/cluster-gateway.js';
import { RunnerMedicError } from '../../ports/errors.js';

/** A Kubernetes call refused for a reason a retry will not fix (400, 401, 403, 422 …). */
export class ClusterRequestError extends RunnerMedicError {
  constructor(
    message: string,
    readonly code: number,
    options?: { cause?: unknown },
  ) {
    super('refused', message, options);
    this.name = 'ClusterRequestError';
  }
}

/** The API returned an object the domain parsers cannot read. */
export class KubeObjectParseError extends RunnerMedicError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('bad-response', message, options);
    this.name = 'KubeObjectParseError';
  }
}

/** HTTP status of a failed client-node call, or undefined for a network error or timeout. */
export function statusCodeOf(error: unknown): number | undefined {
  return error instanceof ApiException ? error.code : undefined;
}

/** Turns a client-node failure into the port's error types; `what` names the call. */
export function toClusterError(error: unknown, cluster: string, what: string): Error {
  const code = statusCodeOf(error);
  const where = `${what} on cluster ${cluster}`;
  if (code === undefined) {
    return new ClusterUnavailableError(`${where} failed: ${messageOf(error)}`, { cause: error });
  }
  if (code === 429 || code >= 500) {
    return new ClusterUnavailableError(`${where} failed with HTTP ${code}`, { cause: error });
  }
  return new ClusterRequestError(`${where} failed with HTTP ${code}`, code, { cause: error });
}

/** `fetch failed: self-signed certificate …`: undici hides the reason in `cause`. */
function messageOf(error: unknown): string {
  const parts: string[] = [];
  let e: unknown = error;
  for (let depth = 0; depth < 3 && e !== undefined && e !== null; depth++) {
    const message = typeof e === 'object' && 'message' in e ? String(e.message) : String(e);
    parts.push(message);
    e = typeof e === 'object' && 'cause' in e ? e.cause : undefined;
  }
  return parts.join(': ');
}
