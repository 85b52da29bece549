/** Kubernetes `Status` error bodies, as the real API server sends them. */

export type StatusReason =
  | 'BadRequest'
  | 'Unauthorized'
  | 'Forbidden'
  | 'NotFound'
  | 'AlreadyExists'
  | 'Conflict'
  | 'Invalid'
  | 'Gone'
  | 'Expired'
  | 'MethodNotAllowed'
  | 'UnsupportedMediaType'
  | 'NotAcceptable'
  | 'TooManyRequests'
  | 'InternalError';

export interface StatusCause {
  reason?: string;
  message: string;
  field?: string;
}

export interface StatusBody {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, never>;
  status: 'Failure' | 'Success';
  message?: string;
  reason?: StatusReason;
  details?: { name?: string; group?: string; kind?: string; uid?: string; causes?: StatusCause[] };
  code: number;
}

export interface Target {
  group: string;
  /** Plural resource name (`pods`), as the real server puts in `details.kind`. */
  resource: string;
  name?: string;
}

export class ApiError extends Error {
  constructor(
    readonly code: number,
    readonly reason: StatusReason,
    message: string,
    readonly details?: StatusBody['details'],
  ) {
    super(message);
    this.name = 'ApiError';
  }

  toStatus(): StatusBody {
    const body: StatusBody = {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: this.message,
      reason: this.reason,
      code: this.code,
    };
    if (this.details) body.details = this.details;
    return body;
  }
}

/** `pods` or `ephemeralrunners.actions.github.com`, as messages qualify resources. */
function qualified(t: Target): string {
  return t.group ? `${t.resource}.${t.group}` : t.resource;
}

function details(t: Target, extra: Partial<NonNullable<StatusBody['details']>> = {}) {
  const d: NonNullable<StatusBody['details']> = { kind: t.resource, ...extra };
  if (t.name !== undefined) d.name = t.name;
  if (t.group) d.group = t.group;
  return d;
}

export const errors = {
  notFound: (t: Target) =>
    new ApiError(404, 'NotFound', `${qualified(t)} "${t.name ?? ''}" not found`, details(t)),
  alreadyExists: (t: Target) =>
    new ApiError(409, 'AlreadyExists', `${qualified(t)} "${t.name}" already exists`, details(t)),
  conflict: (
    t: Target,
    why = 'the object has been modified; please apply your changes to the latest version and try again',
  ) =>
    new ApiError(
      409,
      'Conflict',
      `Operation cannot be fulfilled on ${qualified(t)} "${t.name}": ${why}`,
      details(t),
    ),
  invalid: (t: Target, kind: string, causes: StatusCause[]) => {
    const what = t.group ? `${kind}.${t.group}` : kind;
    const list = causes.map((c) => (c.field ? `${c.field}: ${c.message}` : c.message));
    const message =
      list.length === 1
        ? `${what} "${t.name ?? ''}" is invalid: ${list[0]}`
        : `${what} "${t.name ?? ''}" is invalid: [${list.join(', ')}]`;
    return new ApiError(422, 'Invalid', message, { ...details(t), kind, causes });
  },
  badRequest: (message: string) => new ApiError(400, 'BadRequest', message),
  unauthorized: () => new ApiError(401, 'Unauthorized', 'Unauthorized'),
  methodNotAllowed: (verb: string, t: Target) =>
    new ApiError(
      405,
      'MethodNotAllowed',
      `the server does not allow this method on the requested resource`,
      {
        ...details(t),
        causes: [{ message: `${verb} is not supported` }],
      },
    ),
  unsupportedMediaType: (type: string) =>
    new ApiError(
      415,
      'UnsupportedMediaType',
      `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json (got ${type})`,
    ),
  gone: (message: string) => new ApiError(410, 'Expired', message),
  internal: (message: string) => new ApiError(500, 'InternalError', message),
  tooManyRequests: (message: string) => new ApiError(429, 'TooManyRequests', message),
};

export function successStatus(t: Target, uid?: string): StatusBody {
  const d = details(t);
  if (uid) d.uid = uid;
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Success',
    details: d,
    code: 200,
  };
}
