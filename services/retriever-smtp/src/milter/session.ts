import { valueLines } from '../header-lines.ts';
import { cstr, cstrings, encodePacket, type Packet, u32 } from './codec.ts';
import {
  ACTION,
  CMD,
  MILTER_VERSION,
  REPLY,
  STEP,
  WANTED_ACTIONS,
  WANTED_STEPS,
} from './protocol.ts';

/** One message as the milter saw it, at the end of its body. */
export interface MilterMessage {
  /** The SMTP client (CONNECT address, HELO); undefined when Postfix gave no address. */
  client: { ip: string; helo: string; host: string } | undefined;
  /** MAIL FROM without angle brackets ('' for the null sender). */
  from: string;
  to: string[];
  /** The header fields in order, as latin1 text (one character per byte). */
  headers: { name: string; value: string }[];
  /** The message rebuilt as it arrived: its fields (CRLF), an empty line, its body. */
  raw: Buffer;
  /** Over the message size bound: nothing past it was kept. */
  tooBig: boolean;
  /** Postfix's queue id (macro `i`), for the log. */
  queueId: string | undefined;
}

/** A change to the message, sent before the final answer (each needs its action negotiated). */
export type MilterModification =
  /** `value` '' deletes the field; `index` counts the fields of that name, from 1. */
  | { kind: 'chgHeader'; name: string; index: number; value: string }
  | { kind: 'insHeader'; index: number; name: string; value: string }
  | { kind: 'addHeader'; name: string; value: string }
  | { kind: 'quarantine'; reason: string };

/** What the milter answers Postfix for one message: header modifications and a final reply. */
export interface MilterOutcome {
  modifications: MilterModification[];
  /** `continue`: accept with the modifications; `reply`: `NNN X.Y.Z text` (4xx or 5xx). */
  final: { kind: 'continue' } | { kind: 'reply'; text: string };
}

/** Judges one message at the end of DATA and answers the outcome the session sends back. */
export type MilterJudge = (m: MilterMessage) => Promise<MilterOutcome>;

export interface SessionIo {
  write(b: Buffer): void;
  /** Ends the connection (a protocol error: Postfix applies milter_default_action). */
  close(reason: string): void;
}

const TEMPFAIL = '451 4.3.0 Temporary failure in the Trawl milter';

/** Reply text Postfix takes as is: one line, no NUL, no `%` (a format character to Sendmail). */
function replyText(text: string): string {
  let out = '';
  for (const c of text) out += c < ' ' || c === '\x7f' || c === '%' ? ' ' : c;
  return out.slice(0, 900);
}

/** `<addr>` → `addr` (the first argument of MAIL and RCPT). */
function address(arg: string | undefined): string {
  const a = (arg ?? '').trim();
  return a.startsWith('<') && a.endsWith('>') ? a.slice(1, -1) : a;
}

/**
 * One milter connection: the negotiation, the events of each message, and the decision at the end
 * of its body. The packets come from the decoder (codec.ts) one at a time; `handle` never throws:
 * a malformed packet closes the connection, a failed judgement answers 451.
 */
export class MilterSession {
  private steps = 0;
  private actions = 0;
  private negotiated = false;
  private client: { ip: string; helo: string; host: string } | undefined;
  private helo = '';
  private macros = new Map<string, string>();
  private from = '';
  private to: string[] = [];
  private headers: { name: string; value: string }[] = [];
  private parts: Buffer[] = [];
  private bytes = 0;
  private tooBig = false;
  private closed = false;

  constructor(
    private readonly o: { maxMessageBytes: number; judge: MilterJudge },
    private readonly io: SessionIo,
  ) {}

  /** Answers one packet; resolves when its answer (if any) is written. */
  async handle(p: Packet): Promise<void> {
    if (this.closed) return;
    try {
      await this.dispatch(p);
    } catch (err) {
      // a bug or a malformed packet: never an answer that lets the message through
      this.end(`milter error: ${(err as Error).message}`);
    }
  }

