import { z } from 'zod';
import { defineAnalyzer, defineContextProvider } from '../../src/index.ts';

export const echoAnalyzer = defineAnalyzer({
  id: 'echo',
  version: '1.2.3',
  description: 'flags subjects containing a word',
  settings: z.object({ word: z.string().default('verify'), confidence: z.number().default(0.8) }),
  analyze(email, { settings }) {
    const hit = email.headers.subject.toLowerCase().includes(settings.word);
    return {
      is_phishing: hit,
      confidence: settings.confidence,
      indicators: hit
        ? [{ type: 'urgency_language', value: `subject says ${settings.word}`, confidence: 0.7 }]
        : [],
    };
  },
});

export const brokenAnalyzer = defineAnalyzer({
  id: 'broken',
  version: '0.0.1',
  settings: z.object({}),
  analyze: () => ({ is_phishing: 'yes', confidence: 2 }) as never,
});

export const throwingAnalyzer = defineAnalyzer({
  id: 'throwing',
  version: '0.0.1',
  settings: z.object({}),
  analyze: () => {
    throw new Error('secret=hunter2 exploded');
  },
});

export const slowAnalyzer = defineAnalyzer({
  id: 'slow',
  version: '0.0.1',
  settings: z.object({ delayMs: z.number().default(60_000) }),
  analyze: (_email, { settings, signal }) =>
    new Promise((resolve, reject) => {
      const t = setTimeout(
        () => resolve({ is_phishing: false, confidence: 0.5, indicators: [] }),
        settings.delayMs,
      );
      signal.addEventListener('abort', () => {
        clearTimeout(t);
        reject(signal.reason);
      });
    }),
});

export const domainProvider = defineContextProvider({
  id: 'domains',
  version: '1.0.0',
  settings: z.object({ internal: z.array(z.string()).default(['example.org']) }),
  enrich(req, { settings }) {
    const domain = req.email.headers.sender.split('@')[1] ?? '';
    return { data: { sender_internal: settings.internal.includes(domain), stage: req.stage } };
  },
});

export const validEmail = {
  headers: {
    subject: 'Please verify your account',
    sender: 'a@evil.example.com',
    recipients: ['b@example.org'],
    date: '2024-05-01T09:30:00Z',
  },
  body_text: 'hello',
};
