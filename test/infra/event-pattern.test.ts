/**
 * sim/aws/event-pattern.ts against the examples of the EventBridge User Guide ("Event patterns"
 * and "Content filtering in Amazon EventBridge event patterns"), on its sample EC2 event.
 */
import {
  EventPatternError,
  matchesEventPattern,
  validateEventPattern,
} from '../../sim/aws/event-pattern.js';

const event = {
  version: '0',
  id: '6a7e8feb-b491-4cf7-a9f1-bf3703467718',
  'detail-type': 'EC2 Instance State-change Notification',
  source: 'aws.ec2',
  account: '111122223333',
  time: '2017-12-22T18:43:48Z',
  region: 'us-west-1',
  resources: [
    'arn:aws:ec2:us-west-1:123456789012:instance/i-1234567890abcdef0',
    'arn:aws:ec2:us-west-1:123456789012:instance/i-0abcdef1234567890',
  ],
  detail: {
    'instance-id': 'i-1234567890abcdef0',
    state: 'terminated',
    'c-count': 5,
    'd-count': 3,
    'x-limit': 301.8,
    'source-ip': '10.0.0.33',
    FileName: 'image.png',
    location: null,
    note: '',
    tags: [
      { key: 'team', value: 'ci' },
      { key: 'env', value: 'prod' },
    ],
  },
};

