/** What a memo's second level needs: a Map, or a WeakMap for object keys. */
interface Store<K, V> {
  get(key: K): V | undefined;
  set(key: K, value: V): unknown;
}

/**
 * Values made once per pair of keys: the first key (a view, a lexicon, a directory) held weakly,
 * the second in a Map (or what `inner` makes, e.g. a WeakMap).
 */
export class PairMemo<A extends object, B, V> {
  private readonly byFirst = new WeakMap<A, Store<B, V>>();
  private readonly inner: () => Store<B, V>;

  constructor(inner: () => Store<B, V> = () => new Map<B, V>()) {
    this.inner = inner;
  }

  /** The value of (a, b), made by `make` the first time. */
  get(a: A, b: B, make: () => V): V {
    let m = this.byFirst.get(a);
    if (!m) {
      m = this.inner();
      this.byFirst.set(a, m);
    }
    let v = m.get(b);
    if (v === undefined) {
      v = make();
      m.set(b, v);
    }
    return v;
  }
}
