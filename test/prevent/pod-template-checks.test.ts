import {
  POD_TEMPLATE_CHECK_IDS,
  checkRunnerPodTemplate,
  isPositiveGoDuration,
  runnerPodTemplateOf,
  type PodTemplateCheckContext,
  type PodTemplateCheckId,
  type PodTemplateCheckResult,
} from '../../functions/doctor/pod-template-checks.js';

type Json = Record<string, unknown>;

const runner = (over: Json = {}): Json => ({
  name: 'runner',
  image: 'ghcr.io/actions/actions-runner:2.336.0',
  command: ['/home/runner/graceful-stop/graceful-stop.sh'],
  env: [
    { name: 'RUNNER_ENTRYPOINT', value: '/home/runner/run.sh' },
    { name: 'RUNNER_GRACEFUL_STOP_TIMEOUT', value: '1800' },
  ],
  ...over,
});

const dindSidecar = (over: Json = {}): Json => ({
  name: 'dind',
  image: 'docker:dind',
  restartPolicy: 'Always',
  args: ['dockerd', '--host=unix:///var/run/docker.sock'],
  ...over,
});

/** A healthy runner pod template: every check passes on a Karpenter node. */
function healthy(): { metadata: Json; spec: Json } {
  return {
    metadata: { annotations: { 'karpenter.sh/do-not-disrupt': 'true' } },
    spec: {
      terminationGracePeriodSeconds: 1860,
      nodeSelector: { 'karpenter.sh/nodepool': 'gha-runners' },
      initContainers: [
        { name: 'init-dind-externals', image: 'ghcr.io/actions/actions-runner:latest' },
        dindSidecar(),
      ],
      containers: [runner()],
    },
  };
}

function check(template: unknown, context: PodTemplateCheckContext = {}): PodTemplateCheckResult[] {
  const parsed = runnerPodTemplateOf(template);
  if (!parsed) throw new Error('not a pod template');
  return checkRunnerPodTemplate(parsed, context);
}

function result(
  template: unknown,
  id: PodTemplateCheckId,
  context: PodTemplateCheckContext = {},
): PodTemplateCheckResult {
  const hit = check(template, context).find((r) => r.id === id);
  if (!hit) throw new Error(`no ${id} result`);
  return hit;
}

function withSpec(over: Json, metadata?: Json): { metadata: Json; spec: Json } {
  const t = healthy();
  return { metadata: metadata ?? t.metadata, spec: { ...t.spec, ...over } };
}

describe('checkRunnerPodTemplate', () => {
  it('passes a healthy template, one result per check in a fixed order, each explained', () => {
    const results = check(healthy());

    expect(results.map((r) => r.id)).toEqual([...POD_TEMPLATE_CHECK_IDS]);
    expect(results.map((r) => r.status)).toEqual(['ok', 'ok', 'ok', 'ok']);
    for (const r of results) {
      expect(r.why.length).toBeGreaterThan(20);
      expect(r.what).toBe('Nothing to do.');
    }
  });

  it('reports every finding of a template with none of the settings', () => {
    const bare = {
      metadata: {},
      spec: {
        nodeSelector: { 'karpenter.sh/nodepool': 'gha-runners' },
        containers: [
          {
            name: 'runner',
            image: 'ghcr.io/actions/actions-runner',
            command: ['/home/runner/run.sh'],
          },
          { name: 'dind', image: 'docker:dind' },
        ],
      },
    };

    const results = check(bare);

    expect(results.map((r) => [r.id, r.status])).toEqual([
      ['graceful-stop', 'finding'],
      ['termination-grace-period', 'finding'],
      ['dind-sidecar', 'finding'],
      ['karpenter-do-not-disrupt', 'finding'],
    ]);
    for (const r of results) expect(r.what).not.toBe('Nothing to do.');
  });
});