const cases: [string, unknown, boolean][] = [
  // Exact values, and what they are not.
  ['source exact', { source: ['aws.ec2'] }, true],
  ['source is case-sensitive', { source: ['AWS.EC2'] }, false],
  ['any of several values', { detail: { state: ['running', 'terminated'] } }, true],
  ['every key must match', { source: ['aws.ec2'], detail: { state: ['running'] } }, false],
  ['a field the event lacks', { detail: { missing: ['x'] } }, false],
  ['numbers by value', { detail: { 'x-limit': [301.8] } }, true],
  ['a number is not its string', { detail: { 'c-count': ['5'] } }, false],
  ['null matches null', { detail: { location: [null] } }, true],
  ['empty string matches empty string', { detail: { note: [''] } }, true],
  ['null is not the empty string', { detail: { location: [''] } }, false],
  // Arrays in the event: any element.
  [
    'array intersection',
    { resources: ['arn:aws:ec2:us-west-1:123456789012:instance/i-0abcdef1234567890'] },
    true,
  ],
  ['no element matches', { resources: ['arn:aws:ec2:us-west-1:123456789012:instance/i-f'] }, false],
  ['array of objects, one element', { detail: { tags: { key: ['env'], value: ['prod'] } } }, true],
  [
    'array of objects, not across elements',
    { detail: { tags: { key: ['team'], value: ['prod'] } } },
    false,
  ],
  // Prefix and suffix.
  ['prefix', { time: [{ prefix: '2017-12-22' }] }, true],
  ['prefix miss', { time: [{ prefix: '2017-10-02' }] }, false],
  [
    'prefix ignoring case',
    { detail: { state: [{ prefix: { 'equals-ignore-case': 'TERM' } }] } },
    true,
  ],
  ['suffix', { detail: { FileName: [{ suffix: '.png' }] } }, true],
  ['suffix miss', { detail: { FileName: [{ suffix: '.jpg' }] } }, false],
  [
    'suffix ignoring case',
    { detail: { FileName: [{ suffix: { 'equals-ignore-case': '.PNG' } }] } },
    true,
  ],
  // Anything-but.
  ['anything-but value', { detail: { state: [{ 'anything-but': 'initializing' }] } }, true],
  [
    'anything-but the value itself',
    { detail: { state: [{ 'anything-but': 'terminated' }] } },
    false,
  ],
  ['anything-but numbers', { detail: { 'c-count': [{ 'anything-but': [100, 200, 300] }] } }, true],
  [
    'anything-but list containing it',
    { detail: { 'c-count': [{ 'anything-but': [5, 6] }] } },
    false,
  ],
  ['anything-but prefix', { detail: { state: [{ 'anything-but': { prefix: 'init' } }] } }, true],
  [
    'anything-but prefix hit',
    { detail: { state: [{ 'anything-but': { prefix: 'term' } }] } },
    false,
  ],
  ['anything-but suffix', { detail: { FileName: [{ 'anything-but': { suffix: '.txt' } }] } }, true],
  [
    'anything-but ignoring case',
    { detail: { state: [{ 'anything-but': { 'equals-ignore-case': ['TERMINATED'] } }] } },
    false,
  ],
  [
    'anything-but wildcard',
    { detail: { FileName: [{ 'anything-but': { wildcard: '*.png' } }] } },
    false,
  ],
  ['anything-but needs the field', { detail: { missing: [{ 'anything-but': 'x' }] } }, false],
  // Numeric.
  [
    'numeric range (the guide’s example)',
    {
      detail: {
        'c-count': [{ numeric: ['>', 0, '<=', 5] }],
        'd-count': [{ numeric: ['<', 10] }],
        'x-limit': [{ numeric: ['=', 3.018e2] }],
      },
    },
    true,
  ],
  ['numeric out of range', { detail: { 'c-count': [{ numeric: ['>', 5] }] } }, false],
  ['numeric is not for strings', { detail: { state: [{ numeric: ['>', 0] }] } }, false],
  // Exists.
  ['exists true', { detail: { state: [{ exists: true }] } }, true],
  ['exists false on a present field', { detail: { state: [{ exists: false }] } }, false],
  ['exists false on an absent field', { detail: { 'no-such-field': [{ exists: false }] } }, true],
  ['exists true on an absent field', { detail: { 'no-such-field': [{ exists: true }] } }, false],
  // equals-ignore-case and wildcard.
  [
    'equals-ignore-case',
    { 'detail-type': [{ 'equals-ignore-case': 'ec2 instance state-change notification' }] },
    true,
  ],
  [
    'equals-ignore-case is still equality',
    { 'detail-type': [{ 'equals-ignore-case': 'ec2 instance' }] },
    false,
  ],
  ['wildcard', { resources: [{ wildcard: 'arn:aws:ec2:us-west-1:*:instance/*' }] }, true],
  ['wildcard is anchored', { resources: [{ wildcard: 'aws:ec2:*' }] }, false],
  ['escaped star is literal', { detail: { FileName: [{ wildcard: 'image\\*png' }] } }, false],
  // $or.
  [
    '$or (the guide’s example)',
    {
      detail: {
        $or: [
          { 'c-count': [{ numeric: ['>', 0, '<=', 5] }] },
          { 'd-count': [{ numeric: ['<', 10] }] },
          { 'x-limit': [{ numeric: ['=', 3.018e2] }] },
        ],
      },
    },
    true,
  ],
  [
    '$or with no alternative matching',
    { detail: { $or: [{ state: ['running'] }, { 'c-count': [1] }] } },
    false,
  ],
  [
    '$or and the other keys together',
    {
      source: ['aws.ec2'],
      $or: [{ 'detail-type': ['nope'] }, { detail: { state: ['terminated'] } }],
    },
    true,
  ],
  [
    '$or does not excuse the other keys',
    {
      source: ['aws.s3'],
      $or: [{ 'detail-type': ['nope'] }, { detail: { state: ['terminated'] } }],
    },
    false,
  ],
];

describe('EventBridge event patterns', () => {
  it.each(cases)('%s', (_name, pattern, expected) => {
    expect(matchesEventPattern(pattern, event)).toBe(expected);
  });

  it.each<[string, unknown]>([
    ['a value outside an array', { source: 'aws.ec2' }],
    ['an empty array', { source: [] }],
    ['an unknown matcher', { source: [{ regex: '.*' }] }],
    ['a numeric range upside down', { detail: { n: [{ numeric: ['<', 1, '>', 0] }] } }],
    ['consecutive wildcards', { source: [{ wildcard: 'a**b' }] }],
    ['$or with one alternative', { $or: [{ source: ['x'] }] }],
    ['exists with a string', { source: [{ exists: 'yes' }] }],
  ])('refuses %s', (_name, pattern) => {
    expect(() => validateEventPattern(pattern)).toThrow(EventPatternError);
  });
});
