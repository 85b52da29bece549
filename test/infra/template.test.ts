/**
 * The packaged CloudFormation template (`serverless package`, offline, as CI runs it), checked
 * the way a platform engineer reviews it before deploying. Conditions are evaluated for the
 * default params, so the checks see what a fresh deploy gets.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createTableInput } from '../../functions/adapters/store/table-schema.js';
import { parsePolicy } from '../../functions/domain/policy/policy.js';
import { WEBHOOK_TIMEOUT_SECONDS } from '../../functions/ingress/delivery-lease.js';
import { eventPatterns } from './infra-fixtures.js';

const run = promisify(execFile);
const STAGE = 'qa';
const SERVERLESS = join('node_modules', '.bin', 'serverless');

/** The CLI's environment, without jest's --experimental-vm-modules (tsx's loader stalls on it). */
function cliEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env.NODE_OPTIONS;
  return env;
}

type Json = any; // eslint-disable-line @typescript-eslint/no-explicit-any
let template: Json;
let resources: Record<string, Json>;
let prodResources: Record<string, Json>;
let packageDir: string;

beforeAll(async () => {
  packageDir = mkdtempSync(join(tmpdir(), 'runner-medic-package-'));
  const env = cliEnv();
  const [, printed] = await Promise.all([
    run(SERVERLESS, ['package', '--stage', STAGE, '--package', packageDir], { env }),
    run(SERVERLESS, ['print', '--stage', 'prod', '--format', 'json'], {
      env,
      maxBuffer: 32 * 1024 * 1024,
    }),
  ]);
  template = JSON.parse(
    readFileSync(join(packageDir, 'cloudformation-template-update-stack.json'), 'utf8'),
  );
  prodResources = (JSON.parse(printed.stdout) as Json).resources.Resources;
  resources = resolve(template.Resources);
}, 300_000);

afterAll(() => {
  if (packageDir) rmSync(packageDir, { recursive: true, force: true });
});

/** Evaluates the template's Conditions (Fn::Equals over literals, Not, And, Or, Condition). */
function condition(name: string): boolean {
  const evaluate = (c: Json): boolean => {
    if (c.Condition) return condition(c.Condition);
    if (c['Fn::Equals']) return c['Fn::Equals'][0] === c['Fn::Equals'][1];
    if (c['Fn::Not']) return !evaluate(c['Fn::Not'][0]);
    if (c['Fn::And']) return c['Fn::And'].every(evaluate);
    if (c['Fn::Or']) return c['Fn::Or'].some(evaluate);
    throw new Error(`cannot evaluate condition ${JSON.stringify(c)}`);
  };
  const c = template.Conditions[name];
  if (c === undefined) throw new Error(`no condition ${name}`);
  return evaluate(c);
}

const NO_VALUE = Symbol('NoValue');

/** The template as deployed with the default params: Fn::If chosen, AWS::NoValue dropped. */
function resolve(value: Json): Json {
  if (Array.isArray(value)) return value.map(resolve).filter((v) => v !== NO_VALUE);
  if (typeof value !== 'object' || value === null) return value;
  if (value.Ref === 'AWS::NoValue') return NO_VALUE;
  if (value['Fn::If']) {
    const [name, yes, no] = value['Fn::If'];
    return resolve(condition(name) ? yes : no);
  }
  const out: Record<string, Json> = {};
  for (const [k, v] of Object.entries(value)) {
    const r = resolve(v);
    if (r !== NO_VALUE) out[k] = r;
  }
  // A resource whose Condition is false is not created.
  return out;
}

const ofType = (type: string) =>
  Object.entries(resources).filter(
    ([, r]) => r.Type === type && (!r.Condition || condition(r.Condition)),
  );
const functions = () => ofType('AWS::Lambda::Function');
const roleOf = (fn: string) => resources[fn].Properties.Role['Fn::GetAtt'][0] as string;
const statementsOf = (role: string): Json[] =>
  resources[role].Properties.Policies.flatMap((p: Json) => p.PolicyDocument.Statement);
const actionsOf = (s: Json): string[] => [s.Action].flat();
const text = (v: unknown) => JSON.stringify(v);

