/**
 * The container image (Dockerfile) with no container runtime: what the Dockerfile states is
 * checked against the in-cluster manifests (infra/kubernetes/in-cluster/) and serve's settings
 * (functions/serve/serve-settings.ts), and its entrypoint runs as a process.
 * - Static: Node 24 in every stage; a numeric non-root USER that is the Deployment's runAsUser;
 *   ENTRYPOINT and CMD in exec form, which the Deployment keeps (no `command`) and whose CMD its
 *   `args` repeat; EXPOSE, the container ports, the Service's target ports and serve's default
 *   ports agree; the probes' paths are on the probe port; SQLITE_PATH is serve's default and on the
 *   PVC's mount; /tmp is mounted; the Secret keys the Deployment reads are the Secret's.
 * - As a process: the build stage's esbuild command (its own arguments, its output sent to a
 *   temporary image root); the runtime stage's COPY lines assembled in that root; then the
 *   ENTRYPOINT and the Deployment's args, run with the image's ENV and the Deployment's env, as the
 *   image's USER when this test runs as root, against a Kubernetes twin that holds the manifests'
 *   objects and serves the pod's ServiceAccount (a kubeconfig in place of the mounted token: the
 *   twin mints none). It starts, answers /healthz, becomes ready under the manifests' RBAC, takes
 *   the Lease, writes only to the volume and /tmp, and exits 0 on SIGTERM having released the
 *   Lease.
 */
import { execFile, spawn } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, posix, resolve } from 'node:path';
import { promisify } from 'node:util';
import { parse, parseAllDocuments } from 'yaml';
import { loadServeSettings } from '../../functions/serve/serve-settings.js';
import { SimClock } from '../../sim/clock.js';
import { GitHubSim } from '../../sim/github/github-sim.js';
import { SimCluster } from '../../sim/kube/cluster.js';
import { assertReachableByOthers } from '../helpers/unprivileged-child.js';

const IN_CLUSTER = 'infra/kubernetes/in-cluster';
const TIMEOUT = 240_000;
/** How many times a wait looks at its condition, 250 ms apart, before it fails. */
const LOOKS = 240;

// ---- the Dockerfile, read as the builder reads it ----------------------------------------------

interface Instruction {
  keyword: string;
  args: string;
}

interface Stage {
  from: string;
  name?: string;
  instructions: Instruction[];
}

/** Stages of a Dockerfile: comments dropped, `\` continuations joined, split at each FROM. */
function readDockerfile(text: string): Stage[] {
  const lines = text.replace(/\\\n/g, ' ').split('\n');
  const stages: Stage[] = [];
  for (const line of lines.map((l) => l.trim())) {
    if (line === '' || line.startsWith('#')) continue;
    const [, keyword = '', args = ''] = /^(\S+)\s*(.*)$/.exec(line) ?? [];
    if (keyword.toUpperCase() === 'FROM') {
      const [from = '', , name] = args.split(/\s+/);
      stages.push({ from, name, instructions: [] });
    } else stages.at(-1)?.instructions.push({ keyword: keyword.toUpperCase(), args });
  }
  return stages;
}

const all = (stage: Stage, keyword: string) =>
  stage.instructions.filter((i) => i.keyword === keyword);
const last = (stage: Stage, keyword: string) => all(stage, keyword).at(-1);

/** An exec-form (JSON array) ENTRYPOINT or CMD; the shell form would not receive SIGTERM. */
function execForm(instruction: Instruction | undefined): string[] {
  const value = JSON.parse(instruction?.args ?? 'null') as unknown;
  if (!Array.isArray(value) || !value.every((v) => typeof v === 'string'))
    throw new Error(`not in exec form: ${instruction?.args}`);
  return value as string[];
}

const stages = readDockerfile(readFileSync('Dockerfile', 'utf8'));
const runtime = stages.at(-1) as Stage;
const workdir = last(runtime, 'WORKDIR')?.args ?? '/';
const entrypoint = execForm(last(runtime, 'ENTRYPOINT'));
const cmd = execForm(last(runtime, 'CMD'));
const [uid, gid] = (last(runtime, 'USER')?.args ?? '').split(':').map(Number);

