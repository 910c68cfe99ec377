import { connect } from 'node:net';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import {
  CMD,
  createSmtpMetrics,
  type Decision,
  encodePacket,
  type Filter,
  type Packet,
  PacketDecoder,
  REPLY,
  SmtpSettings,
  startMilter,
} from '../../src/index.ts';
import { silentLogger } from '../../src/testing/index.ts';

const u32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n);
  return b;
};
const z = (...s: string[]) => Buffer.from(s.map((x) => `${x}\0`).join(''), 'latin1');

const QUARANTINE: Decision = {
  kind: 'deliver',
  action: 'quarantine',
  headers: [
    ['X-Trawl-Verdict', 'phishing'],
    ['X-Trawl-Threat-Level', 'high'],
  ],
};

/** The milter on a free port, its judgement given; one message sent as Postfix sends it. */
async function oneMessage(decision: Decision, recorded: boolean): Promise<Packet[]> {
  const settings = SmtpSettings.parse({
    mode: 'milter',
    mail_orchestrator_url: 'http://127.0.0.1:9',
    verify_auth: false,
    policy: 'high=quarantine',
  });
  const filter = {
    judge: async (raw: Buffer) => ({ id: 'ref', raw, decision, authResults: undefined }),
    recordQuarantine: async () => recorded,
    count: () => undefined,
  } as unknown as Filter;
  const listener = await startMilter(
    { filter, metrics: createSmtpMetrics(new Registry()), watch: () => undefined },
    {
      settings,
      milter: { host: '127.0.0.1', port: 0, maxPacketBytes: 65_536 },
      logger: silentLogger,
    },
  );
  try {
    const socket = connect(listener.address.port, '127.0.0.1');
    const replies: Packet[] = [];
    const decoder = new PacketDecoder(1 << 20);
    const done = new Promise<void>((resolve) => {
      socket.on('data', (c: Buffer) => {
        const r = decoder.push(c);
        if (r.kind !== 'packets') return;
        replies.push(...r.packets);
        // the answer at the end of the body: continue, a reply code, or tempfail
        if (
          r.packets.some((p) =>
            ([REPLY.continue, REPLY.replyCode, REPLY.tempfail] as number[]).includes(p.cmd),
          )
        )
          resolve();
      });
    });
    socket.write(
      Buffer.concat([
        encodePacket(CMD.optneg, u32(6), u32(0x1ff), u32(0x1fffff)),
        encodePacket(CMD.mail, z('<a@x.example>')),
        encodePacket(CMD.rcpt, z('<b@y.example>')),
        encodePacket(CMD.header, z('Subject', 'Your account')),
        encodePacket(CMD.eoh),
        encodePacket(CMD.body, Buffer.from('Verify now\r\n')),
        encodePacket(CMD.eob),
      ]),
    );
    await done;
    socket.destroy();
    return replies;
  } finally {
    await listener.close();
  }
}

describe('the milter carries out the judgement over TCP', () => {
  it('holds a quarantined message once its original is recorded', async () => {
    const replies = await oneMessage(QUARANTINE, true);
    const cmds = replies.map((p) => String.fromCharCode(p.cmd));
    expect(cmds).toEqual(['O', 'h', 'h', 'q', 'c']);
    expect(replies[3]?.data.toString()).toContain('X-Trawl-Threat-Level=high');
  });

  it('answers 451 instead when the original could not be recorded (never held unrecorded)', async () => {
    const replies = await oneMessage(QUARANTINE, false);
    expect(replies.map((p) => String.fromCharCode(p.cmd))).toEqual(['O', 'y']);
    expect(replies[1]?.data.toString()).toMatch(
      /^451 4\.3\.0 The message could not be quarantined/,
    );
  });
});
