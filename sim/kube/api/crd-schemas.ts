/**
 * Loads ARC's real CRDs, vendored in `sim/kube/crds/` (see its SOURCE.md), or from
 * `RUNNER_MEDIC_ARC_CRDS` when set.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import type { PrinterColumn } from './resources.js';

export interface CrdVersion {
  kind: string;
  plural: string;
  group: string;
  schema: Record<string, unknown>;
  printerColumns: PrinterColumn[];
}

/** The repository root: the nearest folder above this file that holds package.json. */
function repoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    const up = dirname(dir);
    if (up === dir)
      throw new Error('cannot find the repository root (no package.json above sim/kube)');
    dir = up;
  }
}

function crdDirectory(): string {
  return process.env.RUNNER_MEDIC_ARC_CRDS ?? resolve(repoRoot(), 'sim/kube/crds');
}

const cache = new Map<string, CrdVersion>();

export function loadCrd(plural: string): CrdVersion {
  const hit = cache.get(plural);
  if (hit) return hit;
  const file = join(crdDirectory(), `actions.github.com_${plural}.yaml`);
  if (!existsSync(file)) {
    throw new Error(
      `ARC CRD not found at ${file}: the CRDs are vendored in sim/kube/crds; RUNNER_MEDIC_ARC_CRDS overrides the folder`,
    );
  }
  const doc = parseCrdFile(file);
  const version = doc.spec.versions.find((v) => v.name === 'v1alpha1');
  if (!version) throw new Error(`${file} has no v1alpha1 version`);
  const crd: CrdVersion = {
    kind: doc.spec.names.kind,
    plural: doc.spec.names.plural,
    group: doc.spec.group,
    schema: version.schema.openAPIV3Schema,
    printerColumns: version.additionalPrinterColumns ?? [],
  };
  cache.set(plural, crd);
  return crd;
}

interface CrdDocument {
  spec: {
    group: string;
    names: { kind: string; plural: string };
    versions: {
      name: string;
      schema: { openAPIV3Schema: Record<string, unknown> };
      additionalPrinterColumns?: PrinterColumn[];
    }[];
  };
}

/**
 * The CRD file parsed, through a JSON copy in node_modules/.cache keyed by the YAML's hash: the
 * YAML parser takes about 0.6 s of CPU for the three CRDs, in every process that validates an
 * ARC object (each jest test file is one), JSON.parse a fiftieth of that. Without a writable
 * cache it parses the YAML every time.
 */
function parseCrdFile(file: string): CrdDocument {
  const text = readFileSync(file, 'utf8');
  const hash = createHash('sha256').update(text).digest('hex');
  const cached = join(repoRoot(), 'node_modules', '.cache', 'runner-medic-crds', `${hash}.json`);
  try {
    return JSON.parse(readFileSync(cached, 'utf8')) as CrdDocument;
  } catch {
    // Not cached yet (or unreadable): parse the YAML.
  }
  const doc = parse(text) as CrdDocument;
  try {
    mkdirSync(dirname(cached), { recursive: true });
    // Written aside and renamed: parallel jest workers never read half a file.
    const partial = `${cached}.${process.pid}.partial`;
    writeFileSync(partial, JSON.stringify(doc));
    renameSync(partial, cached);
  } catch {
    // A read-only tree: no cache.
  }
  return doc;
}
