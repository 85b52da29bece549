/**
 * The API server's semantics, independent of HTTP: validation, resourceVersion and optimistic
 * concurrency, status subresources, finalizers and deletionTimestamp, graceful pod deletion,
 * preconditions, ownerReference garbage collection, eviction, and the audit log. The HTTP layer
 * and the in-process models (ARC, kubelet, Karpenter, ...) both go through it.
 */
import type { Clock } from '../../clock.js';
import type { Rng } from '../../rng.js';
import { uuid } from '../ids.js';
import { deepClone, isoTime, type KubeObject, type Pod } from '../types.js';
import { AuditLog, type MutationVerb } from './audit.js';
import { applyCreateDefaults, foldSecretStringData, initialStatus } from './defaults.js';
import { ApiError, errors, successStatus, type StatusBody } from './errors.js';
import { matchesFields, parseFieldSelector } from './field-selector.js';
import { Deletion } from './deletion.js';
import { DependentsIndex } from './gc.js';
import { matchesLabels, parseLabelSelector, SelectorError } from './label-selector.js';
import { applyPatch, PatchError, type PatchType } from './patch.js';
import { apiVersionOf, resourceByName, resourceKey, type ResourceDef } from './resources.js';
import {
  asLoose,
  asObject,
  decodeContinue,
  encodeContinue,
  immutablePodFields,
  keyFor,
  sameJson,
  setCondition,
  setDisruptionTarget,
  target,
  withoutMetaStatus,
} from './object-utils.js';
import { ObjectStore } from './store.js';
import {
  crdSchema,
  validateCore,
  validateCustom,
  validateMeta,
  type SchemaFlavour,
} from './validation.js';
import {
  strictBodyError,
  strictPatchError,
  unknownFields,
  type FieldValidation,
} from './field-validation.js';

export interface ListOptions {
  labelSelector?: string;
  fieldSelector?: string;
  limit?: number;
  continue?: string;
}

export interface ListResult {
  items: KubeObject[];
  resourceVersion: string;
  continue?: string;
  remainingItemCount?: number;
}

export interface DeleteOptions {
  gracePeriodSeconds?: number;
  propagationPolicy?: 'Background' | 'Foreground' | 'Orphan';
  preconditions?: { uid?: string; resourceVersion?: string };
  dryRun?: boolean;
}

export interface WriteOptions {
  subresource?: 'status';
  dryRun?: boolean;
  /** Internal callers (kubelet registering a node) may set status on create. */
  keepStatus?: boolean;
  /** Internal bookkeeping that should not show up as a separate audit entry. */
  silent?: boolean;
  /** `?fieldValidation=`: Strict refuses fields the kind does not declare (field-validation.ts). */
  fieldValidation?: FieldValidation;
}

export interface KubeApiOptions {
  clock: Clock;
  rng: Rng;
  schemaFlavour: SchemaFlavour;
  store?: ObjectStore;
  audit?: AuditLog;
}

/** Resources may be named by plural (`pods`) or store key (`ephemeralrunners.actions.github.com`). */
export type ResourceRef = string | ResourceDef;

export class KubeApi {
  readonly store: ObjectStore;
  readonly audit: AuditLog;
  private readonly clock: Clock;
  private readonly rng: Rng;
  private readonly flavour: SchemaFlavour;
  private readonly dependents: DependentsIndex;
  private readonly deletion: Deletion;
  /** Optional fault hook: a message makes eviction answer 429 as a PodDisruptionBudget would. */
  evictionGuard: ((pod: Pod) => string | undefined) | undefined;
  /** Optional fault hook: an admission webhook / Pod Security rejection of creates (403/422). */
  admissionGuard:
    ((resource: ResourceDef, obj: KubeObject, actor: string) => ApiError | undefined) | undefined;

  constructor(options: KubeApiOptions) {
    this.clock = options.clock;
    this.rng = options.rng;
    this.flavour = options.schemaFlavour;
    this.store = options.store ?? new ObjectStore();
    this.audit = options.audit ?? new AuditLog();
    this.dependents = new DependentsIndex(this.store);
    this.deletion = new Deletion(this, this.store, this.dependents, this.clock);
  }

  def(ref: ResourceRef): ResourceDef {
    return typeof ref === 'string' ? resourceByName(ref) : ref;
  }

  // ---- reads ------------------------------------------------------------------------------

