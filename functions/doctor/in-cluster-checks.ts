/**
 * `runner-medic doctor --in-cluster`: checks a `runner-medic serve` deployment from inside one of
 * its pods (IN_POD_COMMAND below), with serve's own environment and the pod's own credentials: serve's settings, the API server, the Lease, the
 * local replica's /readyz (its informers and its store), the store's volume, and the RBAC of each
 * call serve makes. docs/doctor.md lists the checks; docs/in-cluster.md says when to run it.
 */
import { accessSync, constants, existsSync, statSync, statfsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import type { V1Lease } from '@kubernetes/client-node';
import { CoordinationV1Api, KubeConfig, VersionApi } from '@kubernetes/client-node';
import { ConfigError } from '../config/settings.js';
import type { Clock } from '../ports/clock.js';
import type { ServeSettings } from '../serve/serve-settings.js';
import { loadServeSettings } from '../serve/serve-settings.js';
import type { AccessAttributes } from './cluster-checks.js';
import { deniedAccess, describeAccess, kubeStatus, withTimeout } from './cluster-checks.js';
import type { CheckResult } from './doctor-check.js';
import { describeError, failed, finding, listed, ok, unreachable } from './doctor-check.js';
import { serveAccessToReview } from './serve-access.js';

type Env = Record<string, string | undefined>;

const PREFIX = 'in-cluster';
/** How to run it in a serve pod: the image's entrypoint (Dockerfile) with this command. */
const IN_POD_COMMAND =
  'kubectl -n runner-medic exec deploy/runner-medic -- node /app/functions/cli/entry.mjs doctor --in-cluster';
const MIB = 1024 * 1024;
/** Below this much free space on the store's volume is a finding (the PVC asks for 1 GiB). */
const MIN_FREE_BYTES = 100 * MIB;
/** The probe port answers at once when serve runs; longer means it is stuck. */
const READYZ_TIMEOUT_MS = 5000;

export interface InClusterDoctorOptions {
  /** serve's environment (the pod's own, under `kubectl exec`). */
  env: Env;
  clock: Clock;
  /** Below this many free bytes on the store's volume is a finding. @default 100 MiB */
  minFreeBytes?: number;
}

/** Runs the in-cluster checks, in the order of docs/doctor.md. */
export async function runInClusterDoctor(options: InClusterDoctorOptions): Promise<CheckResult[]> {
  let settings: ServeSettings;
  try {
    settings = loadServeSettings(options.env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    return [
      finding(
        `${PREFIX}.settings`,
        `serve's environment would make it refuse to start:\n${error.message}`,
        'Fix these variables in deployment.yaml (docs/in-cluster.md, Settings), then run the doctor inside the pod again.',
      ),
    ];
  }
  const checks: CheckResult[] = [
    ok(
      `${PREFIX}.settings`,
      `serve's settings: cluster ${settings.cluster}, runner namespaces ${settings.runnerNamespaces.join(', ')}, ` +
        `Lease ${settings.lease.namespace}/${settings.lease.name}, store ${settings.store === 'sqlite' ? `SQLite ${settings.sqlitePath}` : 'DynamoDB'}.`,
    ),
  ];
  const reached = await reachApiServer(options.env);
  checks.push(reached.check);
  if (reached.kc) checks.push(await checkLease(reached.kc, settings, options.clock.now()));
  checks.push(await checkReadyz(settings));
  checks.push(checkStoreVolume(settings, options.minFreeBytes ?? MIN_FREE_BYTES));
  if (reached.kc) checks.push(await checkServeRbac(reached.kc, settings));
  return checks;
}

/** The API server as serve reaches it: KUBECONFIG when set, else the pod's service account. */
async function reachApiServer(env: Env): Promise<{ check: CheckResult; kc?: KubeConfig }> {
  const id = `${PREFIX}.reachable`;
  if (!env.KUBECONFIG && !env.KUBERNETES_SERVICE_HOST)
    return {
      check: unreachable(
        id,
        'Not in a pod (KUBERNETES_SERVICE_HOST is not set) and no KUBECONFIG: there is no API server to check the Lease and the RBAC against.',
        `Run it inside a serve pod: ${IN_POD_COMMAND}.`,
      ),
    };
  try {
    const kc = new KubeConfig();
    if (env.KUBECONFIG) kc.loadFromFile(env.KUBECONFIG);
    else kc.loadFromCluster();
    const version = await withTimeout(kc.makeApiClient(VersionApi).getCode(), 'GET /version');
    return {
      check: ok(id, `The API server answers the pod: Kubernetes ${version.gitVersion}.`),
      kc,
    };
  } catch (error) {
    return {
      check: unreachable(
        id,
        `Cannot reach the API server from here: ${describeError(error)}. serve's informers and its Lease need it.`,
        'Check the pod’s network path to the API server (a NetworkPolicy on egress, the kubernetes Service) and its service account token (automountServiceAccountToken).',
      ),
    };
  }
}

function ago(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

function timeOf(value: Date | string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const ms = value instanceof Date ? value.getTime() : Date.parse(value);
  return Number.isNaN(ms) ? undefined : ms;
}

/**
 * The Lease's state, judged by this pod's clock: a holder, and a renewTime younger than the
 * Lease's own leaseDurationSeconds (client-go's followers wait that long before taking it over).
 */
function judgeLease(
  lease: V1Lease,
  settings: Pick<ServeSettings, 'lease'>,
  now: number,
): CheckResult {
  const id = `${PREFIX}.lease`;
  const where = `${settings.lease.namespace}/${settings.lease.name}`;
  const spec = lease.spec ?? {};
  const renewed = timeOf(spec.renewTime);
  const durationMs = (spec.leaseDurationSeconds ?? settings.lease.durationMs / 1000) * 1000;
  const transitions = `${spec.leaseTransitions ?? 0} change(s) of leader so far`;
  const self = (holder: string) => (holder === settings.lease.identity ? ' (this replica)' : '');
  if (!spec.holderIdentity)
    return finding(
      id,
      `The Lease ${where} has no holder${renewed === undefined ? '' : ` (last written ${ago(now - renewed)} ago)`}: the last leader released it and no replica has taken it since. While nobody holds it, nobody acts: no remediation, no sweep.`,
      'A replica takes a free Lease within RETRY_PERIOD_SECONDS once its store is open: see in-cluster.readyz and in-cluster.store on each replica (kubectl -n runner-medic get pods; kubectl logs), and in-cluster.rbac for update on leases.',
    );
  const holder = spec.holderIdentity;
  if (renewed === undefined || now - renewed >= durationMs)
    return finding(
      id,
      `${holder}${self(holder)} holds the Lease ${where} but last renewed it ${renewed === undefined ? 'never' : `${ago(now - renewed)} ago`}, longer than its ${durationMs / 1000} s duration: that replica is gone or cannot reach the API server, and nobody acts until another replica takes the Lease over.`,
      `kubectl -n ${settings.lease.namespace} get pod ${holder}: if it is gone and the Lease stays stale, the other replicas cannot take it (see their in-cluster.readyz and in-cluster.store, and in-cluster.rbac for update on leases). A clock skew between this node and the leader's shows here too.`,
    );
  return ok(
    id,
    `${holder}${self(holder)} leads: it renewed the Lease ${where} ${ago(Math.max(0, now - renewed))} ago, within its ${durationMs / 1000} s duration (${transitions}).`,
  );
}

async function checkLease(kc: KubeConfig, settings: ServeSettings, now: number) {
  const id = `${PREFIX}.lease`;
  const { name, namespace } = settings.lease;
  try {
    const lease = await withTimeout(
      kc.makeApiClient(CoordinationV1Api).readNamespacedLease({ name, namespace }),
      `GET Lease ${namespace}/${name}`,
    );
    return judgeLease(lease, settings, now);
  } catch (error) {
    const status = kubeStatus(error);
    if (status === 404)
      return finding(
        id,
        `There is no Lease ${namespace}/${name}: no replica has ever taken the lead, so nothing acts (no remediation, no sweep).`,
        'A replica creates the Lease once its store is open and it may: see in-cluster.readyz, in-cluster.store and in-cluster.rbac (create on leases), and LEASE_NAME/POD_NAMESPACE in deployment.yaml.',
      );
    if (status === 401 || status === 403)
      return failed(
        id,
        `Cannot read the Lease ${namespace}/${name}: ${describeError(error)}.`,
        'Grant get on the Lease (infra/kubernetes/in-cluster/rbac-lease.yaml): see in-cluster.rbac.',
      );
    return unreachable(
      id,
      `The API server did not answer for the Lease: ${describeError(error)}.`,
      'Run the doctor again; if it persists, check the API server’s health.',
    );
  }
}

interface ReadyzBody {
  status?: string;
  reasons?: string[];
  replica?: string;
  leading?: boolean;
  holder?: string | null;
}

/** What to do about each reason serve gives for not being ready (functions/serve/probe-server.ts). */
function readyzFixes(reasons: readonly string[]): string {
  const fixes = new Set<string>();
  for (const reason of reasons) {
    if (reason.startsWith('store not open'))
      fixes.add('The store does not open: see in-cluster.store.');
    else if (/^informer .* failing/.test(reason))
      fixes.add(
        'An informer failing with 403 (forbidden) lacks a grant: see in-cluster.rbac; any other failure is the API server’s (KubeApiUnreachable on /metrics).',
      );
    else if (/^informer .* not synced|^informers not started/.test(reason))
      fixes.add('The informers list everything once at start: run the doctor again in a minute.');
    else if (reason === 'shutting down')
      fixes.add('The replica is draining after SIGTERM; its successor takes over.');
  }
  return [...fixes].join(' ') || 'Read the replica’s log lines: kubectl logs.';
}

/** The local replica's /readyz on PROBE_PORT: its informers' sync and its store, in its words. */
async function checkReadyz(settings: ServeSettings): Promise<CheckResult> {
  const id = `${PREFIX}.readyz`;
  const host =
    settings.host === '0.0.0.0' ? '127.0.0.1' : settings.host === '::' ? '[::1]' : settings.host;
  const url = `http://${host}:${settings.probePort}/readyz`;
  let response: Response;
  try {
    response = await fetch(url, { signal: AbortSignal.timeout(READYZ_TIMEOUT_MS) });
  } catch (error) {
    // fetch's TypeError carries the socket's error as its cause (undici).
    const cause = (error as { cause?: { code?: unknown; message?: unknown } } | null)?.cause;
    const refused = cause?.code === 'ECONNREFUSED';
    const detail = typeof cause?.message === 'string' ? cause.message : describeError(error);
    return finding(
      id,
      refused
        ? `serve is not running here: nothing listens on ${url}.`
        : `serve does not answer on ${url}: ${detail}.`,
      refused
        ? `Run the doctor inside a serve pod (${IN_POD_COMMAND}); in one, see why serve stopped: kubectl logs --previous.`
        : 'The process is stuck or PROBE_PORT is not serve’s: the liveness probe restarts a stuck one; read kubectl logs.',
    );
  }
  let body: ReadyzBody;
  try {
    body = (await response.json()) as ReadyzBody;
  } catch {
    body = {};
  }
  if (response.status !== 200 && response.status !== 503)
    return finding(
      id,
      `${url} answered HTTP ${response.status}, which serve's probes never do.`,
      'Check PROBE_PORT: it must be the probes port of deployment.yaml (9090).',
    );
  const replica = body.replica ?? 'this replica';
  const role = body.leading
    ? 'it leads'
    : body.holder
      ? `it follows ${body.holder}`
      : 'nobody leads';
  if (response.status === 200)
    return ok(id, `${replica} is ready: every informer has synced and the store is open; ${role}.`);
  const reasons = body.reasons ?? [];
  return finding(
    id,
    `${replica} is not ready (${url} answers 503): ${reasons.join('; ') || 'no reason given'}. The Service sends it no webhook while it is not ready${reasons.some((r) => r.startsWith('store not open')) ? ', and without its store it never takes the Lease' : ''}.`,
    readyzFixes(reasons),
  );
}

function errorCode(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : describeError(error);
}

/** SQLite's file, opened read-only as it is: it opens, in WAL mode, with serve's tables. */
function databaseProblem(path: string): string | undefined {
  if (!existsSync(path))
    return `there is no database at ${path} yet: serve creates it when it starts, so no replica has opened its store here.`;
  let db: DatabaseSync | undefined;
  try {
    db = new DatabaseSync(path, { readOnly: true });
    const mode = db.prepare('PRAGMA journal_mode').get()?.journal_mode;
    const tables = db
      .prepare("SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name = 'facts'")
      .get()?.n;
    if (mode !== 'wal') return `${path} is not in WAL mode (journal_mode ${String(mode)}).`;
    if (tables !== 1) return `${path} has no facts table: it is not runner-medic's store.`;
    return undefined;
  } catch (error) {
    return `${path} does not open: ${describeError(error)}.`;
  } finally {
    db?.close();
  }
}

/** The SQLite store's folder exists and is writable, the database opens, and space is left. */
function checkStoreVolume(settings: ServeSettings, minFreeBytes: number): CheckResult {
  const id = `${PREFIX}.store`;
  if (settings.store === 'dynamodb')
    return ok(id, 'STORE=dynamodb: serve keeps no SQLite file, so there is no volume to check.');
  const path = resolve(settings.sqlitePath);
  const folder = dirname(path);
  const problems: { why: string; what: string }[] = [];
  const mount = `Mount the PVC at ${folder} (deployment.yaml: the store volume, pvc.yaml) and let the pod's fsGroup own it (securityContext.fsGroup).`;
  let isFolder = false;
  try {
    isFolder = statSync(folder).isDirectory();
    if (!isFolder) problems.push({ why: `${folder} is not a folder.`, what: mount });
  } catch (error) {
    problems.push({
      why: `the folder ${folder} does not exist (${errorCode(error)}): the volume is not mounted there.`,
      what: mount,
    });
  }
  let free: number | undefined;
  if (isFolder) {
    try {
      accessSync(folder, constants.W_OK);
    } catch (error) {
      problems.push({
        why: `${folder} is not writable by this process (${errorCode(error)}${typeof process.getuid === 'function' ? `, uid ${process.getuid()}` : ''}): SQLite cannot write the database, its -wal and its -shm there, so the store does not open and the replica never acts.`,
        what: mount,
      });
    }
    const database = databaseProblem(path);
    if (database)
      problems.push({
        why: database,
        what: 'Read the replica’s log line "store cannot be opened" (kubectl logs); a file from another program or a newer runner-medic must be moved away.',
      });
    const stats = statfsSync(folder);
    free = stats.bavail * stats.bsize;
    if (free < minFreeBytes)
      problems.push({
        why: `only ${(free / MIB).toFixed(0)} MiB is free on the volume at ${folder} (the floor is ${(minFreeBytes / MIB).toFixed(0)} MiB): when it fills, every store write fails and serve stops acting.`,
        what: 'Grow the PVC (pvc.yaml, storage) or free the volume; the store purges expired rows by itself.',
      });
  }
  if (problems.length > 0)
    return finding(
      id,
      `The store's volume: ${problems.map((p) => p.why).join(' ')}`,
      [...new Set(problems.map((p) => p.what))].join(' '),
    );
  return ok(
    id,
    `${folder} is writable, ${path} opens (WAL), and ${((free ?? 0) / MIB).toFixed(0)} MiB is free.`,
  );
}

/** Each call serve makes, asked of the API server with the pod's own credentials. */
async function checkServeRbac(kc: KubeConfig, settings: ServeSettings): Promise<CheckResult> {
  const id = `${PREFIX}.rbac`;
  const attributes = serveAccessToReview(settings);
  let denied: AccessAttributes[];
  try {
    denied = await deniedAccess(kc, attributes);
  } catch (error) {
    return failed(
      id,
      `Cannot ask the API server what this pod may do (SelfSubjectAccessReview): ${describeError(error)}.`,
      'Check that the service account may create selfsubjectaccessreviews (every authenticated user may, by default).',
    );
  }
  return denied.length > 0
    ? finding(
        id,
        `The pod's service account is denied ${denied.length} of the ${attributes.length} calls serve makes: ${listed(denied.map(describeAccess), 8)}. Informers then fail (not ready), the Lease is never taken, or a remediation fails with 403.`,
        'Apply the in-cluster manifests: kubectl apply -k infra/kubernetes/in-cluster; for runner namespaces other than arc-runners, an overlay that patches rbac-runner-namespace.yaml into each (docs/in-cluster.md).',
      )
    : ok(
        id,
        `Every call serve makes is allowed (${attributes.length} SelfSubjectAccessReviews: the engine's in each runner namespace, Events, nodes and the Lease).`,
      );
}
