export * from './client.ts';
export * from './conformance.ts';
export * from './sample-email.ts';
