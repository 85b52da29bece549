import fc from 'fast-check';
import { matchesFields, parseFieldSelector } from '../../../sim/kube/api/field-selector.js';
import {
  matchesLabels,
  parseLabelSelector,
  SelectorError,
} from '../../../sim/kube/api/label-selector.js';

describe('label selectors (hostile input)', () => {
  it.each([
    ['', {}, true],
    ['app=demo', { app: 'demo' }, true],
    ['app==demo', { app: 'other' }, false],
    ['app!=demo', {}, true],
    ['app in (a, b),tier notin (db)', { app: 'b', tier: 'web' }, true],
    ['app in (a,b)', { app: 'c' }, false],
    [
      'actions.github.com/scale-set-name=arc-runner-set',
      { 'actions.github.com/scale-set-name': 'arc-runner-set' },
      true,
    ],
    ['app', { app: '' }, true],
    ['!app', { app: 'x' }, false],
    ['replicas>2', { replicas: '3' }, true],
    ['replicas<2', { replicas: 'x' }, false],
    ['app=', { app: '' }, true],
  ])('%j against %j → %s', (selector, labels, expected) => {
    expect(matchesLabels(parseLabelSelector(selector), labels)).toBe(expected);
  });

  it('never fails with anything but SelectorError, whatever the input', () => {
    fc.assert(
      fc.property(
        fc.string({
          unit: fc.constantFrom(...'ab=!,() <>in/.-_x\t\\"\'\u00e9\u0000'.split('')),
          maxLength: 40,
        }),
        (input) => {
          try {
            const reqs = parseLabelSelector(input);
            matchesLabels(reqs, { a: 'b' });
          } catch (e) {
            if (!(e instanceof SelectorError)) throw e;
          }
        },
      ),
      { numRuns: 3000 },
    );
  });

  it('parses every selector built from valid parts, and matches what it describes', () => {
    const name = fc.stringMatching(/^[a-z0-9]([a-z0-9._-]{0,10}[a-z0-9])?$/);
    const key = fc
      .tuple(
        fc.option(fc.stringMatching(/^[a-z0-9]([a-z0-9-]{0,8}[a-z0-9])?(\.[a-z]{2,5})?$/), {
          nil: undefined,
        }),
        name,
      )
      .map(([p, n]) => (p ? `${p}/${n}` : n));
    fc.assert(
      fc.property(key, name, (k, v) => {
        expect(matchesLabels(parseLabelSelector(`${k}=${v}`), { [k]: v })).toBe(true);
        expect(matchesLabels(parseLabelSelector(`${k} in (${v}, zz)`), { [k]: v })).toBe(true);
        expect(matchesLabels(parseLabelSelector(`!${k}`), { [k]: v })).toBe(false);
      }),
    );
  });

  it('rejects over-long selectors', () => {
    expect(() => parseLabelSelector('a=b,'.repeat(5000))).toThrow(SelectorError);
  });
});

describe('field selectors', () => {
  const supported = ['metadata.name', 'spec.nodeName', 'status.phase'];
  it.each([
    ['spec.nodeName=node-a', { spec: { nodeName: 'node-a' } }, true],
    ['spec.nodeName=', { spec: {} }, true],
    ['status.phase!=Running', { status: { phase: 'Failed' } }, true],
    ['metadata.name=a\\,b', { metadata: { name: 'a,b' } }, true],
    [
      'status.phase==Failed,spec.nodeName=x',
      { status: { phase: 'Failed' }, spec: { nodeName: 'y' } },
      false,
    ],
  ])('%j against %j → %s', (selector, obj, expected) => {
    expect(matchesFields(parseFieldSelector(selector, supported), obj)).toBe(expected);
  });

  it.each(['spec.containers=x', 'status.phase', 'a=b=c', '=x', 'metadata.name=\\q'])(
    'rejects %j',
    (selector) => {
      expect(() => parseFieldSelector(selector, supported)).toThrow(SelectorError);
    },
  );
});
