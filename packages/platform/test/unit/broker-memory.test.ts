import { describe, expect, it } from 'vitest';
import { createMemoryBroker, type MemoryBroker, topicMatches } from '../../src/index.ts';
import { brokerConformance } from '../../src/testing/index.ts';

brokerConformance('memory', async () => {
  const server = createMemoryBroker();
  const opened: MemoryBroker[] = [server];
  return {
    prefix: 'mem',
    async connect() {
      const b = server.connect();
      opened.push(b);
      return b;
    },
    dropConnection: (b) => (b as MemoryBroker).dropConnection(50),
    async cleanup() {
      for (const b of opened) await b.close();
    },
  };
});

describe('topic matching', () => {
  it.each([
    ['a.*', 'a.b', true],
    ['a.*', 'a', false],
    ['a.*', 'a.b.c', false],
    ['a.#', 'a', true],
    ['a.#', 'a.b.c', true],
    ['#', '', true],
    ['#', 'x.y', true],
    ['*.b.#', 'a.b', true],
    ['*.b.#', 'b', false],
    ['a.#.c', 'a.c', true],
    ['a.#.c', 'a.x.y.c', true],
    ['a.#.c', 'a.x.y.d', false],
    ['a.b', 'a.b', true],
    ['a.b', 'a.bc', false],
  ])('%s matches %s: %s', (pattern, key, expected) => {
    expect(topicMatches(pattern, key)).toBe(expected);
  });
});
