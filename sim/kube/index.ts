export {
  SimCluster,
  type SimClusterOptions,
  type AddNodeOptions,
  type AddScaleSetOptions,
} from './cluster.js';
export { Faults } from './faults.js';
export {
  InMemoryActionsService,
  SHUTDOWN_SIGNAL_MESSAGE,
  lostCommunicationMessage,
  type SimJob,
  type SimRunner,
} from './in-memory-actions-service.js';
export { ApiServer } from './api/api-server.js';
export { KubeApi } from './api/kube-api.js';
export type { AuditEntry, RequestLogEntry } from './api/audit.js';
export { ApiError } from './api/errors.js';
export type { BusDelivery, EventBridgeEvent, PutEventsEntry } from './export/event-bus.js';
export type { ArcVersion } from './arc/arc-version.js';
export { DEFAULT_TIMINGS, type Timings } from './models/model-context.js';
export * from './types.js';
export { DEFAULT_ACTOR_GROUPS } from './api/api-server.js';
export {
  RbacAuthorizer,
  forbiddenMessage,
  type Decision,
  type RequestAttributes,
  type UserInfo,
} from './api/rbac.js';
export {
  applyManifest,
  applyManifestFile,
  parseManifest,
  ManifestError,
  type LoadManifestOptions,
} from './manifest.js';
