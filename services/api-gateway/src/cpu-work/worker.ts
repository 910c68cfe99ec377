import { serveTasks } from '@trawl/platform/worker-pool';
import { CPU_TASKS } from './tasks.ts';

// A worker thread of the gateway's CPU pool (cpu-pool.ts).
serveTasks(CPU_TASKS);
