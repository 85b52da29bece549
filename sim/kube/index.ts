export { SimCluster, type SimClusterOptions, type AddScaleSetOptions } from './cluster.js';
export { SHUTDOWN_SIGNAL_MESSAGE } from './in-memory-actions-service.js';
export type { BusDelivery, EventBridgeEvent } from './export/event-bus.js';
export * from './types.js';
export { ManifestError } from './manifest.js';
