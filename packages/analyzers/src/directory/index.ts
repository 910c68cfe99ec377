import { resolve } from 'node:path';
import { defineContextProvider } from '@trawl/plugin-sdk';
import { PairMemo } from '../shared/memo.ts';
import { DirectoryFile } from './load.ts';
import { DirectoryIndex } from './lookup.ts';
import { type Directory, mergeDirectories } from './model.ts';
import { DirectorySettings } from './settings.ts';

export { parseDirectoryCsv, readDirectoryFile } from './load.ts';
export { DirectoryIndex } from './lookup.ts';
export { Directory } from './model.ts';
export { normalizeName, parseFromHeader } from './names.ts';
export { DirectorySettings } from './settings.ts';

/**
 * The `directory` context provider: people (name, email, title, vip), internal and partner domains
 * from `directory_file` (YAML or CSV, reloaded when it changes) and/or inline settings.
 */
export function createDirectoryProvider() {
  const files = new Map<string, DirectoryFile>();
  const indexes = new PairMemo<Directory, object, DirectoryIndex>(() => new WeakMap());

  const indexFor = (
    fileDir: Directory | undefined,
    settings: DirectorySettings,
  ): DirectoryIndex => {
    // cache per (file version, settings object): both are stable objects between changes
    return indexes.get(fileDir ?? settings, settings, () => {
      const inline: Directory = {
        internal_domains: settings.internal_domains,
        partner_domains: settings.partner_domains,
        people: settings.people,
      };
      return new DirectoryIndex(fileDir ? mergeDirectories(fileDir, inline) : inline);
    });
  };

  return defineContextProvider({
    id: 'directory',
    version: '1.0.0',
    description:
      'Organisation directory: people and VIPs, internal and partner domains (YAML or CSV file, reloaded on change)',
    settings: DirectorySettings,
    enrich(req, { settings, log }) {
      let fileDir: Directory | undefined;
      if (settings.directory_file) {
        const path = resolve(settings.directory_file);
        let f = files.get(path);
        if (!f) {
          f = new DirectoryFile(path, settings.reload_check_seconds * 1000);
          files.set(path, f);
        }
        fileDir = f.get(log);
      }
      const facts = indexFor(fileDir, settings).facts(req.email);
      return { data: { ...facts }, ttl_seconds: settings.ttl_seconds };
    },
  });
}
