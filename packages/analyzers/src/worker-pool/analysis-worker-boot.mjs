// Worker-thread entry of the analysis pool when no bundle could be built (esbuild unavailable):
// worker threads do not inherit tsx's loader, so register it here, then load the TypeScript worker
// and the module of analyzer definitions named in workerData (the pool's `data`).
import { workerData } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

register();
const { serveAnalysisWorker } = await import('./analysis-worker.ts');
const { analyzers } = await import(workerData.data.definitions);
serveAnalysisWorker(analyzers);
