/**
 * Loads a multi-document Kubernetes manifest (YAML) into the twin, as `kubectl apply -f` would:
 * each document is created, or replaced when an object of that kind and name exists. Used to
 * give runner-medic exactly what `infra/kubernetes/rbac*.yaml` grants.
 */
import { readFileSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';
import type { KubeApi } from './api/kube-api.js';
import { resourceByKind } from './api/resources.js';
import type { KubeObject } from './types.js';

export interface LoadManifestOptions {
  /** Actor recorded in the audit log (default `scenario`). */
  actor?: string;
  /**
   * Instantiate every namespaced document in each of these namespaces (like `kubectl apply -n X`
   * once per runner namespace), whatever namespace the document names.
   */
  namespaces?: string[];
  /** Create a namespace a document names when it does not exist (default true). */
  createNamespaces?: boolean;
}

export class ManifestError extends Error {
  constructor(source: string, message: string) {
    super(`${source}: ${message}`);
    this.name = 'ManifestError';
  }
}

/** Parses YAML text into objects; empty documents are skipped. Throws ManifestError. */
export function parseManifest(text: string, source = 'manifest'): KubeObject[] {
  const out: KubeObject[] = [];
  parseAllDocuments(text).forEach((doc, i) => {
    if (doc.errors.length)
      throw new ManifestError(source, `document ${i + 1}: ${doc.errors[0]?.message}`);
    const value = doc.toJS() as unknown;
    if (value === null || value === undefined) return;
    const obj = value as Partial<KubeObject>;
    if (typeof obj !== 'object' || !obj.apiVersion || !obj.kind || !obj.metadata?.name)
      throw new ManifestError(
        source,
        `document ${i + 1} is not a Kubernetes object (apiVersion, kind and metadata.name are required)`,
      );
    out.push(obj as KubeObject);
  });
  return out;
}

/** Creates or replaces each object of the manifest; returns what was stored. */
export function applyManifest(
  api: KubeApi,
  text: string,
  options: LoadManifestOptions & { source?: string } = {},
): KubeObject[] {
  const source = options.source ?? 'manifest';
  const actor = options.actor ?? 'scenario';
  const stored: KubeObject[] = [];
  const docs = parseManifest(text, source).map((doc) => {
    const def = resourceByKind(doc.apiVersion, doc.kind);
    if (!def)
      throw new ManifestError(source, `the twin does not serve ${doc.apiVersion} ${doc.kind}`);
    return { doc, def };
  });
  for (const { doc, def } of docs) {
    const targets = def.namespaced
      ? (options.namespaces ?? [doc.metadata.namespace ?? 'default'])
      : [undefined];
    for (const ns of targets) {
      const obj = structuredClone(doc);
      if (ns) {
        obj.metadata.namespace = ns;
        if (options.createNamespaces !== false && !api.tryGet('namespaces', undefined, ns))
          api.create(actor, 'namespaces', undefined, { metadata: { name: ns } });
      }
      const name = obj.metadata.name as string;
      const existing = api.tryGet(def, ns, name);
      if (existing) {
        obj.metadata.resourceVersion = existing.metadata.resourceVersion;
        stored.push(api.update(actor, def, ns, name, obj));
      } else stored.push(api.create(actor, def, ns, obj));
    }
  }
  return stored;
}

/** `applyManifest` on a file (path relative to the working directory, or absolute). */
export function applyManifestFile(
  api: KubeApi,
  path: string,
  options: LoadManifestOptions = {},
): KubeObject[] {
  return applyManifest(api, readFileSync(path, 'utf8'), { ...options, source: path });
}
