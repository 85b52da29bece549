/** Deterministic identifiers drawn from the seeded Rng. */
import type { Rng } from '../rng.js';

export function uuid(rng: Rng): string {
  const hex = (n: number) =>
    Array.from({ length: n }, () => '0123456789abcdef'[rng.int(16)] as string).join('');
  return `${hex(8)}-${hex(4)}-4${hex(3)}-${'89ab'[rng.int(4)]}${hex(3)}-${hex(12)}`;
}

export function hexId(rng: Rng, length: number): string {
  return Array.from({ length }, () => '0123456789abcdef'[rng.int(16)] as string).join('');
}
