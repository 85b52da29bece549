import {
  Observable,
  PatchStrategy,
  setHeaderOptions,
  type ConfigurationOptions,
  type ObservableMiddleware,
} from './client-node.js';

type Options = ConfigurationOptions<ObservableMiddleware>;

/** Per-call client-node options that abort a request after `timeoutMs` (real time). */
export function timeoutOptions(timeoutMs: number): Options {
  return {
    middleware: [
      {
        pre: (ctx) => {
          ctx.setSignal(AbortSignal.timeout(timeoutMs));
          return new Observable(Promise.resolve(ctx));
        },
        post: (res) => new Observable(Promise.resolve(res)),
      },
    ],
    middlewareMergeStrategy: 'append',
  };
}

/** Options for a JSON patch (RFC 6902) call, with the timeout. */
export function jsonPatchOptions(timeoutMs: number): Options {
  return setHeaderOptions('Content-Type', PatchStrategy.JsonPatch, timeoutOptions(timeoutMs));
}
