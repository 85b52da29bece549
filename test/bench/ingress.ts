/**
 * The `ingress` section of `npm run bench`: in-process webhook ingress on a 25 KB workflow_job
 * payload, against the bare HMAC-SHA256 verification of the same payload as the floor.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { StreamPublisher } from '../../functions/adapters/bus/stream-publisher.js';
import { createWebhookVerifier } from '../../functions/adapters/github/webhook-verifier.js';
import { DynamoDeliveryLedger } from '../../functions/adapters/store/dynamo-delivery-ledger.js';
import { createLogger, createMetrics } from '../../functions/config/observability.js';
import { createDocumentClient } from '../../functions/config/compose-clients.js';
import { createGithubWebhookHandler } from '../../functions/handlers/github-webhook.js';
import type { ReceiveWebhookDeps } from '../../functions/ingress/receive-webhook.js';
import { startEmbeddedDynamo } from '../../sandbox/local/embedded-dynamo.js';
import type { DeliveryLedger } from '../../functions/ports/delivery-ledger.js';
import { systemClock } from '../../functions/ports/clock.js';
import { TEST_SECRET, functionUrlEvent, lambdaContext } from '../helpers/ingress-harness.js';
import { MemoryLedger } from '../helpers/memory-ledger.js';
import { asAppDelivery, examplesFor } from '../helpers/webhook-examples.js';
import type { BenchSection } from './section.js';

const WARMUP = 300;
const ITERATIONS = Number(process.env.BENCH_ITERATIONS ?? 3000);
const TARGET_BYTES = 25 * 1024;

function payloadOf25KB(): string {
  const example = asAppDelivery(examplesFor('workflow_job')[4] ?? {});
  const job = example.workflow_job as Record<string, unknown>;
  const steps: object[] = [];
  let body = '';
  for (let n = 1; Buffer.byteLength(body) < TARGET_BYTES; n++) {
    steps.push({
      name: `Run step ${n}: build, test and upload artifacts for the matrix entry`,
      status: 'completed',
      conclusion: 'success',
      number: n,
      started_at: '2026-03-01T12:00:00Z',
      completed_at: '2026-03-01T12:00:05Z',
    });
    body = JSON.stringify({ ...example, workflow_job: { ...job, steps } });
  }
  return body;
}

interface Stats {
  perSecond: number;
  p50: number;
  p99: number;
}

async function measure(run: (i: number) => Promise<unknown> | unknown): Promise<Stats> {
  for (let i = 0; i < WARMUP; i++) await run(-i - 1);
  const samples = new Float64Array(ITERATIONS);
  const started = performance.now();
  for (let i = 0; i < ITERATIONS; i++) {
    const t0 = performance.now();
    await run(i);
    samples[i] = performance.now() - t0;
  }
  const elapsed = performance.now() - started;
  samples.sort();
  const at = (q: number) => samples[Math.min(ITERATIONS - 1, Math.floor(q * ITERATIONS))] ?? 0;
  return { perSecond: (ITERATIONS / elapsed) * 1000, p50: at(0.5), p99: at(0.99) };
}

/** Runs `work` with stdout swallowed, so the handler's real log and metric writes are paid for. */
async function quietly<T>(work: () => Promise<T>): Promise<T> {
  const write = process.stdout.write.bind(process.stdout);
  process.stdout.write = (() => true) as typeof process.stdout.write;
  try {
    return await work();
  } finally {
    process.stdout.write = write;
  }
}

function ingressHandler(ledger: DeliveryLedger) {
  const deps: ReceiveWebhookDeps = {
    verifier: createWebhookVerifier([TEST_SECRET]),
    ledger,
    publisher: new StreamPublisher({ write: () => true }, systemClock),
    clock: systemClock,
    maxBodyBytes: 1024 * 1024,
    deliveryTtlSeconds: 3600,
  };
  return createGithubWebhookHandler({
    ingress: async () => deps,
    logger: createLogger('github-webhook'),
    metrics: createMetrics('github-webhook'),
  });
}

/** The section's lines: printed as they come, or, with --json, the document's `lines`. */
export const ingressSection: BenchSection = async ({ asJson }) => {
  const lines: string[] = [];
  const say = (line: string) => (asJson ? lines.push(line) : console.log(line));
  const body = payloadOf25KB();
  const template = await functionUrlEvent({ event: 'workflow_job', body });
  const eventFor = (i: number) => ({
    ...template,
    headers: { ...template.headers, 'x-github-delivery': `bench-${i}` },
  });
  const signature = template.headers['x-hub-signature-256'] ?? '';

  const floor = await measure(() => {
    const expected = Buffer.from(
      `sha256=${createHmac('sha256', TEST_SECRET).update(body).digest('hex')}`,
    );
    return timingSafeEqual(expected, Buffer.from(signature));
  });

  const memoryHandler = ingressHandler(new MemoryLedger());
  const inMemory = await quietly(() =>
    measure(async (i) => {
      const result = await memoryHandler(eventFor(i), lambdaContext);
      if (typeof result === 'string' || result.statusCode !== 202) throw new Error('not accepted');
    }),
  );

  const dynamo = await startEmbeddedDynamo('runner-medic-bench');
  const dynamoHandler = ingressHandler(
    new DynamoDeliveryLedger(createDocumentClient(dynamo.clientConfig), dynamo.tableName),
  );
  const withDynalite = await quietly(() =>
    measure(async (i) => {
      const result = await dynamoHandler(eventFor(i), lambdaContext);
      if (typeof result === 'string' || result.statusCode !== 202) throw new Error('not accepted');
    }),
  );
  await dynamo.close();

  const row = (name: string, s: Stats) =>
    `${name.padEnd(58)} ${s.perSecond.toFixed(0).padStart(9)}/s   p50 ${s.p50.toFixed(3)} ms   p99 ${s.p99.toFixed(3)} ms`;
  say(
    `webhook ingress, ${Buffer.byteLength(body)} byte workflow_job payload, ${ITERATIONS} iterations, node ${process.version}`,
  );
  say(row('floor: bare HMAC-SHA256 verify', floor));
  say(row('ingress: handler + in-process ledger + local sink', inMemory));
  say(row('ingress: handler + embedded DynamoDB (dynalite) + local sink', withDynalite));
  say(
    `ratio ingress/floor (p50): in-process ${(inMemory.p50 / floor.p50).toFixed(1)}x, dynalite ${(withDynalite.p50 / floor.p50).toFixed(1)}x`,
  );
  say(
    `target p99 < 2 ms in-process with the local sink: ${inMemory.p99 < 2 ? 'met' : 'NOT met'} (${inMemory.p99.toFixed(3)} ms)`,
  );

  const zip = '.serverless/github-webhook.zip';
  try {
    const { size } = await import('node:fs').then((fs) => fs.statSync(zip));
    say(
      `github-webhook zip: ${(size / 1024).toFixed(0)} KB (target < 300 KB: ${size < 300 * 1024 ? 'met' : 'NOT met'})`,
    );
  } catch {
    say(`github-webhook zip: not built; run \`npx serverless package\` first`);
  }
  return { lines };
};
