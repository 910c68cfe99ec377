// Worker-thread entry of `pnpm eval`: worker threads do not inherit tsx's loader, so register it
// here, then load the TypeScript worker.
import { register } from 'tsx/esm/api';

register();
await import('./eval-worker.ts');