describe('the packaged template', () => {
  it('gives each function its own role, and no shared role exists', () => {
    const roles = functions().map(([fn]) => roleOf(fn));
    expect(roles.sort()).toEqual(['GithubWebhookRole', 'ReconcileRole', 'RemediateRole']);
    expect(resources['IamRoleLambdaExecution']).toBeUndefined();
  });

  it('lets github-webhook read its secret, write deliveries and publish: nothing else', () => {
    const statements = statementsOf(roleOf('GithubDashwebhookLambdaFunction'));
    const actions = statements.flatMap(actionsOf);
    expect(actions.filter((a) => /^(eks|sqs|secretsmanager|kms|lambda):/.test(a))).toEqual([]);
    const ssm = statements.filter((s) => actionsOf(s).some((a) => a.startsWith('ssm:')));
    expect(ssm.flatMap((s) => s.Resource).map(text)).toEqual([
      text({
        'Fn::Sub': `arn:\${AWS::Partition}:ssm:\${AWS::Region}:\${AWS::AccountId}:parameter/runner-medic/${STAGE}/github-webhook-secret`,
      }),
    ]);
    const dynamo = statements.filter((s) => actionsOf(s).some((a) => a.startsWith('dynamodb:')));
    expect(dynamo).toHaveLength(1);
    expect(dynamo[0].Condition['ForAllValues:StringLike']['dynamodb:LeadingKeys']).toEqual([
      'DELIVERY*',
    ]);
    expect(text(statements)).not.toMatch(/WakeQueue|DeadLetterQueue|\/policy|github-app/);
  });

  it('lets remediate and reconcile use the app secret, table, bus, wake queue and their DLQ', () => {
    for (const fn of ['RemediateLambdaFunction', 'ReconcileLambdaFunction']) {
      const statements = statementsOf(roleOf(fn));
      const all = text(statements);
      expect(all).toContain(`parameter/runner-medic/${STAGE}/github-app`);
      expect(all).toContain(`parameter/runner-medic/${STAGE}/policy`);
      expect(all).not.toContain('github-webhook-secret');
      expect(all).toContain('RemediateWakeQueue');
      // No cluster configured by default: no eks:DescribeCluster at all, rather than on `*`.
      expect(statements.flatMap(actionsOf)).not.toContain('eks:DescribeCluster');
    }
  });

  it('has no `*` action and no `*` resource in any policy, and no partition written out', () => {
    const policies = [
      ...ofType('AWS::IAM::Role').flatMap(([name]) => statementsOf(name)),
      ...ofType('AWS::SQS::QueuePolicy').flatMap(([, r]) => r.Properties.PolicyDocument.Statement),
    ];
    expect(policies.length).toBeGreaterThan(10);
    for (const s of policies) {
      for (const a of actionsOf(s)) expect(a).not.toContain('*');
      expect([s.Resource].flat()).not.toContain('*');
    }
    expect(text(template)).not.toMatch(/arn:aws[a-z-]*:/);
  });

  it('gives every asynchronous target and every queue a dead-letter queue', () => {
    for (const [name, rule] of ofType('AWS::Events::Rule'))
      for (const target of rule.Properties.Targets)
        expect([name, target.DeadLetterConfig?.Arn]).toEqual([name, expect.anything()]);
    const invokeConfigs = ofType('AWS::Lambda::EventInvokeConfig').map(([, c]) => c.Properties);
    for (const fn of ['RemediateLambdaFunction', 'ReconcileLambdaFunction']) {
      const config = invokeConfigs.find((c) => c.FunctionName.Ref === fn);
      expect(config?.DestinationConfig.OnFailure.Destination).toBeDefined();
    }
    const deadLetterQueues = new Set(
      [
        ...ofType('AWS::SQS::Queue').map(
          ([, q]) => q.Properties.RedrivePolicy?.deadLetterTargetArn,
        ),
        ...invokeConfigs.map((c) => c.DestinationConfig.OnFailure.Destination),
        ...ofType('AWS::Events::Rule').flatMap(([, r]) =>
          r.Properties.Targets.map((t: Json) => t.DeadLetterConfig.Arn),
        ),
      ]
        .filter(Boolean)
        .map((arn: Json) => arn['Fn::GetAtt'][0]),
    );
    for (const [name, queue] of ofType('AWS::SQS::Queue'))
      expect([
        name,
        deadLetterQueues.has(name) || queue.Properties.RedrivePolicy !== undefined,
      ]).toEqual([name, true]);
    expect(resources['RemediateWakeQueue'].Properties.RedrivePolicy.deadLetterTargetArn).toEqual({
      'Fn::GetAtt': ['WakeDeadLetterQueue', 'Arn'],
    });
  });

  it('has every alarm, each notifying the alarm topic', () => {
    const names = ofType('AWS::CloudWatch::Alarm').map(([, a]) => a.Properties.AlarmName);
    const expected = [
      'wake-dlq',
      'remediate-dlq',
      'reconcile-dlq',
      'events-dlq',
      ...['github-webhook', 'remediate', 'reconcile'].flatMap((f) => [
        `${f}-errors`,
        `${f}-throttles`,
      ]),
      'cluster-unavailable',
      'installation-unavailable',
      'input-rejected',
      'circuit-breaker',
      'starving-queue',
      'github-budget',
    ].map((n) => `runner-medic-${STAGE}-${n}`);
    expect(names.sort()).toEqual(expected.sort());
    for (const [, alarm] of ofType('AWS::CloudWatch::Alarm'))
      expect(alarm.Properties.AlarmActions).toEqual([{ Ref: 'AlarmTopic' }]);
    const queries = ofType('AWS::CloudWatch::Alarm')
      .flatMap(([, a]) => a.Properties.Metrics ?? [])
      .map((m: Json) => m.Expression as string);
    for (const metric of ['ClusterUnavailable', 'InputRejected', 'InstallationUnavailable'])
      expect(queries.some((q) => q.includes(`SUM(${metric})`))).toBe(true);
    expect(queries.some((q) => q.includes("rule = 'circuitBreaker'"))).toBe(true);
    expect(queries.some((q) => q.includes("rule = 'starvingQueue'"))).toBe(true);
    expect(queries.some((q) => q.includes('MAX(GithubBudgetUsed)'))).toBe(true);
  });

  it('keeps each stage’s custom metrics apart: its own service, and alarms and dashboard on it', () => {
    const service = `runner-medic-${STAGE}`;
    for (const [, fn] of functions()) {
      const vars = fn.Properties.Environment.Variables;
      expect([vars.POWERTOOLS_SERVICE_NAME, vars.POWERTOOLS_METRICS_NAMESPACE]).toEqual([
        service,
        'RunnerMedic',
      ]);
    }
    const [body, vars] = resources['Dashboard'].Properties.DashboardBody['Fn::Sub'];
    const dashboard = JSON.parse(
      (body as string).replace(/\$\{(Namespace|Service)\}/g, (_m, k: string) => vars[k]),
    );
    const onDashboard = dashboard.widgets
      .flatMap((w: Json) => w.properties.metrics)
      .flatMap((m: Json[]) => m.map((part) => part?.expression).filter(Boolean));
    const inAlarms = ofType('AWS::CloudWatch::Alarm')
      .flatMap(([, a]) => a.Properties.Metrics ?? [])
      .map((m: Json) => m.Expression as string);
    expect([onDashboard.length, inAlarms.length]).toEqual([5, 6]);
    const thisStageOnly = new RegExp(
      `^SELECT \\w+\\(\\w+\\) FROM RunnerMedic WHERE service = '${service}'( AND | GROUP BY |$)`,
    );
    for (const query of [...onDashboard, ...inAlarms]) expect(query).toMatch(thisStageOnly);
  });

  it('times github-webhook out where the delivery lease assumes (delivery-lease.ts)', () => {
    expect(resources['GithubDashwebhookLambdaFunction'].Properties.Timeout).toBe(
      WEBHOOK_TIMEOUT_SECONDS,
    );
  });

  it('holds no secret value, only where to read secrets', () => {
    const all = text(template);
    expect(all).not.toContain('runner-medic-local-secret');
    expect(all).not.toMatch(/BEGIN [A-Z ]*PRIVATE KEY/);
    for (const [, fn] of functions()) {
      const vars = fn.Properties.Environment.Variables;
      for (const name of ['GITHUB_WEBHOOK_SECRET', 'GITHUB_APP_CREDENTIALS'])
        expect(vars[name] ?? '').toBe('');
    }
  });

  it('names every resource after the stage', () => {
    const NAME_KEYS = [
      'TableName',
      'QueueName',
      'Name',
      'RoleName',
      'FunctionName',
      'AlarmName',
      'DashboardName',
      'TopicName',
      'LogGroupName',
      'ArchiveName',
      'PolicyName',
    ];
    let named = 0;
    for (const [logicalId, r] of Object.entries(resources)) {
      for (const k of NAME_KEYS) {
        const v = r.Properties?.[k];
        // References to other resources are named where those are declared.
        if (v === undefined || (typeof v === 'object' && (v.Ref || v['Fn::GetAtt']))) continue;
        named++;
        expect([logicalId, k, text(v)]).toEqual([
          logicalId,
          k,
          expect.stringMatching(new RegExp(`runner-medic[-/]${STAGE}[-/"]`)),
        ]);
      }
    }
    expect(named).toBeGreaterThan(25);
    const env = resources['RemediateLambdaFunction'].Properties.Environment.Variables;
    expect(env.EVENT_BUS_NAME).toBe(`runner-medic-${STAGE}`);
    expect(env.TABLE_NAME).toBe(`runner-medic-${STAGE}`);
  });

  it('declares the table the store code creates (keys and indexes)', () => {
    const table = resources['RunnerMedicTable'].Properties;
    const expected = createTableInput(table.TableName);
    expect(new Set(table.AttributeDefinitions.map(text))).toEqual(
      new Set(expected.AttributeDefinitions?.map(text)),
    );
    expect(table.KeySchema).toEqual(expected.KeySchema);
    expect(new Set(table.GlobalSecondaryIndexes.map(text))).toEqual(
      new Set(expected.GlobalSecondaryIndexes?.map(text)),
    );
    expect(table.TimeToLiveSpecification).toEqual({ AttributeName: 'expiresAt', Enabled: true });
  });

  it('keeps and protects the table in prod only', () => {
    expect(resources['RunnerMedicTable'].DeletionPolicy).toBe('Delete');
    expect(prodResources['RunnerMedicTable'].DeletionPolicy).toBe('Retain');
    expect(prodResources['RunnerMedicTable'].UpdateReplacePolicy).toBe('Retain');
    expect(`${prodResources['RunnerMedicTable'].Properties.DeletionProtectionEnabled}`).toBe(
      'true',
    );
  });

  it('starts a fresh deploy in dry run', () => {
    const policy = parsePolicy(resources['RunnerMedicPolicyParameter'].Properties.Value);
    expect(policy.ok && policy.value.dryRun).toBe(true);
    expect(
      resources['RemediateLambdaFunction'].Properties.Environment.Variables.POLICY_PARAMETER,
    ).toEqual({
      Ref: 'RunnerMedicPolicyParameter',
    });
  });

  it('reserves concurrency for every function', () => {
    const reserved = Object.fromEntries(
      functions().map(([name, fn]) => [name, fn.Properties.ReservedConcurrentExecutions]),
    );
    expect(reserved).toEqual({
      GithubDashwebhookLambdaFunction: 20,
      RemediateLambdaFunction: 5,
      ReconcileLambdaFunction: 1,
    });
  });

  it('puts on the rules exactly the patterns of infra/aws/event-patterns.yml', () => {
    const expected = eventPatterns({ runnerNamespaces: 'arc-runners' });
    const onRules = ofType('AWS::Events::Rule')
      .map(([, r]) => r.Properties.EventPattern)
      .filter(Boolean)
      .map((p: Json) => text(resolvePatternSplit(p)));
    for (const name of [
      'githubObservations',
      'kubernetesEvents',
      'ec2SpotWarning',
      'ec2StateChange',
      'remediationAudit',
    ])
      expect([name, onRules.includes(text(expected[name]))]).toEqual([name, true]);
  });
});

