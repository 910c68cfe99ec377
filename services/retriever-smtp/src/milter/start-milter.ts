import type { Logger } from 'pino';
import type { SmtpFilterService } from '../create-filter-service.ts';
import type { SmtpSettings } from '../settings.ts';
import { listenMilter, type MilterListener } from './listener.ts';
import { milterOutcome } from './outcome.ts';
import type { MilterJudge, MilterOutcome } from './session.ts';

/** Where the milter listens and how large a packet it accepts. */
export interface MilterSettings {
  host: string;
  /** 0: a free port (tests). */
  port: number;
  maxPacketBytes: number;
}

const NOT_QUARANTINED = '451 4.3.0 The message could not be quarantined; try again later';

/**
 * The milter mode of the SMTP filter (TRAWL_SMTP_MODE=milter): Postfix's smtpd hands each message
 * over the milter protocol, and the answer at the end of DATA is the filter's, decided by the same
 * judgement as the content filter (filter.ts: verdict, policy, own authentication check) and
 * carried out by Postfix itself (no re-injection): reject, tempfail, tags added, forged fields
 * removed, quarantine in Postfix's hold queue.
 */
export async function startMilter(
  service: Pick<SmtpFilterService, 'filter' | 'metrics' | 'watch'>,
  o: { settings: SmtpSettings; milter: MilterSettings; logger: Logger },
): Promise<MilterListener> {
  const s = o.settings;
  const judge: MilterJudge = async (m): Promise<MilterOutcome> => {
    const started = process.hrtime.bigint();
    const envelope = {
      from: m.from,
      to: m.to,
      client: m.client ? { ip: m.client.ip, helo: m.client.helo } : undefined,
    };
    const j = await service.filter.judge(m.raw, envelope);
    const d = j.decision;
    const outcome = milterOutcome(d, m, {
      authservId: s.verify_auth ? s.authserv_id : undefined,
      authResults: j.authResults,
      quarantineReason: `Trawl: ${d.kind === 'deliver' ? d.headers.map(([n, v]) => `${n}=${v}`).join(' ') : ''}`,
    });
    if (d.kind === 'deliver' && d.action === 'quarantine') {
      // the original, kept for its release: without the record, no quarantine (Postfix retries)
      if (!(await service.filter.recordQuarantine(d, j.raw, envelope, j.id))) {
        return { modifications: [], final: { kind: 'reply', text: NOT_QUARANTINED } };
      }
    }
    service.filter.count(d);
    service.metrics.duration.observe(Number(process.hrtime.bigint() - started) / 1e9);
    if (m.queueId) o.logger.debug({ queue_id: m.queueId, id: j.id, decision: d.kind }, 'milter');
    return outcome;
  };
  const listener = await listenMilter({
    host: o.milter.host,
    port: o.milter.port,
    maxPacketBytes: o.milter.maxPacketBytes,
    maxMessageBytes: s.max_message_bytes,
    maxClients: s.max_clients,
    judge,
    logger: o.logger,
  });
  service.watch(listener);
  return listener;
}