// ---- the manifests -------------------------------------------------------------------------------

interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: {
    fieldRef?: { fieldPath: string };
    secretKeyRef?: { name: string; key: string };
  };
}

interface Container {
  image: string;
  command?: string[];
  args?: string[];
  ports: { name: string; containerPort: number }[];
  env: EnvVar[];
  securityContext: { readOnlyRootFilesystem?: boolean };
  livenessProbe: { httpGet: { path: string; port: string } };
  readinessProbe: { httpGet: { path: string; port: string } };
  startupProbe: { httpGet: { path: string; port: string } };
  volumeMounts: { name: string; mountPath: string }[];
}

interface PodSpec {
  securityContext: { runAsNonRoot?: boolean; runAsUser?: number; runAsGroup?: number };
  containers: Container[];
  volumes: { name: string; persistentVolumeClaim?: { claimName: string }; emptyDir?: object }[];
}

const manifest = <T>(file: string) => parse(readFileSync(join(IN_CLUSTER, file), 'utf8')) as T;
const deployment = manifest<{ spec: { template: { spec: PodSpec } } }>('deployment.yaml');
const pod = deployment.spec.template.spec;
const container = pod.containers[0] as Container;
const pvc = manifest<{ metadata: { name: string } }>('pvc.yaml');
const secret = manifest<{ metadata: { name: string }; stringData: Record<string, string> }>(
  'secret.yaml',
);
const services = parseAllDocuments(readFileSync(join(IN_CLUSTER, 'service.yaml'), 'utf8')).map(
  (d) => d.toJS() as { spec: { ports: { targetPort: string }[] } },
);
const envValue = (name: string) => container.env.find((e) => e.name === name)?.value;
/** serve's settings as the Deployment's plain values give them (the rest defaulted). */
const served = loadServeSettings(
  Object.fromEntries(
    container.env.filter((e) => e.value !== undefined).map((e) => [e.name, e.value]),
  ),
);
const mountOf = (path: string) =>
  container.volumeMounts
    .filter((m) => path === m.mountPath || path.startsWith(`${m.mountPath}/`))
    .sort((a, b) => b.mountPath.length - a.mountPath.length)[0];