describe('graceful-stop', () => {
  it.each([
    ['the entrypoint as command', runner()],
    [
      'the entrypoint through a shell',
      runner({ command: ['bash', '-c'], args: ['exec /opt/graceful-stop.sh'] }),
    ],
    [
      'a preStop hook',
      runner({
        command: ['/home/runner/run.sh'],
        lifecycle: { preStop: { exec: { command: ['/bin/sh', '-c', 'wait-for-worker'] } } },
      }),
    ],
  ])('is ok with %s', (_case, container) => {
    expect(result(withSpec({ containers: [container] }), 'graceful-stop').status).toBe('ok');
  });

  it('is a finding for the image command alone, naming the shutdown-signal failure', () => {
    const r = result(
      withSpec({ containers: [runner({ command: ['/home/runner/run.sh'] })] }),
      'graceful-stop',
    );

    expect(r.status).toBe('finding');
    expect(r.why).toContain('The runner has received a shutdown signal');
    expect(r.what).toContain('graceful-stop.sh');
  });

  it('looks at the container named runner, wherever it is in the list', () => {
    const sidecarFirst = withSpec({
      containers: [
        { name: 'log-shipper', image: 'fluent-bit', command: ['graceful-stop-is-not-here'] },
        runner({ command: ['/home/runner/run.sh'] }),
      ],
    });

    expect(result(sidecarFirst, 'graceful-stop').status).toBe('finding');
  });
});

describe('termination-grace-period', () => {
  const timeout = (value: string) =>
    runner({ env: [{ name: 'RUNNER_GRACEFUL_STOP_TIMEOUT', value }] });

  it.each([
    ['unset (the 30 s default)', undefined, runner(), /not set.*default 30 s/],
    ['the default 30 s, written out', 30, runner(), /default 30 s/],
    [
      'not above the stop timeout',
      1800,
      runner(),
      /is not above RUNNER_GRACEFUL_STOP_TIMEOUT \(1800\)/,
    ],
    ['above it by less than the margin', 1820, runner(), /leaves less than 30 s/],
    ['below the script default 15 s + 30 s', 40, runner({ env: [] }), /leaves less than 30 s/],
    ['with a timeout that is not a number', 1860, timeout('30m'), /not a whole number/],
  ])('is a finding when %s', (_case, grace, container, why) => {
    const r = result(
      withSpec({ terminationGracePeriodSeconds: grace, containers: [container] }),
      'termination-grace-period',
    );

    expect(r.status).toBe('finding');
    expect(r.why).toMatch(why);
  });

  it.each([
    ['the stop timeout plus the margin', 1830, runner(), /covers the 1800 s wait/],
    ['the script default plus the margin', 45, runner({ env: [] }), /covers the 15 s wait/],
    [
      'a timeout from a reference',
      300,
      runner({
        env: [
          {
            name: 'RUNNER_GRACEFUL_STOP_TIMEOUT',
            valueFrom: { configMapKeyRef: { name: 'c', key: 'k' } },
          },
        ],
      }),
      /not visible here/,
    ],
    [
      'no graceful stop at all',
      60,
      runner({ command: ['/home/runner/run.sh'], env: [] }),
      /nothing waits/,
    ],
  ])('is ok with %s', (_case, grace, container, why) => {
    const r = result(
      withSpec({ terminationGracePeriodSeconds: grace, containers: [container] }),
      'termination-grace-period',
    );

    expect(r.status).toBe('ok');
    expect(r.why).toMatch(why);
  });
});

