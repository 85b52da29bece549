/**
 * sim/kube/export/exporter-route.ts against the behaviour of kubernetes-event-exporter's
 * pkg/exporter/route.go and rule.go (cases after route_test.go and rule_test.go), and the Go
 * regexp translation against Go's documented RE2 syntax.
 */
import {
  expandEnv,
  parseExporterConfig,
  parseExporterRoute,
  routeEvent,
  ruleMatches,
  type RoutableEvent,
} from '../../sim/kube/export/exporter-route.js';
import { goMatchString } from '../../sim/kube/export/go-regexp.js';

const inKubeSystem: RoutableEvent = { metadata: { namespace: 'kube-system' }, count: 1 };

describe('Go regexp.MatchString semantics', () => {
  it.each<[string, string, boolean]>([
    // Unanchored: the shipped route of old forwarded "NotEvicted" and missed "Preempted".
    ['Evicted', 'NotEvicted', true],
    ['^Evicted$', 'NotEvicted', false],
    ['Preempting', 'Preempted', false],
    ['Evicted|Killing', 'Killing', true],
    ['^(Evicted|Preempted)$', 'Preempted', true],
    // Flags last to the end of their group, across `|`.
    ['(?i)evicted', 'EVICTED', true],
    ['a(?i)b|c', 'C', true],
    ['a(?i)b|c', 'AB', false],
    ['(?i:a)b', 'AB', false],
    // Go's classes are ASCII; `.` stops only at \n.
    ['\\s', '\u00a0', false],
    ['\\w', 'é', false],
    ['\\pL', 'é', true],
    ['\\p{Greek}', 'α', true],
    ['[[:alpha:]]+$', '12ab', true],
    ['[^\\d]', '123', false],
    ['.', '\r', true],
    ['.', '\n', false],
    ['(?s).', '\n', true],
    ['^b$', 'a\nb\nc', false],
    ['(?m)^b$', 'a\nb\nc', true],
    ['\\Aa\\z', 'a', true],
    ['\\Qa.b\\E', 'axb', false],
    ['\\Qa.b\\E', 'a.b', true],
    ['\\x{41}\\x42\\101', 'ABA', true],
    ['\\-\\.', '-.', true],
    ['[]a]', ']', true],
    ['a{,2}', 'a{,2}', true],
    ['^*a', 'a', true],
    ['(?P<name>a)(?<other>b)', 'ab', true],
    ['', 'anything', true],
    // What RE2 refuses never matches (the exporter ignores the compile error).
    ['(?=a)', 'a', false],
    ['(?!a)', 'b', false],
    ['(a)\\1', 'aa', false],
    ['a**', 'a', false],
    ['a{1001}', 'a', false],
    ['\\Z', '', false],
    ['(a', 'a', false],
    ['a)', 'a', false],
    ['[z-a]', 'a', false],
    ['*a', 'a', false],
    ['[[:nope:]]', 'a', false],
  ])('MatchString(%j, %j) is %s', (pattern, s, expected) => {
    expect(goMatchString(pattern, s)).toBe(expected);
  });
});

describe('exporter route', () => {
  it('an empty route sends nothing', () => {
    expect(routeEvent(parseExporterRoute({}), inKubeSystem)).toEqual([]);
  });

  it('a matching rule sends to its receiver; a drop rule stops the route first', () => {
    const basic = parseExporterRoute({ match: [{ namespace: 'kube-system', receiver: 'osman' }] });
    expect(routeEvent(basic, inKubeSystem)).toEqual(['osman']);
    const dropped = parseExporterRoute({
      drop: [{ namespace: 'kube-system' }],
      match: [{ receiver: 'osman' }],
      routes: [{ match: [{ receiver: 'deeper' }] }],
    });
    expect(routeEvent(dropped, inKubeSystem)).toEqual([]);
  });

  it('match rules are independent; sub-routes run only when every match rule matched', () => {
    const route = parseExporterRoute({
      match: [{ namespace: 'kube-system', receiver: 'osman' }, { receiver: 'any' }],
      routes: [{ match: [{ receiver: 'sub' }] }],
    });
    expect(routeEvent(route, inKubeSystem)).toEqual(['osman', 'any', 'sub']);
    expect(routeEvent(route, { metadata: { namespace: 'default' } })).toEqual(['any']);
  });

  it('two matching rules with one receiver send twice', () => {
    const route = parseExporterRoute({
      match: [{ receiver: 'r' }, { kind: 'Pod', receiver: 'r' }],
    });
    expect(routeEvent(route, { involvedObject: { kind: 'Pod' } })).toEqual(['r', 'r']);
  });

  it('namespace is the event’s own, labels must all be present and match, minCount counts', () => {
    const rule = {
      namespace: '^runners$',
      labels: { team: '^ci$', 'actions-ephemeral-runner': '^True$' },
      minCount: 2,
    };
    const event: RoutableEvent = {
      metadata: { namespace: 'runners' },
      count: 2,
      involvedObject: { labels: { team: 'ci', 'actions-ephemeral-runner': 'True' } },
    };
    expect(ruleMatches(rule, event)).toBe(true);
    expect(ruleMatches(rule, { ...event, count: 1 })).toBe(false);
    expect(ruleMatches(rule, { ...event, involvedObject: { labels: { team: 'ci' } } })).toBe(false);
    expect(ruleMatches(rule, { ...event, metadata: { namespace: 'other-runners' } })).toBe(false);
    // The involved object's namespace is not what `namespace` matches.
    expect(
      ruleMatches(
        { namespace: '^runners$' },
        { metadata: { namespace: 'default' }, involvedObject: {} },
      ),
    ).toBe(false);
  });

  it('an absent field is the empty string, which an unanchored pattern may still match', () => {
    expect(ruleMatches({ host: '.*' }, {})).toBe(true);
    expect(ruleMatches({ host: '^.+$' }, {})).toBe(false);
  });

  it('reads the config as the Go binary does: env expansion, lowercase keys, booleans as text', () => {
    const config = parseExporterConfig(
      [
        'clusterName: ${CLUSTER}',
        'route:',
        '  routes:',
        '    - match:',
        '        - receiver: bus',
        '          Reason: Evicted', // Go ignores it: keys are lowercase field names
        '          reason: "^Evicted$"',
        '          labels: { actions-ephemeral-runner: True }',
        '          minCount: 1',
      ].join('\n'),
      { CLUSTER: 'prod-eu' },
    );
    expect(config.raw['clusterName']).toBe('prod-eu');
    expect(config.ignoredKeys).toEqual(['route.routes[0].match[0].Reason']);
    const rule = config.route.routes[0]?.match[0];
    expect(rule).toEqual({
      receiver: 'bus',
      reason: '^Evicted$',
      labels: { 'actions-ephemeral-runner': 'true' },
      minCount: 1,
    });
    expect(config.invalidPatterns).toEqual([]);
  });

  it('lists patterns Go cannot compile', () => {
    const config = parseExporterConfig('route:\n  match:\n    - reason: "(?=x)"\n');
    expect(config.invalidPatterns.map((p) => p.path)).toEqual(['route.match[0].reason']);
  });

  it('expands the environment like os.ExpandEnv, leaving a regexp `$` alone', () => {
    const env = { A: 'x' };
    expect(expandEnv('$A ${A} ${B}', env)).toBe('x x ');
    expect(expandEnv('"^Evicted$"', env)).toBe('"^Evicted$"');
    expect(expandEnv('^(A|B)$|^C$', env)).toBe('^(A|B)$|^C$');
    expect(expandEnv('end$', env)).toBe('end$');
    expect(expandEnv('${}x', env)).toBe('x');
  });
});
