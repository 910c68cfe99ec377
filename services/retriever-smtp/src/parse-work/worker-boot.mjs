// Worker-thread entry of the inline milter's parse pool: worker threads do not inherit tsx's
// loader, so register it here, then load the TypeScript worker.
import { register } from 'tsx/esm/api';

register();
await import('./worker.ts');
