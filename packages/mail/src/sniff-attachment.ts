export interface AttachmentSniff {
  detectedType: string;
}
export function sniffAttachment(_b: Buffer, _f: string, _d?: string): AttachmentSniff {
  return { detectedType: 'application/octet-stream' };
}
