import type {
  AnalyzerAnswer,
  Email,
  EnrichmentResult,
  EnrichRequest,
  Topology,
} from '@trawl/contracts';
import type { Broker, Cache, Store } from '@trawl/platform';
import type { CompiledWorkflow } from '@trawl/workflow-engine';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { ConfigState } from './config-state.ts';
import type { GatewayOptions } from './options.ts';
import type { ReleaseDelivery } from './quarantine-release.ts';

/** What an online backup wrote (embedded mode). */
export interface BackupResult {
  /** The file written, on the server's disk. */
  file: string;
  bytes: number;
  created_at: string;
}

/** Calls plugins: the HTTP plugin client in scale-out mode, an in-process invoker in embedded mode. */
export interface PluginInvoker {
  analyze(
    id: string,
    email: Email,
    o: { signal: AbortSignal; timeoutMs: number },
  ): Promise<AnalyzerAnswer>;
  enrich(
    id: string,
    req: EnrichRequest,
    o: { signal: AbortSignal; timeoutMs: number },
  ): Promise<EnrichmentResult>;
  health?(id: string): Promise<{ ok: boolean; latency_ms: number; error?: string }>;
}

/** What the gateway is built from: options, store, broker, cache, configuration, invoker. */
export interface GatewayDeps {
  config: GatewayOptions;
  store: Store;
  broker: Broker;
  cache: Cache;
  topology: Topology;
  configState: ConfigState<CompiledWorkflow>;
  invoker: PluginInvoker;
  logger?: Logger;
  clock?: () => Date;
  version: string;
  /**
   * Other registries whose metrics /metrics also shows (embedded mode: the orchestrators of the same
   * process, so one scrape sees everything). Read at every scrape: entries may be added later.
   */
  metricsRegistries?: readonly Registry[];
  /** An online database backup (embedded mode, PGlite): enables POST /api/v1/system/backup. */
  backup?: () => Promise<BackupResult>;
  /**
   * Trains the classifier from a job's analyst feedback (learnFeedback of @trawl/investigation, issue
   * 17); without it, feedback is stored and not learnt.
   */
  learnFeedback?: (jobId: string) => Promise<{ outcome: string }>;
  /**
   * Unlearns every feedback label a user gave and decides their jobs again (forgetTeacher of
   * @trawl/investigation, issue 28); absent: `POST /feedback/teachers/{user}/forget` answers 503.
   */
  forgetTeacher?: (user: string) => Promise<{ jobs: number; changed: number }>;
  /**
   * Has the filter that quarantined a message deliver it (POST <filter>/internal/release); without
   * it, a release answers 503. Built from TRAWL_MAIL_RETRIEVERS (quarantine-release.ts).
   */
  releaseQuarantined?: ReleaseDelivery;
  /** The built web console's folder (default: @trawl/console's dist); null serves no console. */
  consoleDir?: string | null;
}