  get(ref: ResourceRef, ns: string | undefined, name: string): KubeObject {
    const def = this.def(ref);
    const obj = this.store.get(resourceKey(def), def.namespaced ? ns : undefined, name);
    if (!obj) throw errors.notFound(target(def, name));
    return obj;
  }

  tryGet<T extends KubeObject = KubeObject>(
    ref: ResourceRef,
    ns: string | undefined,
    name: string,
  ): T | undefined {
    const def = this.def(ref);
    return this.store.get(resourceKey(def), def.namespaced ? ns : undefined, name) as T | undefined;
  }

  /**
   * Every object of a resource (copies), optionally in one namespace and matching labels or a
   * predicate (applied before copying).
   */
  all<T extends KubeObject = KubeObject>(
    ref: ResourceRef,
    ns?: string,
    labels?: Record<string, string>,
    where?: (o: KubeObject) => boolean,
  ): T[] {
    const def = this.def(ref);
    return this.store
      .scan(resourceKey(def), ns)
      .filter(
        (o) =>
          (!labels || Object.entries(labels).every(([k, v]) => o.metadata.labels?.[k] === v)) &&
          (!where || where(o)),
      )
      .map((o) => deepClone(o) as T);
  }

  list(ref: ResourceRef, ns: string | undefined, options: ListOptions = {}): ListResult {
    const def = this.def(ref);
    const match = this.matcher(def, options);
    const rv = this.store.currentRv();
    let start = '';
    if (options.continue) {
      const token = decodeContinue(options.continue);
      start = token.start;
    }
    const all = this.store.scan(resourceKey(def), def.namespaced ? ns : undefined);
    const after = start ? all.filter((o) => keyFor(o) > start) : all;
    const selected = after.filter(match);
    const limit = options.limit && options.limit > 0 ? options.limit : undefined;
    const page = limit ? selected.slice(0, limit) : selected;
    const result: ListResult = {
      items: page.map((o) => deepClone(o)),
      resourceVersion: String(rv),
    };
    if (limit && selected.length > limit) {
      const last = page[page.length - 1] as KubeObject;
      result.continue = encodeContinue({ rv, start: keyFor(last) });
      if (!options.labelSelector && !options.fieldSelector)
        result.remainingItemCount = selected.length - limit;
    }
    return result;
  }

  /** A predicate for list/watch selectors; throws 400 on a malformed selector. */
  matcher(
    def: ResourceDef,
    options: { labelSelector?: string; fieldSelector?: string },
  ): (o: KubeObject) => boolean {
    try {
      const labels = parseLabelSelector(options.labelSelector ?? '');
      const fields = parseFieldSelector(options.fieldSelector ?? '', def.fieldSelectors);
      return (o) => matchesLabels(labels, o.metadata.labels) && matchesFields(fields, o);
    } catch (e) {
      if (e instanceof SelectorError) throw errors.badRequest(e.message);
      throw e;
    }
  }

  // ---- writes -----------------------------------------------------------------------------

  create(
    actor: string,
    ref: ResourceRef,
    ns: string | undefined,
    body: unknown,
    options: WriteOptions = {},
  ): KubeObject {
    const def = this.def(ref);
    const obj = asObject(body, def);
    const meta = (obj.metadata ??= {});
    if (def.namespaced) {
      if (meta.namespace && ns && meta.namespace !== ns) {
        throw errors.badRequest(
          'the namespace of the provided object does not match the namespace sent on the request',
        );
      }
      ns = ns ?? meta.namespace;
      if (!ns) throw errors.badRequest('an empty namespace may not be set during creation');
      meta.namespace = ns;
    } else delete meta.namespace;
    if (meta.resourceVersion)
      throw errors.badRequest('resourceVersion should not be set on objects to be created');
    if (!meta.name && meta.generateName) meta.name = `${meta.generateName}${this.rng.suffix(5)}`;
    const t = target(def, meta.name);
    const audit = (code: number) => this.record(actor, 'create', def, options, obj, code);
    return audited(audit, 201, () => {
      const unknown = this.strictUnknownFields(def, obj, options);
      if (unknown.length) throw strictBodyError(def, unknown);
      if (def.namespaced && !this.store.peek('namespaces', undefined, ns as string)) {
        throw errors.notFound({ group: '', resource: 'namespaces', name: ns as string });
      }
      const now = isoTime(this.clock.now());
      delete meta.deletionTimestamp;
      delete meta.deletionGracePeriodSeconds;
      meta.uid = uuid(this.rng);
      meta.creationTimestamp = now;
      meta.generation = 1;
      obj.apiVersion = apiVersionOf(def);
      obj.kind = def.kind;
      applyCreateDefaults(def.plural, obj);
      foldSecretStringData(def.plural, obj);
      if (def.subresources.includes('status') && !options.keepStatus) {
        const status = initialStatus(def.plural, obj);
        if (status === undefined) delete obj.status;
        else obj.status = status;
      }
      const valid = this.validate(def, obj);
      if (this.store.peek(resourceKey(def), meta.namespace, meta.name as string))
        throw errors.alreadyExists(t);
      const denied = this.admissionGuard?.(def, valid, actor);
      if (denied) throw denied;
      if (options.dryRun) return valid;
      return this.store.put(resourceKey(def), valid);
    });
  }

