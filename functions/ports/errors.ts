/**
 * What went wrong, in the terms a caller acts on:
 * - `unavailable`: the other side did not answer usefully (timeout, 5xx, throttled); try later;
 * - `refused`: the other side answered no (403, 404, 409, 422); trying again will not help;
 * - `bad-response`: the other side answered with something we cannot read;
 * - `config`: runner-medic is set up wrongly; an operator must fix it;
 * - `bug`: a broken assumption in runner-medic itself.
 */
export type ErrorKind = 'unavailable' | 'refused' | 'bad-response' | 'config' | 'bug';

/** The one error base of runner-medic: every error it throws says its kind and keeps its cause. */
export class RunnerMedicError extends Error {
  readonly kind: ErrorKind;

  constructor(kind: ErrorKind, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.kind = kind;
    this.name = new.target.name;
  }
}
