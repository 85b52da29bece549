/**
 * The API server twin validates custom objects by walking the CRD's schema
 * (sim/kube/api/structural-schema.ts). Here it is held to a reference validator, ajv with
 * ajv-formats (JSON Schema, which a structural schema is a subset of), over ARC's real CRDs in
 * every flavour the twin serves: objects built from each schema, then broken one, two or three
 * fields at a time, at seeded random places, must get the same causes from both.
 */
import { Ajv, type ErrorObject } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { Rng } from '../../../sim/rng.js';
import { resourceByName } from '../../../sim/kube/api/resources.js';
import { schemaViolations, type Schema } from '../../../sim/kube/api/structural-schema.js';
import { crdSchema, validateCustom, type SchemaFlavour } from '../../../sim/kube/api/validation.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
const PLURALS = ['ephemeralrunners', 'ephemeralrunnersets', 'autoscalingrunnersets'];
const FLAVOURS: SchemaFlavour[] = ['0.9', '0.13', '0.15'];
/** Broken objects per CRD and flavour. */
const SAMPLES = 80;

function referenceValidator(schema: Schema) {
  // Unoptimised code: the same checks and errors, compiled in half the CPU.
  const ajv = new Ajv({
    strict: false,
    allErrors: true,
    validateFormats: true,
    code: { optimize: false },
  });
  addFormats(ajv);
  ajv.addFormat('int32', {
    type: 'number',
    validate: (n: number) => Number.isInteger(n) && n >= -(2 ** 31) && n < 2 ** 31,
  });
  ajv.addFormat('int64', { type: 'number', validate: (n: number) => Number.isInteger(n) });
  return ajv.compile(schema);
}

const fieldOf = (instancePath: string) =>
  instancePath
    .split('/')
    .slice(1)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((s, i) => (/^\d+$/.test(s) ? `[${s}]` : i === 0 ? s : `.${s}`))
    .join('');

/** ajv's error as the same (field, what) pair the walk reports. */
function referenceFinding(e: ErrorObject): string | null {
  const field = fieldOf(e.instancePath);
  if (e.keyword === 'anyOf' || e.keyword === 'if') return null;
  if (e.keyword === 'required') {
    const name = (e.params as { missingProperty: string }).missingProperty;
    return `${field ? `${field}.${name}` : name} required`;
  }
  if (e.keyword === 'type') return `${field} type ${(e.params as { type: string }).type}`;
  return `${field} ${e.message ?? e.keyword}`;
}

function walkFindings(value: unknown, schema: Schema): string[] {
  return schemaViolations(value, schema).map((v) => {
    if (v.keyword === 'required') return `${v.field} required`;
    if (v.keyword === 'type') return `${v.field} type ${v.type}`;
    if (v.keyword === 'enum') return `${v.field} must be equal to one of the allowed values`;
    return `${v.field} ${v.message}`;
  });
}

const QUANTITY_SAMPLES = ['1', '500m', '2Gi'];

/** A valid value of `schema`, with every property it declares. */
function build(schema: Schema): unknown {
  if (Array.isArray(schema.anyOf)) return 1;
  switch (schema.type) {
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const [k, p] of Object.entries((schema.properties as Record<string, Schema>) ?? {}))
        out[k] = build(p);
      const additional = schema.additionalProperties;
      if (additional && typeof additional === 'object')
        out['some-key'] = build(additional as Schema);
      return out;
    }
    case 'array':
      return schema.items ? [build(schema.items as Schema)] : [];
    case 'integer':
      return typeof schema.minimum === 'number' ? schema.minimum + 1 : 3;
    case 'number':
      return 1.5;
    case 'boolean':
      return true;
    default:
      if (schema.format === 'date-time') return '2026-12-06T10:00:00Z';
      if (typeof schema.pattern === 'string') return QUANTITY_SAMPLES[0];
      return 'x';
  }
}

type Place = { parent: Record<string, unknown> | unknown[]; key: string | number };

function places(value: unknown, out: Place[] = []): Place[] {
  if (value === null || typeof value !== 'object') return out;
  const entries = Array.isArray(value)
    ? value.map((v, i) => [i, v] as const)
    : Object.entries(value);
  for (const [key, v] of entries) {
    out.push({ parent: value as Place['parent'], key });
    places(v, out);
  }
  return out;
}