  update(
    actor: string,
    ref: ResourceRef,
    ns: string | undefined,
    name: string,
    body: unknown,
    options: WriteOptions = {},
  ): KubeObject {
    const def = this.def(ref);
    const existing = this.tryGet(def, ns, name);
    const audit = (code: number) =>
      this.record(
        actor,
        'update',
        def,
        options,
        existing ?? asLoose(body),
        code,
        undefined,
        name,
        ns,
      );
    return audited(audit, 200, () => {
      const obj = asObject(body, def);
      if (obj.metadata?.name && obj.metadata.name !== name) {
        throw errors.badRequest(
          `the name of the object (${obj.metadata.name}) does not match the name on the URL (${name})`,
        );
      }
      if (!existing) throw errors.notFound(target(def, name));
      const unknown = this.strictUnknownFields(def, obj, options);
      if (unknown.length) throw strictBodyError(def, unknown);
      const rv = obj.metadata?.resourceVersion;
      if (rv === undefined || rv === '') {
        if (def.custom) {
          throw errors.invalid(target(def, name), def.kind, [
            {
              reason: 'FieldValueInvalid',
              field: 'metadata.resourceVersion',
              message: 'Invalid value: 0x0: must be specified for an update',
            },
          ]);
        }
      } else if (rv !== existing.metadata.resourceVersion) throw errors.conflict(target(def, name));
      return this.write(def, existing, obj, options);
    });
  }

  patch(
    actor: string,
    ref: ResourceRef,
    ns: string | undefined,
    name: string,
    type: PatchType,
    patch: unknown,
    options: WriteOptions = {},
  ): KubeObject {
    const def = this.def(ref);
    const existing = this.tryGet(def, ns, name);
    const audit = (code: number) =>
      this.record(actor, 'patch', def, options, existing, code, type, name, ns);
    return audited(audit, 200, () => {
      if (!existing) throw errors.notFound(target(def, name));
      if (type === 'apply')
        throw errors.unsupportedMediaType(
          'application/apply-patch+yaml (server-side apply is not simulated)',
        );
      let patched: unknown;
      try {
        patched = applyPatch(type, existing, patch);
      } catch (e) {
        if (e instanceof PatchError) {
          if (e.code === 422)
            throw errors.invalid(target(def, name), def.kind, [{ message: e.message }]);
          throw errors.badRequest(e.message);
        }
        throw e;
      }
      const obj = asObject(patched, def);
      const unknown = this.strictUnknownFields(def, obj, options);
      if (unknown.length) throw strictPatchError(patch, unknown);
      const wanted = obj.metadata?.resourceVersion;
      if (wanted && wanted !== existing.metadata.resourceVersion)
        throw errors.conflict(target(def, name));
      if (obj.metadata?.name !== name)
        throw errors.badRequest(
          'metadata.name: Invalid value: the name of a patched object cannot change',
        );
      return this.write(def, existing, obj, options);
    });
  }

  /**
   * Read-modify-write for the models: applies `change` to a copy of the current object and
   * writes it (no conflict possible: the models run synchronously). Returns undefined when the
   * object does not exist.
   */
  modify<T extends KubeObject>(
    actor: string,
    ref: ResourceRef,
    ns: string | undefined,
    name: string,
    change: (obj: T) => void,
    options: WriteOptions = {},
  ): T | undefined {
    const def = this.def(ref);
    const existing = this.tryGet<T>(def, ns, name);
    if (!existing) return undefined;
    const next = deepClone(existing);
    change(next);
    const audit = (code: number) =>
      this.record(actor, 'patch', def, options, existing, code, 'model', name, ns);
    return audited(audit, 200, () => this.write(def, existing, next, options) as T);
  }

