/**
 * Work keyed by a name runs one at a time per key in this process, in arrival order (chunks of one upload write the
 * same partial bytes). Across processes the upload stream's expected revision serialises them.
 */
export class KeyedLock {
  private readonly tails = new Map<string, Promise<void>>();
  async run<T>(key: string, work: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    let done!: () => void;
    const tail = new Promise<void>((resolve) => (done = resolve));
    this.tails.set(key, tail);
    await previous;
    try {
      return await work();
    } finally {
      done();
      if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }
}