describe('the Dockerfile agrees with the manifests and serve', () => {
  test('every stage is on the Node 24 image (package.json engines, the node dev dependency)', () => {
    const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as {
      engines: { node: string };
      devDependencies: { node: string };
    };
    expect(pkg.engines.node).toBe('>=24');
    expect(pkg.devDependencies.node).toMatch(/^\^24\./);
    expect(stages.length).toBeGreaterThan(0);
    for (const stage of stages) expect(stage.from).toMatch(/^node:24(-[a-z0-9-]+)?$/);
  });

  test("the manifests' image is this Dockerfile's, tagged with package.json's version", () => {
    const { version } = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };
    const { images } = manifest<{ images: { name: string; newTag?: string }[] }>(
      'kustomization.yaml',
    );
    expect(images.find((i) => i.name === container.image)?.newTag).toBe(version);
  });

  test('it runs as a numeric non-root user, the one the Deployment runs as', () => {
    expect(uid).toBeGreaterThan(0);
    expect(gid).toBeGreaterThan(0);
    expect(pod.securityContext).toMatchObject({
      runAsNonRoot: true,
      runAsUser: uid,
      runAsGroup: gid,
    });
    expect(container.securityContext.readOnlyRootFilesystem).toBe(true);
  });

  test('the Deployment keeps the image ENTRYPOINT (node, the bundled CLI) and runs serve', () => {
    expect(entrypoint).toEqual(['node', posix.join(workdir, 'functions/cli/entry.mjs')]);
    expect(cmd).toEqual(['serve']);
    expect(container.command).toBeUndefined();
    expect(container.args).toEqual(cmd);
  });

  test("ports: EXPOSE, the container's ports, the Services' targets and serve's defaults", () => {
    const exposed = all(runtime, 'EXPOSE').flatMap((i) => i.args.split(/\s+/).map(Number));
    const port = (name: string) => container.ports.find((p) => p.name === name)?.containerPort;
    // The Deployment sets neither PORT nor PROBE_PORT: serve's defaults are the ports.
    expect(envValue('PORT')).toBeUndefined();
    expect(envValue('PROBE_PORT')).toBeUndefined();
    expect(port('webhook')).toBe(served.port);
    expect(port('probes')).toBe(served.probePort);
    expect(exposed.sort()).toEqual([served.port, served.probePort].sort());
    const names = container.ports.map((p) => p.name);
    for (const service of services)
      for (const p of service.spec.ports) expect(names).toContain(p.targetPort);
  });

  test('probes ask the probe port for /healthz and /readyz', () => {
    expect(container.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'probes' });
    expect(container.startupProbe.httpGet).toEqual({ path: '/healthz', port: 'probes' });
    expect(container.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'probes' });
  });

  test('SQLite lives on the PVC mount, /tmp is mounted, the Secret holds the keys read', () => {
    expect(envValue('STORE') ?? 'sqlite').toBe('sqlite');
    expect(envValue('SQLITE_PATH')).toBe(served.sqlitePath);
    const store = mountOf(served.sqlitePath);
    expect(store?.mountPath).toBe(posix.dirname(served.sqlitePath));
    const volume = (name: string | undefined) => pod.volumes.find((v) => v.name === name);
    expect(volume(store?.name)?.persistentVolumeClaim?.claimName).toBe(pvc.metadata.name);
    expect(volume(mountOf('/tmp')?.name)?.emptyDir).toBeDefined();
    for (const ref of container.env.flatMap((e) => e.valueFrom?.secretKeyRef ?? [])) {
      expect(ref.name).toBe(secret.metadata.name);
      expect(Object.keys(secret.stringData)).toContain(ref.key);
    }
  });

  test('.dockerignore keeps local builds and secrets out, and nothing the Dockerfile copies', () => {
    const ignored = readFileSync('.dockerignore', 'utf8')
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l && !l.startsWith('#'));
    expect(ignored).toEqual(expect.arrayContaining(['.git', 'node_modules', '.env']));
    const copied = stages
      .flatMap((s) => all(s, 'COPY'))
      .filter((i) => !i.args.startsWith('--from='))
      .flatMap((i) => i.args.split(/\s+/).slice(0, -1));
    for (const source of copied) {
      expect(existsSync(source)).toBe(true);
      expect(
        ignored.filter((pattern) => source === pattern || source.startsWith(`${pattern}/`)),
      ).toEqual([]);
    }
  });
});

// ---- the entrypoint as a process ---------------------------------------------------------------

/** The build stage's esbuild command, its output sent to `outfile`. */
function buildCommand(outfile: string): { program: string; args: string[]; output: string } {
  const build = stages.flatMap((s) => all(s, 'RUN')).find((i) => /^\S*esbuild /.test(i.args));
  if (!build) throw new Error('the Dockerfile builds no bundle with esbuild');
  const [program = '', ...words] = build.args.split(/\s+/);
  const output = words.find((w) => w.startsWith('--outfile='))?.slice('--outfile='.length);
  if (!output) throw new Error('the esbuild command names no --outfile');
  return {
    program,
    args: words.map((w) => (w.startsWith('--outfile=') ? `--outfile=${outfile}` : w)),
    output,
  };
}

/**
 * The runtime stage's file system under `root`, from its COPY lines: files of the build context
 * copied, the build stage's bundle, and the deps stage's node_modules (the repository's, linked:
 * the same packages plus the dev ones).
 */
function assembleImage(root: string, bundle: string, bundleInBuildStage: string): void {
  const app = (path: string) => join(root, posix.resolve(workdir, path));
  for (const copy of all(runtime, 'COPY')) {
    const words = copy.args.split(/\s+/);
    const from = /^--from=(\S+)$/.exec(words[0] as string)?.[1];
    const [dest, ...sources] = (from ? words.slice(1) : words).reverse();
    const target = app(dest as string);
    for (const source of sources.reverse()) {
      let origin: string;
      if (!from) origin = resolve(source);
      else if (source === posix.join('/app', bundleInBuildStage)) origin = bundle;
      else if (source.endsWith('/node_modules')) {
        mkdirSync(dirname(target), { recursive: true });
        symlinkSync(resolve('node_modules'), target.replace(/\/$/, ''));
        continue;
      } else throw new Error(`COPY --from=${from} ${source}: the test does not know that artefact`);
      const to = dest?.endsWith('/') ? join(target, basename(source)) : target;
      mkdirSync(dirname(to), { recursive: true });
      copyFileSync(origin, to);
    }
  }
}

