/*
 * The parts of @kubernetes/client-node the adapters use, imported from the modules that define
 * them. The package root (dist/index.js) also loads watch, exec, attach, cp, port-forward, logs,
 * metrics and informers, with ws and tar-fs, and the package declares no `sideEffects`, so a
 * bundle keeps every module the root imports. These are the root's own classes (the same files),
 * so a KubeConfig made from the root works here; test/unit/adapters/client-node.test.ts holds them
 * to the root's exports.
 */
export { KubeConfig } from '@kubernetes/client-node/dist/config.js';
export type { ConfigurationOptions } from '@kubernetes/client-node/dist/gen/configuration.js';
export type { Middleware as ObservableMiddleware } from '@kubernetes/client-node/dist/gen/middleware.js';
export type { RequestContext } from '@kubernetes/client-node/dist/gen/http/http.js';
export {
  ObjectCoreV1Api as CoreV1Api,
  ObjectCustomObjectsApi as CustomObjectsApi,
} from '@kubernetes/client-node/dist/gen/types/ObjectParamAPI.js';
export { ApiException } from '@kubernetes/client-node/dist/gen/apis/exception.js';
export { Observable } from '@kubernetes/client-node/dist/gen/rxjsStub.js';
export { setHeaderOptions } from '@kubernetes/client-node/dist/middleware.js';
export { PatchStrategy } from '@kubernetes/client-node/dist/patch.js';
