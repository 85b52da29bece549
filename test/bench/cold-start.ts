/**
 * The `coldStart` section of `npm run bench`: packages the functions as deployed
 * (`npx serverless package`), then for each function imports the bundled handler from its zip in
 * a fresh Node process, paired run by run with a floor process that imports only the AWS SDK
 * clients the bundle imports (the Lambda runtime provides them, so they are never bundled).
 * Also each zip's bytes and the five largest packages of each bundle, from an esbuild metafile
 * of the same build (checked byte for byte against the bundle in the zip).
 */
import { spawnSync } from 'node:child_process';
import {
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { inflateRawSync } from 'node:zlib';
import { build, type BuildOptions, type Metafile } from 'esbuild';
import type { BenchSection } from './section.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** The issue's targets (#21): zip bytes, and the import time over the floor's. */
const TARGETS: Record<string, { zipBytes: number; ratio: number }> = {
  'github-webhook': { zipBytes: 150 * 1024, ratio: 1.3 },
  remediate: { zipBytes: 700 * 1024, ratio: 1.5 },
  reconcile: { zipBytes: 700 * 1024, ratio: 1.5 },
};

interface ServerlessState {
  service: {
    custom: { esbuild: EsbuildSettings };
    provider: { environment?: Record<string, unknown> };
    functions: Record<string, { handler: string; environment?: Record<string, unknown> }>;
  };
}

/** serverless-esbuild's settings as serverless.yml gives them (custom.esbuild). */
type EsbuildSettings = BuildOptions & { outputFileExtension: string; exclude?: string[] };

/** serverless-esbuild's own keys of custom.esbuild; the rest goes to esbuild as it is. */
const PLUGIN_KEYS = [
  'concurrency',
  'zipConcurrency',
  'exclude',
  'nativeZip',
  'packager',
  'packagePath',
  'watch',
  'keepOutputDirectory',
  'packagerOptions',
  'installExtraArgs',
  'outputFileExtension',
  'outputBuildFolder',
  'outputWorkFolder',
  'nodeExternals',
  'skipBuild',
  'skipRebuild',
  'skipBuildExcludeFns',
  'stripEntryResolveExtensions',
  'disposeContext',
];

/** The files of a zip (stored or deflated), by name; its folder entries left out. */
function unzip(path: string): Map<string, Buffer> {
  const zip = readFileSync(path);
  const end = zip.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  const count = zip.readUInt16LE(end + 10);
  let at = zip.readUInt32LE(end + 16);
  const entries = new Map<string, Buffer>();
  for (let n = 0; n < count; n++) {
    const method = zip.readUInt16LE(at + 10);
    const size = zip.readUInt32LE(at + 20);
    const nameLength = zip.readUInt16LE(at + 28);
    const extra = zip.readUInt16LE(at + 30) + zip.readUInt16LE(at + 32);
    const name = zip.toString('utf8', at + 46, at + 46 + nameLength);
    const local = zip.readUInt32LE(at + 42);
    const start = local + 30 + zip.readUInt16LE(local + 26) + zip.readUInt16LE(local + 28);
    const data = zip.subarray(start, start + size);
    if (!name.endsWith('/'))
      entries.set(name, method === 0 ? Buffer.from(data) : inflateRawSync(data));
    at += 46 + nameLength + extra;
  }
  return entries;
}

/** Bytes of the bundle by package (the last node_modules/<name> of each input's path). */
function packageBytes(metafile: Metafile): { own: number; packages: [string, number][] } {
  const [output] = Object.values(metafile.outputs);
  const byPackage = new Map<string, number>();
  let own = 0;
  for (const [path, input] of Object.entries(output?.inputs ?? {})) {
    const name = path.match(/.*node_modules\/((?:@[^/]+\/)?[^/]+)/)?.[1];
    if (name) byPackage.set(name, (byPackage.get(name) ?? 0) + input.bytesInOutput);
    else own += input.bytesInOutput;
  }
  return { own, packages: [...byPackage].sort((a, b) => b[1] - a[1]) };
}

interface ImportTime {
  wallMs: number;
  cpuMs: number;
}

/** Imports these modules at once in a fresh Node process and says how long it took. */
const IMPORT_SCRIPT = `
const c0 = process.cpuUsage(); const t0 = performance.now();
await Promise.all(process.argv.slice(1).map((m) => import(m)));
const c = process.cpuUsage(c0);
process.stdout.write(JSON.stringify({ wallMs: performance.now() - t0, cpuMs: (c.user + c.system) / 1000 }));
`;

function importTime(modules: string[], cwd: string, env: NodeJS.ProcessEnv): ImportTime {
  const child = spawnSync(
    process.execPath,
    ['--input-type=module', '-e', IMPORT_SCRIPT, ...modules],
    { cwd, env, encoding: 'utf8' },
  );
  if (child.status !== 0)
    throw new Error(`importing ${modules.join(', ')} failed: ${child.stderr}`);
  return JSON.parse(child.stdout) as ImportTime;
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
};

/** Handler and floor imports, alternating which goes first, after one pair to warm the disk cache. */
function pairedRuns(runs: number, handler: () => ImportTime, floor: () => ImportTime) {
  handler();
  floor();
  const pairs: { handler: ImportTime; floor: ImportTime }[] = [];
  for (let i = 0; i < runs; i++) {
    if (i % 2 === 0) {
      const h = handler();
      pairs.push({ handler: h, floor: floor() });
    } else {
      const f = floor();
      pairs.push({ handler: handler(), floor: f });
    }
  }
  const of = (side: 'handler' | 'floor', key: keyof ImportTime) =>
    median(pairs.map((p) => p[side][key]));
  const ratios = (key: keyof ImportTime) =>
    pairs.map((p) => p.handler[key] / p.floor[key]).sort((a, b) => a - b);
  /** The middle half of the paired ratios: how noisy the machine was. */
  const quartiles = (key: keyof ImportTime): [number, number] => {
    const sorted = ratios(key);
    const at = (q: number) => sorted[Math.round(q * (sorted.length - 1))] as number;
    return [at(0.25), at(0.75)];
  };
  return {
    handler: { wallMs: of('handler', 'wallMs'), cpuMs: of('handler', 'cpuMs') },
    floor: { wallMs: of('floor', 'wallMs'), cpuMs: of('floor', 'cpuMs') },
    ratio: { wall: median(ratios('wallMs')), cpu: median(ratios('cpuMs')) },
    ratioQuartiles: { wall: quartiles('wallMs'), cpu: quartiles('cpuMs') },
  };
}

/** The environment a function's handler starts with: the stack's plain values, a region. */
function functionEnvironment(state: ServerlessState, name: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, AWS_REGION: 'eu-west-1' };
  const given = {
    ...state.service.provider.environment,
    ...state.service.functions[name]?.environment,
  };
  for (const [key, value] of Object.entries(given)) if (typeof value === 'string') env[key] = value;
  return env;
}

function packageFunctions(into: string): ServerlessState {
  const packaged = spawnSync('npx', ['serverless', 'package', '--package', into], {
    cwd: root,
    encoding: 'utf8',
  });
  if (packaged.status !== 0)
    throw new Error(`serverless package failed:\n${packaged.stdout}\n${packaged.stderr}`);
  return JSON.parse(readFileSync(join(into, 'serverless-state.json'), 'utf8')) as ServerlessState;
}

/** The esbuild build serverless-esbuild makes of one handler, with its metafile. */
async function rebuild(settings: EsbuildSettings, source: string) {
  const options = Object.fromEntries(
    Object.entries(settings).filter(([key]) => !PLUGIN_KEYS.includes(key)),
  ) as BuildOptions;
  const result = await build({
    ...options,
    external: [...(options.external ?? []), ...(settings.exclude ?? [])],
    outExtension: { '.js': settings.outputFileExtension },
    entryPoints: [join(root, source)],
    outdir: join(tmpdir(), 'runner-medic-cold-start-unwritten'),
    absWorkingDir: root,
    write: false,
    metafile: true,
    logLevel: 'error',
  });
  const [output] = result.outputFiles;
  if (!output) throw new Error(`esbuild wrote nothing for ${source}`);
  return { bytes: Buffer.from(output.contents), metafile: result.metafile };
}

const kb = (bytes: number) => `${(bytes / 1024).toFixed(0)} KB`;

interface Packaged {
  name: string;
  zipPath: string;
  dir: string;
  bundlePath: string;
  bundle: Buffer;
  metafile: Metafile;
  /** Whether the metafile's build is byte for byte the zipped bundle (not when a source changed since). */
  metafileOfBundle: boolean;
}

/** A function's zip unpacked into `work/<name>`, and the metafile of its bundle. */
async function unpack(state: ServerlessState, name: string, work: string): Promise<Packaged> {
  const settings = state.service.custom.esbuild;
  const handler = state.service.functions[name]?.handler ?? '';
  const module = handler.slice(0, handler.lastIndexOf('.'));
  const zipPath = join(work, 'package', `${name}.zip`);
  const dir = join(work, name);
  for (const [entry, data] of unzip(zipPath)) {
    mkdirSync(dirname(join(dir, entry)), { recursive: true });
    writeFileSync(join(dir, entry), data);
  }
  const bundlePath = join(dir, `${module}${settings.outputFileExtension}`);
  const bundle = readFileSync(bundlePath);
  const rebuilt = await rebuild(settings, `${module}.ts`);
  return {
    name,
    zipPath,
    dir,
    bundlePath,
    bundle,
    metafile: rebuilt.metafile,
    metafileOfBundle: rebuilt.bytes.equals(bundle),
  };
}

const verdict = (ok: boolean) => (ok ? 'met' : 'NOT met');

/** One function's figures, and its lines. */
function measureFunction(
  p: Packaged,
  state: ServerlessState,
  runs: number,
  say: (line: string) => void,
) {
  const [output] = Object.values(p.metafile.outputs);
  const sdk = [
    ...new Set((output?.imports ?? []).map((i) => i.path).filter((m) => m.startsWith('@aws-sdk/'))),
  ].sort();
  const env = functionEnvironment(state, p.name);
  const timing = pairedRuns(
    runs,
    () => importTime([pathToFileURL(p.bundlePath).href], p.dir, env),
    () => importTime(sdk, p.dir, env),
  );
  const { own, packages } = packageBytes(p.metafile);
  const target = TARGETS[p.name] ?? { zipBytes: Infinity, ratio: Infinity };
  const zipBytes = statSync(p.zipPath).size;
  const largest = packages.slice(0, 5);
  say(
    `${p.name}: zip ${kb(zipBytes)} (target ≤ ${kb(target.zipBytes)}: ${verdict(zipBytes <= target.zipBytes)}), bundle ${kb(p.bundle.length)}, own code ${kb(own)}`,
  );
  say(`  largest packages: ${largest.map(([pkg, bytes]) => `${pkg} ${kb(bytes)}`).join(', ')}`);
  if (!p.metafileOfBundle)
    say('  (a source changed after packaging: these packages are of a rebuild, not the zip)');
  say(
    `  import: handler ${timing.handler.wallMs.toFixed(0)} ms wall / ${timing.handler.cpuMs.toFixed(0)} ms CPU; floor (${sdk.join(' ')}) ${timing.floor.wallMs.toFixed(0)} ms / ${timing.floor.cpuMs.toFixed(0)} ms`,
  );
  const range = ([low, high]: [number, number]) => `${low.toFixed(2)}–${high.toFixed(2)}`;
  say(
    `  ratio handler/floor (median; middle half): wall ${timing.ratio.wall.toFixed(2)} (${range(timing.ratioQuartiles.wall)}), CPU ${timing.ratio.cpu.toFixed(2)} (${range(timing.ratioQuartiles.cpu)}); target ≤ ${target.ratio}: wall ${verdict(timing.ratio.wall <= target.ratio)}, CPU ${verdict(timing.ratio.cpu <= target.ratio)}`,
  );
  return {
    zipBytes,
    bundleBytes: p.bundle.length,
    ownCodeBytes: own,
    largestPackages: largest.map(([pkg, bytes]) => ({ package: pkg, bytes })),
    metafileOfBundle: p.metafileOfBundle,
    floorImports: sdk,
    ...timing,
    targets: target,
    met: {
      zipBytes: zipBytes <= target.zipBytes,
      ratio: timing.ratio.wall <= target.ratio,
      cpuRatio: timing.ratio.cpu <= target.ratio,
    },
  };
}

export const coldStartSection: BenchSection = async ({ full, asJson }) => {
  // 15 pairs: on a busy machine the wall ratio of one pair ranges over ±0.3; their median holds.
  const runs = full ? 31 : 15;
  const lines: string[] = [];
  const say = (line: string) => (asJson ? lines.push(line) : console.log(line));
  const work = mkdtempSync(join(tmpdir(), 'runner-medic-cold-start-'));
  try {
    const state = packageFunctions(join(work, 'package'));
    const names = Object.keys(state.service.functions);
    // Right after packaging, so that the metafiles are of the zipped sources.
    const packaged: Packaged[] = [];
    for (const name of names) packaged.push(await unpack(state, name, work));
    // The Lambda runtime's AWS SDK: the repository's, and nothing else of node_modules.
    mkdirSync(join(work, 'node_modules'));
    symlinkSync(join(root, 'node_modules/@aws-sdk'), join(work, 'node_modules/@aws-sdk'), 'dir');
    say(
      `cold start: import of each bundled handler vs its AWS SDK clients alone, node ${process.version}, ${runs} paired runs, load average ${loadavg()[0]?.toFixed(2)}`,
    );
    const functions: Record<string, unknown> = {};
    for (const p of packaged) functions[p.name] = measureFunction(p, state, runs, say);
    return { runs, node: process.version, loadAverage: loadavg()[0], functions, lines };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
};
