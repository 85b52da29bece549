import type { KubeEvent } from '../model/cluster-facts.js';
import {
  karpenterReason,
  parseLowResource,
  parseNodeCondition,
  resourceKind,
} from '../parse/eviction-message.js';
import type { Loss, LossCause, NodeSignal, NodeWarningKind, RunnerWarning } from '../model/loss.js';
import { scaleSetOf } from '../correlate/runner-guard.js';
import { runnerLoss } from './runner-loss.js';

export type EventClassification =
  | { kind: 'loss'; loss: Loss }
  | { kind: 'node-signal'; signal: NodeSignal }
  | { kind: 'runner-warning'; warning: RunnerWarning }
  | { kind: 'ignored'; reason: string };

const component = (ev: KubeEvent): string =>
  (ev.sourceComponent ?? ev.reportingComponent ?? '').toLowerCase();

const KUBELET = ['kubelet'];
const KARPENTER = ['karpenter'];
/** The scheduler reports under its profile's name; `default-scheduler` unless renamed. */
const SCHEDULER = ['default-scheduler'];
/**
 * The NoExecute taint manager: `taint-eviction-controller` since Kubernetes 1.29
 * (pkg/controller/tainteviction), `taint-controller` before, inside the node lifecycle controller.
 */
const TAINT_MANAGER = ['taint-eviction-controller', 'taint-controller'];
/** NodeNotReady comes from the node lifecycle controller, and from the node's own kubelet. */
const NODE_CONTROLLER = ['node-controller', 'cloud-node-lifecycle-controller'];
const NTH = ['aws-node-termination-handler', 'node-termination-handler'];

/**
 * Which component emits each reason runner-medic acts on. An event naming another emitter is
 * a rumour (anyone who can create an Event can write any reason) and is ignored; the live
 * objects still get their say when the engine reads them.
 */
const POD_EMITTERS: Record<string, readonly string[]> = {
  Evicted: [...KUBELET, ...KARPENTER],
  Disrupted: KARPENTER,
  Preempted: SCHEDULER,
  Preempting: KUBELET,
  TaintManagerEviction: TAINT_MANAGER,
  OutOfmemory: KUBELET,
  OutOfcpu: KUBELET,
  OutOfpods: KUBELET,
  NodeAffinity: KUBELET,
  UnexpectedAdmissionError: KUBELET,
  NodeShutdown: KUBELET,
  SpotInterrupted: KARPENTER,
};

const NODE_EMITTERS: Record<string, readonly string[]> = {
  DisruptionTerminating: KARPENTER,
  SpotInterrupted: KARPENTER,
  TerminatingOnInterruption: KARPENTER,
  InstanceTerminating: KARPENTER,
  InstanceStopping: KARPENTER,
  NodeNotReady: [...NODE_CONTROLLER, ...KUBELET],
  RemovingNode: NODE_CONTROLLER,
  DeletingNode: NODE_CONTROLLER,
};

/**
 * Why the event's emitter may not send this reason, or null when it may. Both the legacy
 * `source.component` and `reportingComponent`/`reportingController` must name an allowed
 * emitter when present, and at least one must be present.
 */
function emitterProblem(ev: KubeEvent, allowed: readonly string[] | undefined): string | null {
  if (!allowed) return null;
  const named = [ev.sourceComponent, ev.reportingComponent]
    .filter((c): c is string => c !== null && c !== '')
    .map((c) => c.toLowerCase());
  if (named.length === 0) return `${ev.reason} names no emitting component`;
  const stranger = named.find((c) => !allowed.includes(c));
  return stranger === undefined
    ? null
    : `${ev.reason} from ${stranger} is not trusted; only ${allowed.join(', ')} emit it`;
}

function podCause(ev: KubeEvent): LossCause | null {
  const from = component(ev);
  const msg = ev.message;
  switch (ev.reason) {
    case 'Evicted': {
      if (from === 'karpenter')
        return {
          kind: 'api-eviction',
          by: 'karpenter',
          karpenterReason: karpenterReason(msg.replace(/^Evicted pod:\s*/, '')),
        };
      const low = parseLowResource(msg);
      if (low) {
        const offending = ev.annotations['offending_containers']?.split(',')[0] || null;
        const starved = ev.annotations['starved_resource'];
        return {
          kind: 'node-pressure-eviction',
          resource: starved ? resourceKind(starved) : low.resource,
          container: offending ?? low.container,
        };
      }
      const cond = parseNodeCondition(msg);
      if (cond)
        return { kind: 'admission-reject', resource: cond.resource, detail: cond.condition };
      return { kind: 'node-pressure-eviction', resource: 'other', container: null };
    }
    case 'Disrupted':
      return { kind: 'api-eviction', by: 'karpenter', karpenterReason: 'forceful' };
    case 'Preempted': // scheduler: "Preempted by pod … on node …"
    case 'Preempting': // kubelet: "Preempted in order to admit critical pod"
      return { kind: 'preemption' };

    case 'TaintManagerEviction':
      return msg.startsWith('Cancelling') ? null : { kind: 'taint-manager' };
    case 'OutOfmemory':
    case 'OutOfcpu':
    case 'OutOfpods':
    case 'NodeAffinity':
    case 'UnexpectedAdmissionError':
      return { kind: 'admission-reject', resource: null, detail: ev.reason };
    case 'NodeShutdown':
      return { kind: 'kubelet-shutdown' };
    default:
      return null;
  }
}

