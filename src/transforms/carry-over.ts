import type { Bundle } from './compile.js';
import type { SetAside } from './set-aside.js';

/** How many versions of one mapping are kept set aside (the newest). */
const SET_ASIDE_PER_MAPPING = 8;

/**
 * What a restarted transform process is given by the one before it (docs/transforms.md#isolation):
 * each mapping's last good bundle, as the process reported it, and the new code that ended a
 * process while it loaded (set-aside.ts).
 */
export class CarryOver {
  /** Each mapping's last good bundle: mappings of one module share one copy. */
  readonly bundles = new Map<string, Bundle>();
  private readonly loading = new Map<string, string>();
  private readonly setAside = new Map<string, string[]>();

  /** Keeps mapping `key`'s bundle, loaded or swapped in. */
  keep(key: string, bundle: Bundle): void {
    const same = [...this.bundles.values()].find((other) => other.code === bundle.code);
    this.bundles.set(key, same?.mapText === bundle.mapText ? same : bundle);
  }

  /** A `loading` message: a mapping's new code (its hash) is being loaded, or (no hash) no longer is. */
  loads(key: string, hash: string | undefined): void {
    if (hash === undefined) this.loading.delete(key);
    else this.loading.set(key, hash);
  }

  /** The process ended: the code it was loading is set aside. Answers those code's mappings. */
  ended(): string[] {
    const keys = [...this.loading.keys()];
    for (const [key, hash] of this.loading) {
      const hashes = this.setAside.get(key) ?? [];
      if (!hashes.includes(hash)) hashes.push(hash);
      this.setAside.set(key, hashes.slice(-SET_ASIDE_PER_MAPPING));
    }
    this.loading.clear();
    return keys;
  }

  /** The code the next process keeps out, by mapping. */
  setAsideList(): SetAside {
    return Object.fromEntries(this.setAside);
  }
}
