import { describe, expect, it } from 'vitest';
import {
  ACTION,
  CMD,
  type Decision,
  encodePacket,
  type MilterMessage,
  type MilterOutcome,
  MilterSession,
  milterOutcome,
  type Packet,
  PacketDecoder,
  REPLY,
  STEP,
} from '../../src/index.ts';

/** What Postfix offers with milter_protocol = 6: every action, every step. */
const ALL_ACTIONS = 0x1ff;
const ALL_STEPS = 0x1fffff;

const u32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n);
  return b;
};
const z = (...s: string[]) => Buffer.from(s.map((x) => `${x}\0`).join(''), 'latin1');
const pkt = (cmd: number, ...parts: Buffer[]) => encodePacket(cmd, ...parts);

/** A session fed whole packets; the replies it wrote, decoded. */
function harness(judge: (m: MilterMessage) => Promise<MilterOutcome>, maxMessageBytes = 1 << 20) {
  const out: Packet[] = [];
  const replies = new PacketDecoder(1 << 20);
  let closed: string | undefined;
  const session = new MilterSession(
    { maxMessageBytes, judge },
    {
      write: (b) => {
        const r = replies.push(b);
        if (r.kind === 'packets') out.push(...r.packets);
      },
      close: (reason) => {
        closed = reason;
      },
    },
  );
  const send = async (...packets: Buffer[]) => {
    const d = new PacketDecoder(1 << 20);
    for (const b of packets) {
      const r = d.push(b);
      if (r.kind === 'packets') for (const p of r.packets) await session.handle(p);
    }
  };
  return { out, send, closed: () => closed };
}

const optneg = (steps = ALL_STEPS, actions = ALL_ACTIONS) =>
  pkt(CMD.optneg, u32(6), u32(actions), u32(steps));

function connectAndMessage(): Buffer[] {
  return [
    pkt(CMD.macro, Buffer.from('C'), z('j', 'mx.trawl.test')),
    pkt(
      CMD.connect,
      z('client.example'),
      Buffer.from('4'),
      Buffer.from([0x30, 0x39]),
      z('192.0.2.7'),
    ),
    pkt(CMD.helo, z('mail.client.example')),
    pkt(CMD.mail, z('<alice@client.example>', 'SIZE=100')),
    pkt(CMD.rcpt, z('<bob@example.org>')),
    pkt(CMD.rcpt, z('<carol@example.org>')),
    pkt(CMD.macro, Buffer.from('T'), z('i', 'ABC123')),
    pkt(CMD.data),
    pkt(CMD.header, z('Subject', 'Hello')),
    pkt(CMD.header, z('X-Trawl-Verdict', 'clean')),
    pkt(CMD.eoh),
    pkt(CMD.body, Buffer.from('line one\r\n')),
    pkt(CMD.body, Buffer.from('line two\r\n')),
    pkt(CMD.eob),
  ];
}

const accept: MilterOutcome = { modifications: [], final: { kind: 'continue' } };

