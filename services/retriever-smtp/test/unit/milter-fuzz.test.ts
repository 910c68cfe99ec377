import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { hostileBytes } from '../../../../test/support/hostile-arbitraries.ts';
import {
  CMD,
  encodePacket,
  type MilterMessage,
  MilterSession,
  type Packet,
  PacketDecoder,
} from '../../src/index.ts';

/**
 * Property tests of the milter's decoder and session (a length-prefixed binary protocol is hostile
 * input: any peer that reaches the port writes it). Whatever the bytes and however they are cut:
 * nothing throws out of the decoder or the session, the decoder never holds more than one packet
 * of its bound, the message handed to the judge never exceeds the message bound, and every byte
 * written back is a well-formed packet.
 */

const MAX_PACKET = 4096;
const MAX_MESSAGE = 16 * 1024;
const COMMANDS = Object.values(CMD);

const u32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n >>> 0);
  return b;
};

/** One packet as a hostile peer writes it: a real or unknown command, any data, any length. */
const packet: fc.Arbitrary<Buffer> = fc.oneof(
  // well-formed, with hostile data (NUL, bare CR, overlong lines, invalid UTF-8)
  {
    weight: 6,
    arbitrary: fc
      .tuple(fc.constantFrom(...COMMANDS), hostileBytes(8))
      .map(([cmd, data]) => encodePacket(cmd, data.subarray(0, MAX_PACKET - 1))),
  },
  // a negotiation (short, odd versions)
  {
    weight: 2,
    arbitrary: fc
      .tuple(fc.nat(), fc.nat(), fc.nat(), fc.integer({ min: 0, max: 12 }))
      .map(([v, a, s, n]) =>
        encodePacket(CMD.optneg, Buffer.concat([u32(v), u32(a), u32(s)]).subarray(0, n)),
      ),
  },
  // a length prefix that lies: 0, past the bound, huge, or longer than what follows (truncated)
  {
    weight: 2,
    arbitrary: fc
      .tuple(
        fc.oneof(
          fc.constantFrom(0, 1, MAX_PACKET, MAX_PACKET + 1, 0xffffffff, 0x7fffffff),
          fc.nat(),
        ),
        fc.uint8Array({ maxLength: 64 }),
      )
      .map(([len, rest]) => Buffer.concat([u32(len), Buffer.from(rest)])),
  },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 32 }).map((b) => Buffer.from(b)) },
);

/** A stream: usually a negotiation first (so the session goes past it), then hostile packets. */
const stream = fc
  .tuple(fc.boolean(), fc.array(packet, { maxLength: 40 }))
  .map(([negotiate, ps]) =>
    Buffer.concat([
      ...(negotiate ? [encodePacket(CMD.optneg, u32(6), u32(0x1ff), u32(0x1fffff))] : []),
      ...ps,
    ]),
  );

/** Cut points: the stream as the socket hands it over, in pieces of any size. */
const cuts = fc.array(fc.integer({ min: 1, max: 5000 }), { minLength: 1, maxLength: 20 });

describe('fuzz: the milter decoder and session', () => {
  it('never throws, stays within its bounds, and writes only well-formed packets', async () => {
    await fc.assert(
      fc.asyncProperty(stream, cuts, async (bytes, sizes) => {
        const decoder = new PacketDecoder(MAX_PACKET);
        const written = new PacketDecoder(1 << 20);
        let judged: MilterMessage | undefined;
        let closed = false;
        const session = new MilterSession(
          {
            maxMessageBytes: MAX_MESSAGE,
            judge: async (m) => {
              judged = m;
              expect(m.raw.length).toBeLessThanOrEqual(MAX_MESSAGE);
              return {
                modifications: [
                  { kind: 'addHeader', name: 'X-Trawl-Verdict', value: 'clean' },
                  { kind: 'chgHeader', name: 'X-Trawl-Score', index: 1, value: '' },
                ],
                final: { kind: 'continue' },
              };
            },
          },
          {
            write: (b) => {
              const r = written.push(b);
              expect(r.kind).toBe('packets');
            },
            close: () => {
              closed = true;
            },
          },
        );
        let pos = 0;
        let i = 0;
        while (pos < bytes.length && !closed) {
          const size = sizes[i++ % sizes.length] as number;
          const r = decoder.push(bytes.subarray(pos, pos + size));
          pos += size;
          expect(decoder.buffered).toBeLessThanOrEqual(MAX_PACKET + 4);
          if (r.kind === 'refused') break;
          for (const p of r.packets as Packet[]) {
            expect(p.data.length).toBeLessThan(MAX_PACKET);
            await session.handle(p);
          }
        }
        // whatever happened, a judged message stayed within the bound
        if (judged) expect(judged.raw.length).toBeLessThanOrEqual(MAX_MESSAGE);
        // the replies decode whole: nothing half-written is left
        expect(written.buffered).toBe(0);
      }),
      { numRuns: 300 },
    );
  });

  it('a length prefix past the bound is refused before any of it is held', () => {
    fc.assert(
      fc.property(fc.integer({ min: MAX_PACKET + 1, max: 0xffffffff }), (len) => {
        const d = new PacketDecoder(MAX_PACKET);
        const r = d.push(Buffer.concat([u32(len), Buffer.alloc(100, 0x42)]));
        expect(r.kind).toBe('refused');
        expect(d.buffered).toBe(0);
        // and it stays refused: nothing more is read from that peer
        expect(d.push(encodePacket(CMD.quit)).kind).toBe('refused');
      }),
    );
  });
});
