import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { RULE_LIST } from '../../../functions/domain/decide/rules/index.js';
import { DEFAULT_POLICY, parsePolicy } from '../../../functions/domain/policy/policy.js';

/** The YAML block of README.md's "The policy" section: the table of rules and their defaults. */
function readmePolicyBlock(): string {
  const readme = readFileSync('README.md', 'utf8');
  const section = readme.split(/^## The policy$/m)[1]?.split(/^## /m)[0] ?? '';
  const block = /```yaml\n([\s\S]*?)```/.exec(section)?.[1];
  if (block === undefined) throw new Error('no yaml block in README.md "## The policy"');
  return block;
}

describe("README.md's policy table follows the rule list", () => {
  const doc = parse(readmePolicyBlock()) as { rules: Record<string, unknown> };

  it('names every rule, once, in the order decide runs them', () => {
    expect(Object.keys(doc.rules)).toEqual(RULE_LIST.map((r) => r.name));
  });

  it.each(RULE_LIST.map((r) => [r.name, r] as const))(
    '%s: every setting with its default (dryRun aside, said once below the table)',
    (name, rule) => {
      const { dryRun, ...shown } = rule.defaults;
      expect(dryRun).toBe(false);
      expect(doc.rules[name]).toEqual(shown);
    },
  );

  it('is a policy the parser accepts, and its rules are the defaults', () => {
    const r = parsePolicy(readmePolicyBlock());
    expect(r.ok && r.value.rules).toEqual(DEFAULT_POLICY.rules);
  });
});
