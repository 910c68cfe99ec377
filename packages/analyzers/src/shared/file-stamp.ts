import { statSync } from 'node:fs';

/**
 * What tells one version of a file from the next without reading it: its modification time and
 * size (`mtimeMs:size`). Throws as statSync does when the file cannot be read.
 */
export function fileStamp(path: string): string {
  const st = statSync(path);
  return `${st.mtimeMs}:${st.size}`;
}
