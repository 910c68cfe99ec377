import { AnalysisRequestMessage, type JobError, type Topology } from '@trawl/contracts';
import type { Delivery } from '@trawl/platform';
import type { Logger } from 'pino';
import { ORCHESTRATOR_ERROR_CODES } from './errors.ts';
import { jobIdOf } from './job-message.ts';
import type { Settlement } from './settlement.ts';

/** First x-death reason of a dead-lettered message ('rejected', 'delivery_limit', 'expired'...). */
function deathReason(headers: Record<string, unknown>): string | undefined {
  const first = headers['x-first-death-reason'];
  if (typeof first === 'string') return first;
  const deaths = headers['x-death'];
  if (Array.isArray(deaths) && deaths[0] && typeof deaths[0] === 'object') {
    const r = (deaths[0] as { reason?: unknown }).reason;
    if (typeof r === 'string') return r;
  }
  return undefined;
}

export interface DeadLetterDeps {
  topology: Topology;
  settlement: Pick<Settlement, 'failAndAck'>;
  log: Logger;
}

/**
 * The handler of the dead-letter queue: a request rejected as invalid, or delivered more than the
 * queue's delivery limit, fails its job (so that its status is not `processing` for ever).
 */
export function createDeadLetterHandler(deps: DeadLetterDeps): (d: Delivery) => Promise<void> {
  const { topology: t, settlement, log } = deps;
  return async function handleDead(d: Delivery): Promise<void> {
    const jobId = jobIdOf(d.body);
    if (!jobId) {
      log.warn({ routing_key: d.routingKey }, 'dead letter without a job id dropped');
      await d.ack();
      return;
    }
    const jlog = log.child({ job_id: jobId });
    const reason = deathReason(d.headers);
    const error: JobError =
      reason === 'rejected'
        ? {
            code: ORCHESTRATOR_ERROR_CODES.invalidMessage,
            message: 'the analysis request was rejected as invalid',
          }
        : {
            code: ORCHESTRATOR_ERROR_CODES.deliveryLimit,
            message: `the analysis request was delivered more than ${t.deliveryLimit} times without finishing (the orchestrator crashed or could not store the result each time)`,
          };
    const origin = AnalysisRequestMessage.shape.origin.safeParse(
      (d.body as { origin?: unknown } | null)?.origin,
    );
    await settlement.failAndAck(
      d,
      jobId,
      error,
      jlog,
      'could not fail a dead-lettered job: returned to the queue',
      origin.success ? origin.data : undefined,
    );
  };
}
