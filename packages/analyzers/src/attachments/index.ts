import { defineAnalyzer } from '@trawl/plugin-sdk';
import { analyzeAttachments } from './analyzer.ts';
import { AttachmentsSettings } from './settings.ts';

export { analyzeAttachments } from './analyzer.ts';
export { AttachmentsSettings } from './settings.ts';

export const analyzer = defineAnalyzer({
  id: 'attachments',
  version: '1.0.0',
  description:
    'Dangerous and double extensions, macro documents, executables behind harmless names, archives listing executables, HTML/SVG attachments with scripts or forms; sha256 of each',
  settings: AttachmentsSettings,
  analyze: (email, { settings }) => analyzeAttachments(email, settings),
});