  private end(reason: string): void {
    if (this.closed) return;
    this.closed = true;
    this.io.close(reason);
  }

  /** `continue`, unless the MTA agreed that this step gets no reply. */
  private ack(noReply: number): void {
    if ((this.steps & noReply) === 0) this.io.write(encodePacket(REPLY.continue));
  }

  private resetMessage(): void {
    this.from = '';
    this.to = [];
    this.headers = [];
    this.parts = [];
    this.bytes = 0;
    this.tooBig = false;
  }

  /** Keeps `b` while the message stays within its bound. */
  private keep(b: Buffer): void {
    if (this.tooBig) return;
    if (this.bytes + b.length > this.o.maxMessageBytes) {
      this.tooBig = true;
      this.parts = [];
      this.headers = [];
      return;
    }
    this.bytes += b.length;
    this.parts.push(b);
  }

  private async dispatch(p: Packet): Promise<void> {
    if (!this.negotiated && p.cmd !== CMD.optneg && p.cmd !== CMD.macro) {
      this.end('a command before the negotiation');
      return;
    }
    switch (p.cmd) {
      case CMD.optneg: {
        if (p.data.length < 12) return this.end('short OPTNEG');
        const version = p.data.readUInt32BE(0);
        if (version < 2) return this.end(`milter protocol version ${version}`);
        this.actions = p.data.readUInt32BE(4) & WANTED_ACTIONS;
        this.steps = p.data.readUInt32BE(8) & WANTED_STEPS;
        this.negotiated = true;
        this.io.write(
          encodePacket(
            REPLY.optneg,
            u32(Math.min(version, MILTER_VERSION)),
            u32(this.actions),
            u32(this.steps),
          ),
        );
        return;
      }
      case CMD.macro: {
        const pairs = cstrings(p.data.subarray(1));
        for (let i = 0; i + 1 < pairs.length; i += 2) {
          const name = (pairs[i] as string).replace(/^\{|\}$/g, '');
          if (this.macros.size < 64 || this.macros.has(name))
            this.macros.set(name, (pairs[i + 1] as string).slice(0, 256));
        }
        return;
      }
      case CMD.connect: {
        const nul = p.data.indexOf(0);
        const host = p.data.toString('utf8', 0, nul < 0 ? p.data.length : nul);
        const family = nul >= 0 ? p.data[nul + 1] : undefined;
        // '4' or '6': a port (2 bytes) and the address follow
        if (family === 0x34 || family === 0x36) {
          const [ip] = cstrings(p.data.subarray(nul + 4));
          this.client = ip ? { ip: ip.replace(/^ipv6:/i, ''), helo: '', host } : undefined;
        } else {
          this.client = undefined;
        }
        this.ack(STEP.nrConnect);
        return;
      }
      case CMD.helo: {
        this.helo = (cstrings(p.data)[0] ?? '').slice(0, 255);
        if (this.client) this.client.helo = this.helo;
        this.ack(STEP.nrHelo);
        return;
      }
      case CMD.mail: {
        this.resetMessage();
        this.from = address(cstrings(p.data)[0]);
        this.ack(STEP.nrMail);
        return;
      }
      case CMD.rcpt: {
        if (this.to.length < 1000) this.to.push(address(cstrings(p.data)[0]));
        this.ack(STEP.nrRcpt);
        return;
      }
      case CMD.data:
        this.ack(STEP.nrData);
        return;
      case CMD.header: {
        const [name = '', value = ''] = cstrings(p.data, 'latin1', 2);
        // the field as a mail server reads it: `name: value`, line ends written CRLF
        const text = valueLines(value).join('\r\n');
        this.keep(Buffer.from(`${name}:${text === '' ? '' : ' '}${text}\r\n`, 'latin1'));
        if (!this.tooBig) this.headers.push({ name, value });
        this.ack(STEP.nrHeader);
        return;
      }
      case CMD.eoh:
        this.keep(Buffer.from('\r\n'));
        this.ack(STEP.nrEoh);
        return;
      case CMD.body:
        this.keep(p.data);
        this.ack(STEP.nrBody);
        return;
      case CMD.eob: {
        if (p.data.length > 0) this.keep(p.data);
        await this.decide();
        this.resetMessage();
        return;
      }
      case CMD.abort:
        this.resetMessage();
        return;
      case CMD.quitNc:
        this.resetMessage();
        this.client = undefined;
        this.helo = '';
        this.macros.clear();
        return;
      case CMD.quit:
        this.end('quit');
        return;
      case CMD.unknown:
        this.ack(STEP.nrUnknown);
        return;
      default:
        this.end(`unknown command 0x${p.cmd.toString(16)}`);
    }
  }