/** Every path under `dir` (links not followed) with its size and mtime. */
function snapshot(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: false })
    .map(String)
    .filter((p) => !p.startsWith('node_modules/') && p !== 'node_modules')
    .map((p) => {
      const s = statSync(join(dir, p));
      return `${p} ${s.size} ${s.mtimeMs}`;
    })
    .sort();
}

test(
  'the entrypoint with the Deployment env: starts, is healthy and ready, leads, exits 0 on SIGTERM',
  async () => {
    const root = mkdtempSync(join(tmpdir(), 'container-'));
    chmodSync(root, 0o755);
    const clock = new SimClock(Date.now());
    const cluster = new SimCluster({ name: 'container', clock, rbac: true });
    const github = new GitHubSim({ clock, seed: 22 });
    let child: ReturnType<typeof spawn> | undefined;
    try {
      // The image: the build command's bundle, laid out by the runtime stage's COPY lines.
      const built = join(root, 'build', 'entry.mjs');
      // From the repository, as from the build stage's WORKDIR with its npm ci.
      const build = buildCommand(built);
      await promisify(execFile)(build.program, build.args, { encoding: 'utf8' });
      assembleImage(join(root, 'image'), built, build.output);
      const image = join(root, 'image');
      const inImage = (path: string) => join(image, path);
      // The pod's writable mounts: the store's volume and /tmp, owned by the pod's user.
      const mounts = Object.fromEntries(
        container.volumeMounts.map((m) => [m.mountPath, join(root, 'mounts', m.mountPath)]),
      );
      const inPod = (path: string) => {
        const mount = mountOf(path);
        return mount
          ? join(mounts[mount.mountPath] as string, posix.relative(mount.mountPath, path))
          : inImage(path);
      };

      // The cluster: ARC's namespace and the manifests' objects, and the pod's ServiceAccount.
      cluster.createNamespace('arc-runners');
      const kustomization = manifest<{ resources: string[] }>('kustomization.yaml');
      for (const file of kustomization.resources)
        cluster.applyManifestFile(join(IN_CLUSTER, file), { actor: 'admin' });
      await cluster.start();
      const serviceAccount = 'system:serviceaccount:runner-medic:runner-medic';
      cluster.apiServer.addActor(serviceAccount, [
        'system:serviceaccounts',
        'system:serviceaccounts:runner-medic',
      ]);
      const kubeconfig = join(root, 'kubeconfig');
      writeFileSync(kubeconfig, cluster.apiServer.kubeconfig(serviceAccount), { mode: 0o600 });

      const asImageUser = process.getuid?.() === 0;
      if (asImageUser) assertReachableByOthers(process.cwd());
      for (const dir of Object.values(mounts)) {
        mkdirSync(dir, { recursive: true });
        if (asImageUser) chownSync(dir, uid as number, gid as number);
      }
      if (asImageUser) chownSync(kubeconfig, uid as number, gid as number);

      // The container's environment: the image's ENV, then the Deployment's, then the test's.
      // The GitHub App of the Secret: the GitHub twin's, so that the leader's first sweep ends.
      await github.start();
      github.createOrg('acme');
      github.createInstallation('acme');
      const secretValues: Record<string, string> = {
        'webhook-secret': 'container-test-secret',
        'github-app.json': JSON.stringify({
          appId: github.app.appId,
          privateKey: github.app.privateKey,
        }),
      };
      const podName = 'runner-medic-5f7c9d8b6-x2k4q';
      const env: Record<string, string> = {
        PATH: `${dirname(resolve('node_modules/.bin/node'))}:/usr/bin:/bin`,
        // Like the node image's home for uid 1000, a directory on the read-only root: nothing may
        // be written there.
        HOME: inImage(workdir),
        TMPDIR: mounts['/tmp'] as string,
      };
      for (const e of all(runtime, 'ENV')) {
        const [name = '', value = ''] = e.args.split('=');
        env[name] = value;
      }
      for (const e of container.env) {
        const from = e.valueFrom;
        if (e.value !== undefined) env[e.name] = e.value;
        else if (from?.fieldRef?.fieldPath === 'metadata.name') env[e.name] = podName;
        else if (from?.fieldRef?.fieldPath === 'metadata.namespace') env[e.name] = 'runner-medic';
        else if (from?.secretKeyRef) env[e.name] = secretValues[from.secretKeyRef.key] as string;
        else throw new Error(`the test cannot fill in ${e.name}`);
      }
      env.SQLITE_PATH = inPod(env.SQLITE_PATH as string);
      Object.assign(env, {
        KUBECONFIG: kubeconfig,
        // Ports of its own on loopback (the ports the manifests name are checked above).
        HOST: '127.0.0.1',
        PORT: '0',
        PROBE_PORT: '0',
        GITHUB_API_URL: github.baseUrl,
      });

      mkdirSync(env.HOME as string, { recursive: true });
      const before = snapshot(image);
      const [program, ...programArgs] = [...entrypoint, ...(container.args ?? cmd)];
      child = spawn(
        program === 'node' ? resolve('node_modules/.bin/node') : (program as string),
        programArgs.map((a) => (a.startsWith('/') ? inImage(a) : a)),
        {
          cwd: inImage(workdir),
          env,
          stdio: ['ignore', 'pipe', 'pipe'],
          ...(asImageUser ? { uid, gid } : {}),
        },
      );
      let stdout = '';
      let stderr = '';
      child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) =>
        child?.on('exit', (code, signal) => done({ code, signal })),
      );
      const until = async (what: string, condition: () => boolean | Promise<boolean>) => {
        for (let look = 0; look < LOOKS; look++) {
          if (await condition()) return;
          await new Promise((r) => setTimeout(r, 250));
        }
        throw new Error(`${what}: not after ${LOOKS} looks\n${stderr}\n${stdout}`);
      };
      const probe = () => /GET {2}(http:\/\/127\.0\.0\.1:\d+)\/healthz/.exec(stderr)?.[1];
      await until('serve prints its banner', () => probe() !== undefined);
      // The Deployment's probes, on serve's probe port.
      const liveness = `${probe()}${container.livenessProbe.httpGet.path}`;
      const readiness = `${probe()}${container.readinessProbe.httpGet.path}`;
      expect((await fetch(liveness)).status).toBe(200);
      expect((await fetch(`${probe()}${container.startupProbe.httpGet.path}`)).status).toBe(200);
      await until('serve is ready', async () => (await fetch(readiness)).status === 200);
      await until('serve takes the Lease', () => stdout.includes('took the Lease: acting'));
      const lease = () =>
        (
          cluster.api.tryGet('leases', 'runner-medic', 'runner-medic') as
            { spec?: { holderIdentity?: string | null } } | undefined
        )?.spec;
      expect(lease()?.holderIdentity).toBe(podName);
      // Its requests were its ServiceAccount's, and RBAC refused none of them.
      const requests = cluster.audit.requests.filter((r) => r.by === serviceAccount);
      expect(requests.length).toBeGreaterThan(0);
      expect(requests.filter((r) => r.code === 403)).toEqual([]);

      child.kill('SIGTERM');
      expect(await exited).toEqual({ code: 0, signal: null });
      expect(stderr).toContain('runner-medic serve: stopped');
      expect(lease()?.holderIdentity ?? null).toBeNull();
      // It wrote its store on the volume, and nothing into the image.
      expect(existsSync(env.SQLITE_PATH as string)).toBe(true);
      expect(snapshot(image)).toEqual(before);
    } finally {
      child?.kill('SIGKILL');
      await cluster.stop();
      await github.stop();
      rmSync(root, { recursive: true, force: true });
    }
  },
  TIMEOUT,
);