const BREAKS: ((current: unknown) => unknown)[] = [
  () => 'not-a-number',
  () => 7,
  () => 2 ** 31,
  () => -1,
  () => 1.5,
  () => true,
  () => null,
  () => ['x'],
  () => ({ k: 'v' }),
  () => '2026-13-45T99:00:00Z',
  () => '12 apples',
  () => undefined,
];

function breakSome(value: unknown, rng: Rng, count: number): unknown {
  const copy = structuredClone(value);
  for (let i = 0; i < count; i++) {
    const all = places(copy);
    const { parent, key } = rng.pick(all);
    const next = rng.pick(BREAKS)((parent as Record<string | number, unknown>)[key]);
    if (next === undefined) {
      if (Array.isArray(parent)) parent.splice(Number(key), 1);
      else delete parent[key as string];
    } else (parent as Record<string | number, unknown>)[key] = next;
  }
  return copy;
}

/** Each CRD once per schema the flavours serve (most flavours serve the vendored one as is). */
function distinctSchemas(): { plural: string; flavours: SchemaFlavour[] }[] {
  const out: { plural: string; flavours: SchemaFlavour[]; text: string }[] = [];
  for (const plural of PLURALS)
    for (const flavour of FLAVOURS) {
      const text = JSON.stringify(crdSchema(resourceByName(plural), flavour));
      const same = out.find((c) => c.plural === plural && c.text === text);
      if (same) same.flavours.push(flavour);
      else out.push({ plural, flavours: [flavour], text });
    }
  return out;
}

describe('the structural schema walk agrees with a reference validator on ARC’s CRDs', () => {
  for (const { plural, flavours } of distinctSchemas())
    it(`${plural} (ARC ${flavours.join(', ')})`, () => {
      const def = resourceByName(plural);
      const schema = crdSchema(def, flavours[0] ?? '0.13');
      const reference = referenceValidator(schema);
      const whole = build(schema);
      expect(walkFindings(whole, schema)).toEqual([]);
      expect(reference(whole)).toBe(true);

      const rng = new Rng(`${plural}@${flavours.join(',')}`);
      let broken = 0;
      for (let i = 0; i < SAMPLES; i++) {
        const sample = breakSome(whole, rng, 1 + (i % 3));
        reference(sample);
        const expected = (reference.errors ?? [])
          .map(referenceFinding)
          .filter((f): f is string => f !== null);
        expect({ i, found: [...new Set(walkFindings(sample, schema))].sort() }).toEqual({
          i,
          found: [...new Set(expected)].sort(),
        });
        if (expected.length > 0) broken++;
      }
      // Most samples break something: the comparison is not only over valid objects.
      expect(broken).toBeGreaterThan(SAMPLES / 2);
    });

  it('words its causes as the API server does (422 causes by field)', () => {
    const causesOf = (plural: string, breakSpec: (spec: Record<string, unknown>) => void) => {
      const def = resourceByName(plural);
      const object = build(crdSchema(def, '0.13')) as Record<string, unknown>;
      breakSpec(object.spec as Record<string, unknown>);
      const result = validateCustom(def, { ...object, metadata: { name: 'a' } } as never, '0.13');
      return 'causes' in result ? result.causes : [];
    };
    expect(
      causesOf('autoscalingrunnersets', (spec) => {
        spec.maxRunners = 'many';
        spec.minRunners = -1;
      }),
    ).toEqual([
      {
        reason: 'FieldValueTypeInvalid',
        field: 'spec.maxRunners',
        message: 'Invalid value: "string": spec.maxRunners in body must be of type integer: "many"',
      },
      {
        reason: 'FieldValueInvalid',
        field: 'spec.minRunners',
        message: 'Invalid value: -1: spec.minRunners in body must be >= 0',
      },
    ]);
    expect(causesOf('ephemeralrunners', (spec) => delete spec.githubConfigUrl)).toEqual([
      { reason: 'FieldValueRequired', field: 'spec.githubConfigUrl', message: 'Required value' },
    ]);
  });
});
