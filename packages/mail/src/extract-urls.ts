import type { Email } from '@trawl/contracts';
export interface ExtractedUrl {
  url: string;
}
export function extractUrls(_email: Email): ExtractedUrl[] {
  return [];
}
