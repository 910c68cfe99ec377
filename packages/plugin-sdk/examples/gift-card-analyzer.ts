// A complete Trawl analyzer: flags messages that ask for gift cards. Run it with
//   pnpm exec tsx packages/plugin-sdk/examples/gift-card-analyzer.ts
import { defineAnalyzer, startPlugin } from '@trawl/plugin-sdk';
import { z } from 'zod';

export const giftCards = defineAnalyzer({
  id: 'gift-cards',
  version: '1.0.0',
  description: 'Requests to buy gift cards',
  settings: z.object({
    phrases: z.array(z.string()).default(['gift card', 'itunes card', 'steam card']),
    confidence: z.number().min(0).max(1).default(0.8),
  }),
  analyze(email, { settings }) {
    const text =
      `${email.headers.subject}\n${email.body_text ?? email.body_html ?? ''}`.toLowerCase();
    const hits = settings.phrases.filter((p) => text.includes(p));
    return {
      is_phishing: hits.length > 0,
      confidence: hits.length > 0 ? settings.confidence : 0.6,
      indicators: hits.map((p) => ({
        type: 'payment_request',
        value: `asks for a ${p}`,
        confidence: settings.confidence,
      })),
    };
  },
});

if (import.meta.url === `file://${process.argv[1]}`) {
  await startPlugin(giftCards, {
    port: Number(process.env.PORT ?? 8200),
    gatewayUrl: process.env.TRAWL_GATEWAY_URL, // e.g. http://localhost:8001
    // its own credential (`pnpm trawl credentials plugin gift-cards`), never INTERNAL_API_KEY
    internalApiKey: process.env.TRAWL_PLUGIN_KEY,
  });
}