function resolvePatternSplit(value: Json): Json {
  if (Array.isArray(value)) return value.map(resolvePatternSplit);
  if (typeof value !== 'object' || value === null) return value;
  if (value['Fn::Split']) return (value['Fn::Split'][1] as string).split(value['Fn::Split'][0]);
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, resolvePatternSplit(v)]));
}

// After the template checks (same file, so the two esbuild runs never share .esbuild at once).
describe('serverless invoke local, offline', () => {
  it('runs github-webhook on its sample against the embedded sandbox', async () => {
    const { stdout } = await run(
      SERVERLESS,
      [
        'invoke',
        'local',
        '--stage',
        'local',
        '-f',
        'github-webhook',
        '-p',
        'events/github-webhook-workflow-job-queued.json',
      ],
      {
        env: cliEnv(),
        maxBuffer: 8 * 1024 * 1024,
      },
    );
    // The sample is verified with the local secret, recorded in the embedded DynamoDB and
    // published (stdout sink) as an observation.
    expect(stdout).toContain('"statusCode": 202');
    expect(stdout).toContain('"detail-type":"GitHub Job Queued"');
  }, 240_000);

  it.each([
    ['remediate', 'k8s-pod-evicted.json', '"recorded": 1'],
    ['reconcile', 'reconcile-schedule.json', '"recorded": 0'],
  ])(
    'runs %s on %s against the embedded sandbox',
    async (fn, sample, recorded) => {
      const { stdout } = await run(
        SERVERLESS,
        ['invoke', 'local', '--stage', 'local', '-f', fn, '-p', `events/${sample}`],
        { env: cliEnv(), maxBuffer: 8 * 1024 * 1024 },
      );
      // The engine ran to the end on the sample and emitted its metrics under the stage's service.
      expect(stdout).toContain('"status": "done"');
      expect(stdout).toContain(recorded);
      expect(stdout).toContain('"service":"runner-medic-local"');
    },
    240_000,
  );
});