describe('dind-sidecar', () => {
  const preStop = {
    preStop: {
      exec: { command: ['sh', '-c', 'while [ -e /var/run/runner.alive ]; do sleep 1; done'] },
    },
  };
  const plainDind = (over: Json = {}) => ({ name: 'dind', image: 'docker:dind', ...over });
  const only = (initContainers: Json[], containers: Json[] = [runner()]) =>
    withSpec({ initContainers, containers });

  it.each<[string, { metadata: Json; spec: Json }, PodTemplateCheckContext]>([
    ['a native sidecar', only([dindSidecar()]), {}],
    [
      'no dind at all',
      only([{ name: 'init-dind-externals', image: 'ghcr.io/actions/actions-runner' }]),
      {},
    ],
    [
      'a plain dind with a preStop hook before 1.29',
      only([], [runner(), plainDind({ lifecycle: preStop })]),
      { kubernetesVersion: { major: 1, minor: 28 } },
    ],
    [
      'a plain dind with a preStop hook, version unknown',
      only([], [runner(), plainDind({ lifecycle: preStop })]),
      {},
    ],
  ])('is ok with %s', (_case, template, context) => {
    expect(result(template, 'dind-sidecar', context).status).toBe('ok');
  });

  it.each<[string, { metadata: Json; spec: Json }, PodTemplateCheckContext, RegExp]>([
    [
      'a plain dind container',
      only([], [runner(), plainDind()]),
      {},
      /plain container: on pod deletion it gets SIGTERM together with the runner/,
    ],
    [
      'a plain dind with a preStop hook on 1.29+',
      only([], [runner(), plainDind({ lifecycle: preStop })]),
      { kubernetesVersion: { major: 1, minor: 30 } },
      /plain container \(with a preStop hook\)/,
    ],
    [
      'dind as an init container that never finishes',
      only([dindSidecar({ restartPolicy: undefined })]),
      {},
      /without restartPolicy: Always/,
    ],
    [
      'a dind image under another name',
      only([], [runner(), { name: 'docker', image: 'docker:27-dind' }]),
      {},
      /"docker"/,
    ],
    [
      'dockerd run from another image',
      only(
        [],
        [
          runner(),
          { name: 'engine', image: 'example/engine', command: ['/usr/local/bin/dockerd'] },
        ],
      ),
      {},
      /"engine"/,
    ],
  ])('is a finding for %s', (_case, template, context, why) => {
    const r = result(template, 'dind-sidecar', context);

    expect(r.status).toBe('finding');
    expect(r.why).toMatch(why);
  });

  it('before 1.29 it asks for a preStop wait rather than a native sidecar', () => {
    const r = result(only([], [runner(), plainDind()]), 'dind-sidecar', {
      kubernetesVersion: { major: 1, minor: 27 },
    });

    expect(r.status).toBe('finding');
    expect(r.what).toContain('values-karpenter-before-1.29.yaml');
  });
});

describe('karpenter-do-not-disrupt', () => {
  const annotated = (value?: string, spec: Json = {}) =>
    withSpec(
      { nodeSelector: undefined, ...spec },
      { annotations: value === undefined ? {} : { 'karpenter.sh/do-not-disrupt': value } },
    );
  const onKarpenterNode = { nodeLabels: { 'karpenter.sh/nodepool': 'default' } };

  it.each<[string, { metadata: Json; spec: Json }, PodTemplateCheckContext]>([
    ['a pod on a Karpenter node', annotated(undefined), onKarpenterNode],
    [
      'a pod on a node of the older Provisioner API',
      annotated(undefined),
      { nodeLabels: { 'karpenter.sh/provisioner-name': 'default' } },
    ],
    [
      'a template selecting a NodePool',
      annotated(undefined, { nodeSelector: { 'karpenter.sh/nodepool': 'x' } }),
      {},
    ],
    [
      'a template requiring a Karpenter label by affinity',
      annotated(undefined, {
        affinity: {
          nodeAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: {
              nodeSelectorTerms: [
                {
                  matchExpressions: [
                    { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] },
                  ],
                },
              ],
            },
          },
        },
      }),
      {},
    ],
    ['a cluster the caller knows runs Karpenter', annotated(undefined), { karpenterManaged: true }],
  ])('is a finding without the annotation for %s', (_case, template, context) => {
    const r = result(template, 'karpenter-do-not-disrupt', context);

    expect(r.status).toBe('finding');
    expect(r.what).toContain('karpenter.sh/do-not-disrupt: "true"');
    expect(r.what).toMatch(/expiry.*spot interruption, node repair and forced termination/);
  });

  it.each([['true'], ['30m'], ['1h30m'], ['2.5h']])('is ok with the value %s', (value) => {
    expect(result(annotated(value), 'karpenter-do-not-disrupt', onKarpenterNode).status).toBe('ok');
  });

  it.each([['yes'], ['True'], ['0s'], ['-5m'], ['30']])(
    'is a finding with the value %s, which Karpenter ignores',
    (value) => {
      const r = result(annotated(value), 'karpenter-do-not-disrupt', onKarpenterNode);

      expect(r.status).toBe('finding');
      expect(r.why).toContain('neither "true" nor a positive duration');
    },
  );

  it('is ok without the annotation where nothing shows Karpenter', () => {
    expect(result(annotated(undefined), 'karpenter-do-not-disrupt').status).toBe('ok');
    expect(
      result(
        annotated(undefined, { nodeSelector: { 'karpenter.sh/nodepool': 'x' } }),
        'karpenter-do-not-disrupt',
        {
          karpenterManaged: false,
        },
      ).status,
    ).toBe('ok');
  });
});

