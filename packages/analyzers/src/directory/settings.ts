import { z } from 'zod';
import { Directory } from './model.ts';

export const DirectorySettings = Directory.extend({
  /** YAML (or .csv) file with people, internal and partner domains; merged with the inline lists. */
  directory_file: z.string().default(''),
  /** How often, at most, the file's modification time is checked for a reload. */
  reload_check_seconds: z.number().nonnegative().max(3600).default(2),
  /** Cache hint returned to the platform. */
  ttl_seconds: z.number().int().nonnegative().default(300),
});
export type DirectorySettings = z.output<typeof DirectorySettings>;
