import { apiRetrieverMain } from '@trawl/mailbox-sync';
import { runServiceMain } from '@trawl/platform';
import { gmailSettingsFromEnv, retrieverGmailSettings } from './settings.ts';
import { startRetrieverGmail } from './start.ts';

// TRAWL_GMAIL_* (and their *_FILE secrets) belong to this service only: read here.
void runServiceMain(
  'retriever-gmail',
  import.meta.url,
  ['redis'],
  apiRetrieverMain('retriever-gmail', gmailSettingsFromEnv, (cfg, s, ports) =>
    startRetrieverGmail(ports, retrieverGmailSettings(cfg, s)),
  ),
);