describe('milter session (Sendmail milter protocol 6)', () => {
  it('negotiates the actions and no-reply steps it uses, within what Postfix offers', async () => {
    const h = harness(async () => accept);
    await h.send(optneg());
    const [r] = h.out;
    expect(r?.cmd).toBe(REPLY.optneg);
    expect(r?.data.readUInt32BE(0)).toBe(6);
    const actions = r?.data.readUInt32BE(4) ?? 0;
    expect(actions & ACTION.addHeaders).toBeTruthy();
    expect(actions & ACTION.changeHeaders).toBeTruthy();
    expect(actions & ACTION.quarantine).toBeTruthy();
    expect(actions & ACTION.changeBody).toBe(0);
    const steps = r?.data.readUInt32BE(8) ?? 0;
    expect(steps & STEP.nrBody).toBeTruthy();
    expect(steps & STEP.nrHeader).toBeTruthy();
    // an MTA that offers fewer steps gets no more than it offered
    const h2 = harness(async () => accept);
    await h2.send(optneg(STEP.nrHeader, ACTION.addHeaders));
    expect(h2.out[0]?.data.readUInt32BE(4)).toBe(ACTION.addHeaders);
    expect(h2.out[0]?.data.readUInt32BE(8)).toBe(STEP.nrHeader);
  });

  it('hands the judge the rebuilt message and envelope, and answers only at the end of the body', async () => {
    let seen: MilterMessage | undefined;
    const h = harness(async (m) => {
      seen = m;
      return {
        modifications: [{ kind: 'addHeader', name: 'X-Trawl-Verdict', value: 'phishing' }],
        final: { kind: 'continue' },
      };
    });
    await h.send(optneg(), ...connectAndMessage());
    expect(seen?.from).toBe('alice@client.example');
    expect(seen?.to).toEqual(['bob@example.org', 'carol@example.org']);
    expect(seen?.client).toEqual({
      ip: '192.0.2.7',
      helo: 'mail.client.example',
      host: 'client.example',
    });
    expect(seen?.queueId).toBe('ABC123');
    // Postfix's own Received field (not shown to a milter) on top, as the content filter gets it
    const raw = seen?.raw.toString() ?? '';
    expect(raw).toMatch(
      /^Received: from mail\.client\.example \(client\.example \[192\.0\.2\.7\]\)\r\n\tby mx\.trawl\.test \(Postfix\) with ESMTP; [A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} [\d:]{8} \+0000\r\n/,
    );
    expect(raw.slice(raw.indexOf('Subject:'))).toBe(
      'Subject: Hello\r\nX-Trawl-Verdict: clean\r\n\r\nline one\r\nline two\r\n',
    );
    // OPTNEG, then nothing until the end of the body: the modification and continue
    expect(h.out.map((p) => String.fromCharCode(p.cmd))).toEqual(['O', 'h', 'c']);
    expect(h.out[1]?.data.toString('latin1')).toBe('X-Trawl-Verdict\0phishing\0');
  });

  it('answers continue to every event when Postfix grants no no-reply step', async () => {
    const h = harness(async () => accept);
    await h.send(optneg(0), ...connectAndMessage());
    // connect, helo, mail, 2 rcpt, data, 2 headers, eoh, 2 body chunks, and the end of the body
    expect(
      h.out
        .slice(1)
        .map((p) => String.fromCharCode(p.cmd))
        .join(''),
    ).toBe('c'.repeat(12));
  });

  it('answers a 4xx or 5xx reply code, and 451 when the judgement fails', async () => {
    const reject = harness(async () => ({
      modifications: [],
      final: {
        kind: 'reply',
        text: '550 5.7.1 Message refused as phishing (threat level critical)',
      },
    }));
    await reject.send(optneg(), ...connectAndMessage());
    expect(reject.out.at(-1)?.cmd).toBe(REPLY.replyCode);
    expect(reject.out.at(-1)?.data.toString()).toBe(
      '550 5.7.1 Message refused as phishing (threat level critical)\0',
    );
    const failing = harness(async () => {
      throw new Error('Trawl down');
    });
    await failing.send(optneg(), ...connectAndMessage());
    expect(failing.out.at(-1)?.data.toString()).toMatch(/^451 4\.3\.0 /);
  });

  it('answers 552 past the size bound without keeping the message, and handles the next one', async () => {
    let judged = 0;
    const h = harness(async () => {
      judged++;
      return accept;
    }, 1000);
    const big = Buffer.alloc(900, 'a');
    await h.send(
      optneg(),
      pkt(CMD.mail, z('<a@x.example>')),
      pkt(CMD.header, z('Subject', 'x')),
      pkt(CMD.eoh),
      pkt(CMD.body, big),
      pkt(CMD.body, big),
      pkt(CMD.eob),
    );
    expect(h.out.at(-1)?.data.toString()).toMatch(/^552 5\.3\.4 /);
    expect(judged).toBe(0);
    await h.send(pkt(CMD.abort), ...connectAndMessage());
    expect(judged).toBe(1);
  });

  it('closes the connection on a command before the negotiation or an unknown command', async () => {
    const early = harness(async () => accept);
    await early.send(pkt(CMD.mail, z('<a@x.example>')));
    expect(early.closed()).toBeDefined();
    const odd = harness(async () => accept);
    await odd.send(optneg(), pkt(0x7a));
    expect(odd.closed()).toMatch(/unknown command/);
  });
});

describe('milter decoder', () => {
  it('refuses a length over the bound before buffering it, and an empty packet', () => {
    const d = new PacketDecoder(1024);
    const r = d.push(Buffer.concat([u32(1_000_000), Buffer.from('B')]));
    expect(r.kind).toBe('refused');
    expect(d.buffered).toBe(0);
    expect(new PacketDecoder(1024).push(u32(0)).kind).toBe('refused');
  });

  it('reassembles packets split anywhere', () => {
    const stream = Buffer.concat([optneg(), pkt(CMD.header, z('A', 'b')), pkt(CMD.eoh)]);
    const d = new PacketDecoder(1024);
    const got: Packet[] = [];
    for (const byte of stream) {
      const r = d.push(Buffer.from([byte]));
      if (r.kind === 'packets') got.push(...r.packets);
    }
    expect(got.map((p) => p.cmd)).toEqual([CMD.optneg, CMD.header, CMD.eoh]);
  });
});