const POD_WARNINGS: Record<string, NodeWarningKind> = {
  SpotInterrupted: 'spot-interruption-warning',
};

const NODE_WARNINGS: Record<string, NodeWarningKind> = {
  DisruptionTerminating: 'karpenter-disruption',
  SpotInterrupted: 'spot-interruption-warning',
  TerminatingOnInterruption: 'instance-terminating',
  InstanceTerminating: 'instance-terminating',
  InstanceStopping: 'instance-terminating',
  NodeNotReady: 'node-not-ready',
  RemovingNode: 'node-gone',
  DeletingNode: 'node-gone',
};

const NTH_WARNINGS: Record<string, NodeWarningKind> = {
  SpotInterruption: 'spot-interruption-warning',
  SQSTermination: 'nth-drain',
  ScheduledEvent: 'nth-drain',
  ASGLifecycle: 'nth-drain',
  PreDrain: 'nth-drain',
  CordonAndDrain: 'nth-drain',
};

function nodeEvent(ev: KubeEvent): EventClassification {
  const fromNth = NTH.includes(component(ev));
  const kind = fromNth ? NTH_WARNINGS[ev.reason] : NODE_WARNINGS[ev.reason];
  if (!kind) return { kind: 'ignored', reason: `node event ${ev.reason} is not a disruption` };
  const problem = emitterProblem(ev, fromNth ? NTH : NODE_EMITTERS[ev.reason]);
  if (problem) return { kind: 'ignored', reason: problem };
  // Karpenter's text after "Disrupting Node: " changed across versions: match the prefix only.
  if (ev.reason === 'DisruptionTerminating' && !ev.message.startsWith('Disrupting Node'))
    return { kind: 'ignored', reason: 'DisruptionTerminating without the Node prefix' };
  return {
    kind: 'node-signal',
    signal: {
      cluster: ev.cluster,
      nodeName: ev.involvedObject.name,
      instanceId: null,
      kind,
      signal: {
        source: 'node-event',
        detail: `${ev.reason} (${component(ev) || '?'}): ${ev.message}`,
      },
      at: ev.at,
    },
  };
}

/** Turn one exported Kubernetes Event into a loss, a warning, or a reason to ignore it. */
export function classifyEvent(ev: KubeEvent): EventClassification {
  const obj = ev.involvedObject;
  if (obj.kind === 'Node') return nodeEvent(ev);
  if (obj.kind !== 'Pod') return { kind: 'ignored', reason: `involvedObject kind ${obj.kind}` };
  const namespace = obj.namespace ?? ev.namespace ?? '';
  const problem = emitterProblem(ev, POD_EMITTERS[ev.reason]);
  if (problem) return { kind: 'ignored', reason: problem };
  const signal = {
    source: 'pod-event' as const,
    detail: `${ev.reason} (${component(ev) || '?'}): ${ev.message}`,
  };
  const warning = POD_WARNINGS[ev.reason];
  if (warning)
    return {
      kind: 'runner-warning',
      warning: {
        cluster: ev.cluster,
        namespace,
        runnerName: obj.name,
        kind: warning,
        signal,
        at: ev.at,
      },
    };
  const cause = podCause(ev);
  if (!cause) return { kind: 'ignored', reason: `pod event ${ev.reason} is not a loss` };
  const labelled = Object.keys(obj.labels).length > 0 || obj.ownerReferences.length > 0;
  return {
    kind: 'loss',
    loss: runnerLoss(
      {
        cluster: ev.cluster,
        namespace,
        runnerName: obj.name,
        podUid: obj.uid,
        nodeName: ev.sourceHost,
        scaleSet: scaleSetOf(obj),
        cause,
        signal,
        at: ev.at,
      },
      // Without the exporter's lookup the event carries no labels: unknown, not false.
      { pod: labelled ? obj : null },
    ),
  };
}