describe('runnerPodTemplateOf', () => {
  const template = healthy();

  it.each<[string, unknown]>([
    ['a Pod', { apiVersion: 'v1', kind: 'Pod', ...template }],
    ['an AutoscalingRunnerSet', { kind: 'AutoscalingRunnerSet', spec: { template } }],
    [
      'an EphemeralRunnerSet',
      { kind: 'EphemeralRunnerSet', spec: { ephemeralRunnerSpec: template } },
    ],
    [
      'an EphemeralRunner',
      { kind: 'EphemeralRunner', spec: { githubConfigUrl: 'u', ...template } },
    ],
    ['a bare template', template],
  ])('reads the template of %s', (_case, object) => {
    const parsed = runnerPodTemplateOf(object);

    expect(parsed?.containers.map((c) => c.name)).toEqual(['runner']);
    expect(parsed?.annotations).toEqual({ 'karpenter.sh/do-not-disrupt': 'true' });
    expect(parsed?.terminationGracePeriodSeconds).toBe(1860);
  });

  it.each<[string, unknown]>([
    ['null', null],
    ['a string', 'pod'],
    ['an object without a spec', { kind: 'Pod', metadata: {} }],
    ['a spec without containers', { spec: { containers: [] } }],
    ['containers without names', { spec: { containers: [{ image: 'x' }] } }],
    ['an AutoscalingRunnerSet without a template', { kind: 'AutoscalingRunnerSet', spec: {} }],
  ])('returns undefined for %s', (_case, object) => {
    expect(runnerPodTemplateOf(object)).toBeUndefined();
  });

  it('ignores malformed parts instead of failing', () => {
    const parsed = runnerPodTemplateOf({
      metadata: { annotations: { a: 1, 'karpenter.sh/do-not-disrupt': 'true' } },
      spec: {
        terminationGracePeriodSeconds: '1860',
        containers: [{ name: 'runner', command: 'not-a-list', env: [{ value: 'no name' }, 7] }],
        initContainers: 'nope',
      },
    });

    expect(parsed).toEqual({
      annotations: { 'karpenter.sh/do-not-disrupt': 'true' },
      containers: [
        {
          name: 'runner',
          image: undefined,
          command: [],
          args: [],
          env: new Map(),
          hasPreStop: false,
          restartPolicy: undefined,
        },
      ],
      initContainers: [],
      terminationGracePeriodSeconds: undefined,
      nodeSelector: {},
      requiredNodeAffinityKeys: [],
    });
  });
});

describe('isPositiveGoDuration', () => {
  it.each([
    ['30m', true],
    ['1h30m', true],
    ['2.5h', true],
    ['.5s', true],
    ['300ms', true],
    ['10µs', true],
    ['0s', false],
    ['-1h', false],
    ['30', false],
    ['1d', false],
    ['', false],
    ['true', false],
  ])('%s → %s', (value, expected) => {
    expect(isPositiveGoDuration(value)).toBe(expected);
  });
});
