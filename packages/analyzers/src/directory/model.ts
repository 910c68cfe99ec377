import { z } from 'zod';

const Domain = z
  .string()
  .trim()
  .toLowerCase()
  .regex(/^[a-z0-9.-]+\.[a-z0-9-]+$/, { message: 'must be a domain name such as example.org' });

export const Person = z.object({
  name: z.string().trim().min(1).max(200),
  email: z.email().transform((e) => e.toLowerCase()),
  title: z.string().max(200).default(''),
  vip: z.boolean().default(false),
  /** Other display names the person uses ("Bob Smith" for "Robert Smith"). */
  aliases: z.array(z.string().min(1).max(200)).default([]),
});
export type Person = z.output<typeof Person>;

/** The organisation directory: as a YAML file, or inline in the provider's settings. */
export const Directory = z.object({
  internal_domains: z.array(Domain).default([]),
  partner_domains: z.array(Domain).default([]),
  people: z.array(Person).default([]),
});
export type Directory = z.output<typeof Directory>;

/** Union of two directories (file + inline settings). */
export function mergeDirectories(a: Directory, b: Directory): Directory {
  return {
    internal_domains: [...new Set([...a.internal_domains, ...b.internal_domains])],
    partner_domains: [...new Set([...a.partner_domains, ...b.partner_domains])],
    people: [...a.people, ...b.people],
  };
}
