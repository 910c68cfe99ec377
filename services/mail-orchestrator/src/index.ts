export {
  buildMailOrchestrator,
  type MailOrchestrator,
  type MailOrchestratorDeps,
  type MailOrchestratorOptions,
  SERVICE_NAME,
} from './app.ts';
export {
  GatewayAuthError,
  GatewayMisconfiguredError,
  GatewayRefusedError,
  GatewayUnavailableError,
  MAIL_ERRORS,
} from './errors.ts';
export {
  createGatewayClient,
  type GatewayClient,
  GatewayProblem,
  refusesTheMessage,
  type SubmitOutcome,
} from './gateway-client.ts';
export { contentHash, messageIdOf, messageKey } from './message-key.ts';
export type { Outcome } from './message-processor.ts';
export { createMailMetrics, type MailMetrics } from './metrics.ts';
export type { PassReport } from './poller.ts';
export {
  failedResult,
  unanalyzedResult,
  unanalyzedVerdictRequest,
  verdictRequest,
} from './verdicts.ts';
