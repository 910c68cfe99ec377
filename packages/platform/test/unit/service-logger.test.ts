import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createServiceLogger, serviceChild } from '../../src/index.ts';

function capture() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, cb) {
      lines.push(String(chunk));
      cb();
    },
  });
  return { lines, stream };
}

const count = (line: string, key: string) => line.split(`"${key}":`).length - 1;

describe('log lines carried a duplicate "service" key', () => {
  it('a service app binding its name to its main.ts logger writes the key once', () => {
    const { lines, stream } = capture();
    serviceChild(
      createServiceLogger('mail-orchestrator', 'info', stream),
      'mail-orchestrator',
    ).info('hello');
    expect(count(lines[0] ?? '', 'service')).toBe(1);
    expect(JSON.parse(lines[0] ?? '{}').service).toBe('mail-orchestrator');
  });

  it('in one process (embedded mode) another service is a component, never a second service', () => {
    const { lines, stream } = capture();
    const root = createServiceLogger('api-gateway', 'info', stream);
    serviceChild(root, 'analyzer-orchestrator').info('hello');
    expect(count(lines[0] ?? '', 'service')).toBe(1);
    expect(JSON.parse(lines[0] ?? '{}')).toMatchObject({
      service: 'api-gateway',
      component: 'analyzer-orchestrator',
    });
  });
});