  delete(
    actor: string,
    ref: ResourceRef,
    ns: string | undefined,
    name: string,
    options: DeleteOptions = {},
    writeOptions: WriteOptions = {},
  ): { object: KubeObject; status?: StatusBody } {
    const def = this.def(ref);
    const existing = this.tryGet(def, ns, name);
    const audit = (code: number) =>
      this.record(
        actor,
        'delete',
        def,
        { ...writeOptions, dryRun: options.dryRun },
        existing,
        code,
        options.propagationPolicy,
        name,
        ns,
      );
    return audited(audit, 200, () => {
      if (!existing) throw errors.notFound(target(def, name));
      const pre = options.preconditions;
      if (pre?.uid && pre.uid !== existing.metadata.uid) {
        throw errors.conflict(
          target(def, name),
          `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${existing.metadata.uid}`,
        );
      }
      if (pre?.resourceVersion && pre.resourceVersion !== existing.metadata.resourceVersion) {
        throw errors.conflict(
          target(def, name),
          `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${existing.metadata.resourceVersion}`,
        );
      }
      if (options.dryRun) return { object: existing };
      return this.deletion.perform(def, existing, options);
    });
  }

  deleteCollection(
    actor: string,
    ref: ResourceRef,
    ns: string | undefined,
    list: ListOptions,
    options: DeleteOptions = {},
  ): ListResult {
    const def = this.def(ref);
    const found = this.list(def, ns, {
      labelSelector: list.labelSelector,
      fieldSelector: list.fieldSelector,
    });
    this.record(
      actor,
      'deletecollection',
      def,
      { dryRun: options.dryRun },
      undefined,
      200,
      list.labelSelector,
      undefined,
      ns,
    );
    const deleted: KubeObject[] = [];
    for (const o of found.items) {
      try {
        deleted.push(
          this.delete(actor, def, o.metadata.namespace, o.metadata.name as string, options).object,
        );
      } catch (e) {
        if (!(e instanceof ApiError && e.code === 404)) throw e;
      }
    }
    return { items: deleted, resourceVersion: String(this.store.currentRv()) };
  }

  /** POST pods/{name}/eviction (policy/v1). */
  evict(actor: string, ns: string, name: string, body: unknown): StatusBody {
    const def = this.def('pods');
    const existing = this.tryGet<Pod>(def, ns, name);
    const audit = (code: number) =>
      this.record(
        actor,
        'evict',
        def,
        { subresource: undefined },
        existing,
        code,
        'eviction',
        name,
        ns,
      );
    audited(audit, 201, () => {
      const eviction = (body ?? {}) as {
        metadata?: { name?: string };
        deleteOptions?: DeleteOptions & { dryRun?: string[] | boolean };
      };
      if (eviction.metadata?.name && eviction.metadata.name !== name) {
        throw errors.badRequest(`name in URL does not match name in Eviction object`);
      }
      if (!existing) throw errors.notFound(target(def, name));
      const terminal =
        existing.status?.phase === 'Succeeded' || existing.status?.phase === 'Failed';
      if (!existing.metadata.deletionTimestamp && !terminal) {
        const blocked = this.evictionGuard?.(existing);
        if (blocked) throw errors.tooManyRequests(blocked);
      }
      const deleteOptions: DeleteOptions = { ...(eviction.deleteOptions ?? {}) };
      const dry = (eviction.deleteOptions as { dryRun?: unknown } | undefined)?.dryRun;
      deleteOptions.dryRun = Array.isArray(dry) ? dry.includes('All') : dry === true;
      if (!deleteOptions.dryRun) {
        if (!terminal && !existing.metadata.deletionTimestamp) {
          this.modify<Pod>(
            actor,
            def,
            ns,
            name,
            (p) => {
              setDisruptionTarget(
                p,
                'EvictionByEvictionAPI',
                'Eviction API: evicting',
                this.clock.now(),
              );
            },
            { subresource: 'status', silent: true },
          );
        }
        this.delete(actor, def, ns, name, deleteOptions, { silent: true });
      }
    });
    return { ...successStatus(target(def, name)), code: 201 };
  }

  // ---- internals --------------------------------------------------------------------------

  private strictUnknownFields(def: ResourceDef, obj: KubeObject, options: WriteOptions): string[] {
    if (options.fieldValidation !== 'Strict') return [];
    return unknownFields(def, obj, def.custom ? crdSchema(def, this.flavour) : undefined);
  }

