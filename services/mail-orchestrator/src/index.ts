export {
  buildMailOrchestrator,
  type MailOrchestrator,
  type MailOrchestratorDeps,
  type MailOrchestratorOptions,
  SERVICE_NAME,
} from './app.ts';
export {
  type MailOrchestratorDescription,
  type MailOrchestratorPorts,
  type MailOrchestratorSettings,
  mailOrchestratorSettings,
  type RunningMailOrchestrator,
  startMailOrchestrator,
} from './assembly.ts';
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
  type GatewayTransport,
  refusesTheMessage,
  type SubmitOutcome,
} from './gateway-client.ts';
export { type InProcessGateway, inProcessTransport } from './in-process-gateway.ts';
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
