/**
 * The remediate and audit rules' patterns (infra/aws/event-patterns.yml) against the samples in
 * events/ and their near misses, matched the way EventBridge matches (sim/aws/event-pattern.ts).
 */
import { matchesEventPattern } from '../../sim/aws/event-pattern.js';
import {
  actionableEvents,
  classifierActsOn,
  eventPatterns,
  exportedEvent,
  k8sBusEvent,
  NOISE_REASONS,
  readJson,
} from './infra-fixtures.js';

// The operator lists the runner namespaces; the pod sample lives in `github-runners`.
const patterns = eventPatterns({ runnerNamespaces: 'github-runners,arc-runners' });
const pattern = (name: string) => {
  const p = patterns[name];
  if (!p) throw new Error(`no pattern ${name}`);
  return p;
};
const sample = (file: string) => readJson(`events/${file}`);
const withDetail = (file: string, change: (detail: Record<string, unknown>) => void) => {
  const event = structuredClone(sample(file));
  change(event['detail'] as Record<string, unknown>);
  return event;
};

describe('GitHub observations rule', () => {
  it('matches what github-webhook publishes', () => {
    expect(
      matchesEventPattern(
        pattern('githubObservations'),
        sample('github-job-queued-observation.json'),
      ),
    ).toBe(true);
  });

  it('does not take the engine’s own audit events back as input', () => {
    expect(
      matchesEventPattern(pattern('githubObservations'), sample('remediation-audit.json')),
    ).toBe(false);
  });
});

describe('Kubernetes events rule', () => {
  const k8s = pattern('kubernetesEvents');

  it.each(['k8s-pod-evicted.json', 'k8s-node-not-ready.json'])('matches %s', (file) => {
    expect(matchesEventPattern(k8s, sample(file))).toBe(true);
  });

  it('matches every reason the classifier acts on, and the classifier acts on each', () => {
    for (const detail of actionableEvents('arc-runners')) {
      expect([detail['reason'], classifierActsOn(detail)]).toEqual([detail['reason'], true]);
      expect([detail['reason'], matchesEventPattern(k8s, k8sBusEvent(detail))]).toEqual([
        detail['reason'],
        true,
      ]);
    }
  });

  it('rejects a pod Evicted in a namespace that is not a runner namespace', () => {
    const event = withDetail('k8s-pod-evicted.json', (d) => {
      (d['involvedObject'] as Record<string, unknown>)['namespace'] = 'kube-system';
      (d['metadata'] as Record<string, unknown>)['namespace'] = 'kube-system';
    });
    expect(matchesEventPattern(k8s, event)).toBe(false);
  });

  it('rejects a pod without ARC’s runner label', () => {
    const event = withDetail('k8s-pod-evicted.json', (d) => {
      (d['involvedObject'] as Record<string, unknown>)['labels'] = { app: 'web' };
    });
    expect(matchesEventPattern(k8s, event)).toBe(false);
  });

  it.each(NOISE_REASONS)('rejects the Normal %s event of a runner pod', (reason) => {
    const event = withDetail('k8s-pod-evicted.json', (d) => {
      d['reason'] = reason;
      d['type'] = 'Normal';
    });
    expect(matchesEventPattern(k8s, event)).toBe(false);
    expect(classifierActsOn(exportedEvent({ kind: 'Pod', reason, type: 'Normal' }))).toBe(false);
  });

  it('rejects look-alike reasons and a node reason on a pod', () => {
    for (const reason of ['EvictedX', 'NotEvicted', 'Preempt', 'evicted']) {
      const event = withDetail('k8s-pod-evicted.json', (d) => (d['reason'] = reason));
      expect([reason, matchesEventPattern(k8s, event)]).toEqual([reason, false]);
    }
    const nodeReasonOnPod = k8sBusEvent(exportedEvent({ kind: 'Pod', reason: 'NodeNotReady' }));
    expect(matchesEventPattern(k8s, nodeReasonOnPod)).toBe(false);
  });
});

describe('EC2 rules', () => {
  const spot = pattern('ec2SpotWarning');
  const state = pattern('ec2StateChange');

  it('match the spot warning and the terminated samples', () => {
    expect(matchesEventPattern(spot, sample('ec2-spot-interruption-warning.json'))).toBe(true);
    expect(matchesEventPattern(state, sample('ec2-instance-terminated.json'))).toBe(true);
  });

  it.each(['stopping', 'shutting-down', 'stopped', 'terminated'])('match state %s', (s) => {
    const event = withDetail('ec2-instance-terminated.json', (d) => (d['state'] = s));
    expect(matchesEventPattern(state, event)).toBe(true);
  });

  it.each(['running', 'pending'])('reject an EC2 %s state change', (s) => {
    const event = withDetail('ec2-instance-terminated.json', (d) => (d['state'] = s));
    expect(matchesEventPattern(state, event)).toBe(false);
    expect(matchesEventPattern(spot, event)).toBe(false);
  });

  it('reject other EC2 detail-types', () => {
    const event = {
      ...sample('ec2-spot-interruption-warning.json'),
      'detail-type': 'EC2 Instance Rebalance Recommendation',
    };
    expect(matchesEventPattern(spot, event)).toBe(false);
    expect(matchesEventPattern(state, event)).toBe(false);
  });
});

describe('audit rule', () => {
  it('takes the engine’s audit events, not its observations', () => {
    for (const detailType of ['BreakerHolding', 'SubjectSetAside'])
      expect(
        matchesEventPattern(pattern('remediationAudit'), {
          ...sample('remediation-audit.json'),
          'detail-type': detailType,
        }),
      ).toBe(true);
    expect(matchesEventPattern(pattern('remediationAudit'), sample('remediation-audit.json'))).toBe(
      true,
    );
    expect(
      matchesEventPattern(
        pattern('remediationAudit'),
        sample('github-job-queued-observation.json'),
      ),
    ).toBe(false);
  });
});
