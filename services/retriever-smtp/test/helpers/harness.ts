import { deriveCredential } from '@trawl/contracts';
import type { DNSResolver } from 'mailauth';
import { pino } from 'pino';
import { expect } from 'vitest';
import { requireComponent } from '../../../../test/support/require-component.ts';
import {
  createSmtpFilter,
  type MilterListener,
  type SmtpFilterService,
  SmtpSettings,
  type SmtpSettingsInput,
  startMilter,
} from '../../src/index.ts';
import {
  freePort,
  PLATFORM_KEY,
  postfixAvailable,
  type SmtpSink,
  smtpClient,
} from '../../src/testing/index.ts';

/** Whether the Postfix tests run here: CI (which installs postfix) fails without it, a laptop skips. */
export function postfixHere(): boolean {
  return requireComponent(
    'Postfix',
    postfixAvailable(),
    'apt-get install postfix (scripts/ci.sh does it, debconf "No configuration"); the tests start it as root',
  );
}

const RETRIEVER = 'smtp';
const silent = pino({ level: 'silent' });

/** The filter in this process, its HTTP side listening on `httpPort`, SMTP on `smtpPort`. */
export async function startFilter(
  settings: Omit<SmtpSettingsInput, 'mail_orchestrator_url'> & { mailPort: number },
  ports: { smtpPort: number; httpPort: number },
  name = RETRIEVER,
  resolver?: DNSResolver,
): Promise<SmtpFilterService> {
  const { mailPort, ...rest } = settings;
  const s = SmtpSettings.parse({
    // the authentication check is tested with its own DNS server (inline-auth.test.ts)
    verify_auth: false,
    ...rest,
    mail_orchestrator_url: `http://127.0.0.1:${mailPort}`,
    listen_host: '127.0.0.1',
  });
  const f = createSmtpFilter(s, {
    logger: silent,
    credential: deriveCredential(PLATFORM_KEY, { kind: 'retriever', id: name }),
    smtpPort: ports.smtpPort,
    ...(resolver ? { resolver } : {}),
  });
  await f.app.listen({ host: '127.0.0.1', port: ports.httpPort });
  await f.start();
  return f;
}

/**
 * The filter in milter mode in this process: its HTTP side on `httpPort`, the milter on
 * `milterPort` (Postfix's smtpd_milters); `stop()` closes both.
 */
export async function startMilterFilter(
  settings: Omit<SmtpSettingsInput, 'mail_orchestrator_url' | 'mode'> & { mailPort: number },
  ports: { milterPort: number; httpPort: number },
  name = RETRIEVER,
  resolver?: DNSResolver,
): Promise<SmtpFilterService & { milter: MilterListener }> {
  const { mailPort, ...rest } = settings;
  const s = SmtpSettings.parse({
    verify_auth: false,
    ...rest,
    mode: 'milter',
    mail_orchestrator_url: `http://127.0.0.1:${mailPort}`,
  });
  const f = createSmtpFilter(s, {
    logger: silent,
    credential: deriveCredential(PLATFORM_KEY, { kind: 'retriever', id: name }),
    ...(resolver ? { resolver } : {}),
  });
  await f.app.listen({ host: '127.0.0.1', port: ports.httpPort });
  const milter = await startMilter(f, {
    settings: s,
    milter: { host: '127.0.0.1', port: ports.milterPort, maxPacketBytes: 128 * 1024 },
    logger: silent,
  });
  return {
    ...f,
    milter,
    async stop() {
      await milter.close();
      await f.stop();
    },
  };
}

type Ports<N extends number, T extends number[] = []> = T['length'] extends N
  ? T
  : Ports<N, [number, ...T]>;

/** `n` distinct free ports, as a tuple of `n` numbers. */
export async function ports<N extends number>(n: N): Promise<Ports<N>> {
  const out: number[] = [];
  while (out.length < n) {
    const p = await freePort();
    if (!out.includes(p)) out.push(p);
  }
  return out as Ports<N>;
}

/** What a test started: a filter (stop), a Postfix (destroy), a server or a stack (close). */
type Started =
  | { stop(): Promise<unknown> }
  | { destroy(): Promise<unknown> }
  | { close(): Promise<unknown> }
  | undefined;

/** Stops what a test started, in the order given (what was never started is passed over). */
export async function stopAll(...started: Started[]): Promise<void> {
  for (const s of started) {
    if (s === undefined) continue;
    if ('stop' in s) await s.stop();
    else if ('destroy' in s) await s.destroy();
    else await s.close();
  }
}

export const HAM = (n: string | number) =>
  [
    'From: Alice Martin <alice@colleagues.example>',
    'To: bob@example.org',
    `Subject: Minutes of the planning meeting ${n}`,
    `Message-ID: <ham-${n}@colleagues.example>`,
    'Date: Mon, 2 Nov 2026 09:00:00 +0000',
    'Content-Type: text/plain; charset=utf-8',
    '',
    'Hi Bob,',
    '',
    `attached are the notes from meeting ${n}. Next one is on Thursday at 10.`,
    '',
    'Alice',
    '',
  ].join('\r\n');

export const PHISH = (n: string | number) =>
  [
    'From: "PayPal Security" <security@paypa1-verify.example>',
    'To: bob@example.org',
    'Subject: Your account has been locked - verify within 24 hours',
    `Message-ID: <phish-${n}@paypa1-verify.example>`,
    'Date: Mon, 2 Nov 2026 10:00:00 +0000',
    'Content-Type: text/plain; charset=utf-8',
    '',
    'Dear customer, unauthorized access was detected on your account. Verify your password now at',
    'http://paypa1-verify.example/login or your account will be suspended within 24 hours.',
    'Confirm your credit card details and social security number immediately.',
    '',
  ].join('\r\n');

/** An SMTP client of Postfix's public port. */
export function client(port: number, pool = false) {
  return smtpClient(port, pool ? 8 : 0);
}

/** The copies of a message (by Message-ID) at the sink, and a wait for the first (30 s). */
export function arrivals(sink: () => SmtpSink) {
  const arrivedWith = (messageId: string) =>
    sink().messages.filter((m) => m.header('message-id') === `<${messageId}>`);
  const arrival = async (messageId: string) => {
    await expect
      .poll(() => arrivedWith(messageId).length, { timeout: 30_000, interval: 50 })
      .toBeGreaterThan(0);
    return arrivedWith(messageId);
  };
  return { arrivedWith, arrival };
}

/** A job id as Trawl writes it in X-Trawl-Job. */
export const JOB_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** The envelopes of HAM and PHISH. */
export const ALICE = { from: 'alice@colleagues.example', to: ['bob@example.org'] };
export const PHISHER = { from: 'security@paypa1-verify.example', to: ['bob@example.org'] };
/** What a refused send answered (undefined: accepted). */
export type SendError = { responseCode?: number; response?: string };

/** Sends one message to a Postfix on its own connection; the refusal, or undefined. */
export async function sendTo(
  pf: { port: number },
  envelope: typeof ALICE,
  raw: string,
): Promise<SendError | undefined> {
  const t = client(pf.port);
  try {
    await t.sendMail({ envelope, raw });
    return undefined;
  } catch (err) {
    return err as SendError;
  } finally {
    t.close();
  }
}
