/** classify: events and objects → loss causes and node warnings, each with its deciding signal. */
export { classifyEvent } from './classify-event.js';
export { classifyEc2Event, classifyNode } from './classify-node.js';
export { classifyEphemeralRunner, classifyPod } from './classify-pod.js';
export { attributeEviction } from './attribute-eviction.js';
