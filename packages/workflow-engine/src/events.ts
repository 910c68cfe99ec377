import type { StageStatus } from '@trawl/contracts';

/** What the engine reports while it runs, for metrics and logs. Listeners must be cheap. */
export type EngineEvent =
  | { type: 'stage_started'; workflow_id: string; stage: string }
  | {
      type: 'stage_finished';
      workflow_id: string;
      stage: string;
      status: StageStatus;
      duration_ms: number;
      error?: string;
    }
  | {
      type: 'analyzer_started';
      workflow_id: string;
      stage: string;
      analyzer: string;
      attempt: number;
    }
  | {
      type: 'analyzer_finished';
      workflow_id: string;
      stage: string;
      analyzer: string;
      attempt: number;
      status: 'success' | 'failed' | 'timeout';
      duration_ms: number;
      error?: string;
      cached?: boolean;
    }
  | { type: 'provider_started'; workflow_id: string; stage: string; provider: string }
  | {
      type: 'provider_finished';
      workflow_id: string;
      stage: string;
      provider: string;
      status: 'success' | 'failed' | 'timeout';
      duration_ms: number;
      error?: string;
    };