  private validate(def: ResourceDef, obj: KubeObject): KubeObject {
    const t = target(def, obj.metadata.name);
    const causes = [...validateMeta(def, obj), ...(def.custom ? [] : validateCore(def, obj))];
    if (causes.length) throw errors.invalid(t, def.kind, causes);
    if (!def.custom) return obj;
    const result = validateCustom(def, obj, this.flavour);
    if ('causes' in result) throw errors.invalid(t, def.kind, result.causes);
    return result.object;
  }

  /** Merges an incoming full object over `existing` per the endpoint's rules, then persists. */
  private write(
    def: ResourceDef,
    existing: KubeObject,
    incoming: KubeObject,
    options: WriteOptions,
  ): KubeObject {
    const hasStatus = def.subresources.includes('status');
    let next: KubeObject;
    if (options.subresource === 'status') {
      if (!hasStatus) throw errors.notFound(target(def, existing.metadata.name));
      next = deepClone(existing);
      if (incoming.status === undefined) delete next.status;
      else next.status = deepClone(incoming.status);
    } else {
      next = deepClone(incoming);
      foldSecretStringData(def.plural, next);
      next.apiVersion = existing.apiVersion;
      next.kind = existing.kind;
      if (hasStatus) {
        if (existing.status === undefined) delete next.status;
        else next.status = deepClone(existing.status);
      }
      const m = (next.metadata ??= {});
      for (const f of [
        'uid',
        'creationTimestamp',
        'deletionTimestamp',
        'deletionGracePeriodSeconds',
        'namespace',
        'name',
        'generateName',
        'generation',
      ] as const) {
        if (existing.metadata[f] === undefined) delete m[f];
        else (m as Record<string, unknown>)[f] = existing.metadata[f];
      }
      if (existing.metadata.deletionTimestamp) {
        const added = (m.finalizers ?? []).filter(
          (f) => !(existing.metadata.finalizers ?? []).includes(f),
        );
        if (added.length) {
          throw errors.invalid(target(def, existing.metadata.name), def.kind, [
            {
              reason: 'FieldValueForbidden',
              field: 'metadata.finalizers',
              message: `Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers ${JSON.stringify(added)}`,
            },
          ]);
        }
      }
      if (def.plural === 'pods') immutablePodFields(existing as Pod, next as Pod, def);
      if (def.kind.endsWith('RoleBinding') && !sameJson(existing.roleRef, next.roleRef))
        throw errors.invalid(target(def, existing.metadata.name), def.kind, [
          {
            reason: 'FieldValueInvalid',
            field: 'roleRef',
            message: `Invalid value: ${JSON.stringify(next.roleRef)}: cannot change roleRef`,
          },
        ]);
      if (!sameJson(withoutMetaStatus(existing), withoutMetaStatus(next)))
        m.generation = (existing.metadata.generation ?? 1) + 1;
    }
    if (next.metadata.finalizers && next.metadata.finalizers.length === 0)
      delete next.metadata.finalizers;
    next.metadata.resourceVersion = existing.metadata.resourceVersion;
    const valid = this.validate(def, next);
    if (options.dryRun) return valid;
    if (sameJson(valid, existing)) return existing;
    const stored = this.store.put(resourceKey(def), valid);
    return this.deletion.finishIfDone(def, stored) ?? stored;
  }

  private record(
    actor: string,
    verb: MutationVerb,
    def: ResourceDef,
    options: WriteOptions,
    obj: KubeObject | undefined,
    code: number,
    detail?: string,
    name?: string,
    ns?: string,
  ): void {
    if (options.silent) return;
    const entry = {
      at: this.clock.now(),
      by: actor,
      api: 'kubernetes' as const,
      verb,
      resource: resourceKey(def),
      namespace: def.namespaced ? (ns ?? obj?.metadata?.namespace) : undefined,
      name: name ?? obj?.metadata?.name,
      labels: { ...(obj?.metadata?.labels ?? {}) },
      ownerReferences: deepClone(obj?.metadata?.ownerReferences ?? []),
      code,
      ...(options.subresource ? { subresource: options.subresource } : {}),
      ...(detail || options.dryRun
        ? { detail: [detail, options.dryRun ? 'dryRun' : undefined].filter(Boolean).join(',') }
        : {}),
    };
    this.audit.record(entry);
  }
}

export { setCondition };

/** Runs one verb and audits its answer: `code` when it succeeds, the ApiError's code when refused. */
function audited<T>(audit: (code: number) => void, code: number, run: () => T): T {
  try {
    const result = run();
    audit(code);
    return result;
  } catch (e) {
    if (e instanceof ApiError) audit(e.code);
    throw e;
  }
}
