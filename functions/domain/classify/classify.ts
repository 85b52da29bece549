/** classify: events and objects → loss causes and node warnings, each with its deciding signal. */
export { classifyEvent, type EventClassification } from './classify-event.js';
export { classifyEc2Event, classifyNode } from './classify-node.js';
export { classifyEphemeralRunner, classifyMissingPod, classifyPod } from './classify-pod.js';
export { attributeEviction } from './attribute-eviction.js';
export { classifyOfflineRunner, classifyRecreatedPod } from './classify-recreated-pod.js';
export { classifyFinishedRunner } from './classify-finished-runner.js';
