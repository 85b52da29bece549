import type { Rng } from '../../rng.js';

/** Deterministic ids, GUIDs and hashes in GitHub's shapes, drawn from one seeded stream. */
export class IdSource {
  private readonly counters = new Map<string, number>();

  constructor(private readonly rng: Rng) {}

  /** Increasing ids from a kind-specific base, with small random gaps as on github.com. */
  next(
    kind:
      | 'repo'
      | 'account'
      | 'workflow'
      | 'run'
      | 'job'
      | 'suite'
      | 'installation'
      | 'runner'
      | 'hook'
      | 'scale-set'
      | 'request'
      | 'delivery-seq',
  ): number {
    const current = this.counters.get(kind) ?? BASES[kind];
    const id = current + 1 + this.rng.int(GAPS[kind]);
    this.counters.set(kind, id);
    return id;
  }

  hex(length: number): string {
    let out = '';
    for (let i = 0; i < length; i++) out += HEX[this.rng.int(16)];
    return out;
  }

  /** A version-4-shaped GUID. */
  guid(): string {
    const variant = HEX[8 + this.rng.int(4)] ?? '8';
    return `${this.hex(8)}-${this.hex(4)}-4${this.hex(3)}-${variant}${this.hex(3)}-${this.hex(12)}`;
  }

  token(prefix: 'ghs' | 'ghp'): string {
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
    let out = `${prefix}_`;
    for (let i = 0; i < 36; i++) out += alphabet[this.rng.int(alphabet.length)];
    return out;
  }
}

/** GitHub's opaque node ids: a type prefix and a base64url body. */
export function nodeId(prefix: string, id: number): string {
  return `${prefix}_kwDO${Buffer.from(String(id)).toString('base64url')}`;
}

const HEX = '0123456789abcdef';

const BASES = {
  repo: 700_000_000,
  account: 90_000_000,
  workflow: 80_000_000,
  run: 12_000_000_000,
  job: 33_000_000_000,
  suite: 30_000_000_000,
  installation: 50_000_000,
  runner: 1_000,
  hook: 480_000_000,
  'scale-set': 0,
  request: 0,
  'delivery-seq': 0,
} as const;

const GAPS = {
  repo: 5000,
  account: 5000,
  workflow: 50,
  run: 5000,
  job: 200,
  suite: 5000,
  installation: 500,
  runner: 3,
  hook: 50,
  'scale-set': 1,
  request: 1,
  'delivery-seq': 1,
} as const;
