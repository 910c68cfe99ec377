import { serveTasks } from '@trawl/platform/worker-pool';
import { PARSE_TASKS } from './tasks.ts';

// A worker thread of the inline milter's parse pool (parse-pool.ts).
serveTasks(PARSE_TASKS);
