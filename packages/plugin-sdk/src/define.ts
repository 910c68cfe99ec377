import type { AnalyzerAnswerInput, Email, EnrichmentResult, EnrichRequest } from '@trawl/contracts';
import type { z } from 'zod';

/** What a plugin's code receives besides its input. */
export interface PluginContext<S> {
  /** The plugin's settings: its schema's defaults overridden by config/service.yaml. */
  settings: S;
  /** Aborted when the caller's deadline passes or the call is cancelled. */
  signal: AbortSignal;
  log: { info(obj: object, msg?: string): void; warn(obj: object, msg?: string): void };
}

/** What an analyzer author writes: id, version, settings schema, analyze. */
export interface AnalyzerSpec<S> {
  id: string;
  version: string;
  description?: string;
  /** zod schema of the settings with defaults; `{}` must parse. */
  settings: z.ZodType<S>;
  analyze(email: Email, ctx: PluginContext<S>): Promise<AnalyzerAnswerInput> | AnalyzerAnswerInput;
}

/** What a context provider author writes: id, version, settings schema, enrich. */
export interface ProviderSpec<S> {
  id: string;
  version: string;
  description?: string;
  settings: z.ZodType<S>;
  enrich(
    req: EnrichRequest,
    ctx: PluginContext<S>,
  ): Promise<Omit<EnrichmentResult, 'provider_id'>> | Omit<EnrichmentResult, 'provider_id'>;
}

/** An analyzer as defineAnalyzer makes it. */
export interface AnalyzerDefinition<S = unknown> extends AnalyzerSpec<S> {
  readonly kind: 'analyzer';
}
/** A context provider as defineContextProvider makes it. */
export interface ProviderDefinition<S = unknown> extends ProviderSpec<S> {
  readonly kind: 'context_provider';
}
/** An analyzer or a context provider. */
// biome-ignore lint/suspicious/noExplicitAny: each plugin has its own settings type
export type PluginDefinition = AnalyzerDefinition<any> | ProviderDefinition<any>;

/** Defines an analyzer (an object the SDK serves). */
export function defineAnalyzer<S>(spec: AnalyzerSpec<S>): AnalyzerDefinition<S> {
  return { ...spec, kind: 'analyzer' };
}

/** Defines a context provider (an object the SDK serves). */
export function defineContextProvider<S>(spec: ProviderSpec<S>): ProviderDefinition<S> {
  return { ...spec, kind: 'context_provider' };
}
