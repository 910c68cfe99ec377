/**
 * The analyzers the analysis pool's workers run by default: the offline detection analyzers (CPU
 * only: no network, no database). The llm and context analyzers and the context providers wait on
 * I/O and stay on the main thread.
 */
export { offlineAnalyzers as analyzers } from '../registry.ts';