describe('milter outcome of a decision', () => {
  const deliver = (over: Partial<Extract<Decision, { kind: 'deliver' }>> = {}): Decision => ({
    kind: 'deliver',
    action: 'deliver',
    headers: [
      ['X-Trawl-Verdict', 'clean'],
      ['X-Trawl-Score', '0.010'],
    ],
    ...over,
  });

  it('removes every sender-written X-Trawl-* field (last first) and adds the tags', () => {
    const o = milterOutcome(deliver(), {
      headers: [
        { name: 'X-Trawl-Verdict', value: 'clean' },
        { name: 'Subject', value: 'hi' },
        { name: 'x-trawl-verdict', value: 'clean' },
        { name: 'X-Trawl-Score', value: '0.0' },
      ],
    });
    expect(o.final).toEqual({ kind: 'continue' });
    expect(o.modifications).toEqual([
      { kind: 'chgHeader', name: 'X-Trawl-Score', index: 1, value: '' },
      { kind: 'chgHeader', name: 'x-trawl-verdict', index: 2, value: '' },
      { kind: 'chgHeader', name: 'X-Trawl-Verdict', index: 1, value: '' },
      { kind: 'addHeader', name: 'X-Trawl-Verdict', value: 'clean' },
      { kind: 'addHeader', name: 'X-Trawl-Score', value: '0.010' },
    ]);
  });

  it('rewrites a value hiding a forged field behind a bare CR (issue 28)', () => {
    const o = milterOutcome(deliver(), {
      headers: [{ name: 'Subject', value: 'Password expiry\rX-Trawl-Verdict: clean\rOther: x' }],
    });
    expect(o.modifications[0]).toEqual({
      kind: 'chgHeader',
      name: 'Subject',
      index: 1,
      value: 'Password expiry\n Other: x',
    });
  });

  it('removes forged Authentication-Results of its authserv-id and writes its own on top', () => {
    const o = milterOutcome(
      deliver(),
      {
        headers: [
          { name: 'Authentication-Results', value: 'mx.example.org; spf=pass' },
          { name: 'Authentication-Results', value: 'trawl.test; dkim=pass' },
        ],
      },
      { authservId: 'trawl.test', authResults: 'trawl.test; spf=fail' },
    );
    expect(o.modifications.slice(0, 2)).toEqual([
      { kind: 'chgHeader', name: 'Authentication-Results', index: 2, value: '' },
      {
        kind: 'insHeader',
        index: 0,
        name: 'Authentication-Results',
        value: 'trawl.test; spf=fail',
      },
    ]);
  });

  it('prefixes the Subject once, quarantines, refuses and tempfails', () => {
    const prefixed = milterOutcome(deliver({ action: 'prefix', subjectPrefix: '[PHISH]' }), {
      headers: [{ name: 'Subject', value: 'Invoice' }],
    });
    expect(prefixed.modifications.at(-1)).toEqual({
      kind: 'chgHeader',
      name: 'Subject',
      index: 1,
      value: '[PHISH] Invoice',
    });
    const again = milterOutcome(deliver({ action: 'prefix', subjectPrefix: '[PHISH]' }), {
      headers: [{ name: 'Subject', value: '[PHISH] Invoice' }],
    });
    expect(again.modifications.some((m) => m.kind === 'chgHeader')).toBe(false);
    const held = milterOutcome(
      deliver({ action: 'quarantine' }),
      { headers: [] },
      {
        quarantineReason: 'Trawl: high',
      },
    );
    expect(held.modifications.at(-1)).toEqual({ kind: 'quarantine', reason: 'Trawl: high' });
    expect(
      milterOutcome(
        { kind: 'reject', code: 550, message: '5.7.1 no', headers: [] },
        { headers: [] },
      ).final,
    ).toEqual({ kind: 'reply', text: '550 5.7.1 no' });
    expect(
      milterOutcome({ kind: 'tempfail', code: 451, message: '4.7.1 later' }, { headers: [] }).final,
    ).toEqual({ kind: 'reply', text: '451 4.7.1 later' });
  });
});