  private async decide(): Promise<void> {
    if (this.tooBig) {
      this.reply('552 5.3.4 Message too big for the content filter');
      return;
    }
    // Postfix does not show a milter the Received field it writes on top: the message analysed
    // gets it as the content filter receives it (the same hop for the headers analyzer)
    const received = this.receivedField();
    const message: MilterMessage = {
      client: this.client,
      from: this.from,
      to: this.to,
      headers: this.headers,
      raw: Buffer.concat([received, ...this.parts], received.length + this.bytes),
      tooBig: false,
      queueId: this.macros.get('i'),
    };
    let outcome: MilterOutcome;
    try {
      outcome = await this.o.judge(message);
    } catch {
      this.reply(TEMPFAIL);
      return;
    }
    if (this.closed) return;
    if (outcome.final.kind === 'reply') {
      this.reply(outcome.final.text);
      return;
    }
    for (const m of outcome.modifications) {
      const packet = this.modification(m);
      if (!packet) {
        // an action Postfix did not grant: the decision cannot be carried out
        this.reply(TEMPFAIL);
        return;
      }
      this.io.write(packet);
    }
    this.io.write(encodePacket(REPLY.continue));
  }

  /** `Received:` as Postfix writes it (client, HELO, its name, the recipient when only one). */
  private receivedField(): Buffer {
    const c = this.client;
    if (!c) return Buffer.alloc(0);
    const by = (this.macros.get('j') ?? 'localhost').slice(0, 255);
    const helo = c.helo === '' ? c.host : c.helo;
    const lines = [
      `Received: from ${helo} (${c.host} [${c.ip}])`,
      `\tby ${by} (Postfix) with ESMTP${this.to.length === 1 ? '' : ';'}`,
    ];
    if (this.to.length === 1) lines.push(`\tfor <${this.to[0]}>;`);
    lines[lines.length - 1] += ` ${new Date().toUTCString().replace('GMT', '+0000')}`;
    return Buffer.from(`${lines.map((l) => l.replace(/[\r\n]/g, ' ')).join('\r\n')}\r\n`, 'latin1');
  }

  private reply(text: string): void {
    const t = replyText(text);
    if (!/^[45]\d\d /.test(t)) {
      this.io.write(encodePacket(REPLY.tempfail));
      return;
    }
    this.io.write(encodePacket(REPLY.replyCode, cstr(t)));
  }

  private modification(m: MilterModification): Buffer | undefined {
    const has = (a: number) => (this.actions & a) !== 0;
    switch (m.kind) {
      case 'chgHeader':
      case 'insHeader': {
        const change = m.kind === 'chgHeader';
        if (!has(change ? ACTION.changeHeaders : ACTION.addHeaders)) return undefined;
        return encodePacket(
          change ? REPLY.chgHeader : REPLY.insHeader,
          u32(m.index),
          cstr(m.name, 'latin1'),
          cstr(m.value, 'latin1'),
        );
      }
      case 'addHeader':
        if (!has(ACTION.addHeaders)) return undefined;
        return encodePacket(REPLY.addHeader, cstr(m.name, 'latin1'), cstr(m.value, 'latin1'));
      case 'quarantine':
        if (!has(ACTION.quarantine)) return undefined;
        return encodePacket(REPLY.quarantine, cstr(replyText(m.reason)));
    }
  }
}
