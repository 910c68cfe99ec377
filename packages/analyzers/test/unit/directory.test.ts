import { describe, expect, it } from 'vitest';
import {
  Directory,
  DirectoryIndex,
  normalizeName,
  parseDirectoryCsv,
  parseFromHeader,
} from '../../src/directory/index.ts';
import { mail } from './context-helpers.ts';

const dir = Directory.parse({
  internal_domains: ['example.org'],
  partner_domains: ['partner.example.net'],
  people: [
    { name: 'Alice Example', email: 'Alice.Example@example.org', title: 'CEO', vip: true },
    {
      name: 'Carla Demo',
      email: 'carla.demo@example.org',
      title: 'Accounts',
      aliases: ['Carla D'],
    },
  ],
});
const index = new DirectoryIndex(dir);

describe('directory lookups', () => {
  it('normalizes display names', () => {
    expect(normalizeName('Example, Alice')).toBe('alice example');
    expect(normalizeName('  Dr. ÁLICE   Example (CEO) ')).toBe('alice example');
    expect(parseFromHeader('"Example, Alice" <x@evil.test>')).toEqual({
      displayName: 'Example, Alice',
      address: 'x@evil.test',
    });
    expect(parseFromHeader('bare@example.org').displayName).toBe('');
  });

  it('flags an external sender using a VIP name', () => {
    const f = index.facts(
      mail({ sender: 'ceo.office@gmail.example', displayName: 'Alice Example' }),
    );
    expect(f.sender_internal).toBe(false);
    expect(f.display_name_matches_person).toMatchObject({
      matched: true,
      name: 'Alice Example',
      vip: true,
      same_address: false,
    });
  });

  it('recognises the real person, aliases, and a display name that is an address', () => {
    const real = index.facts(
      mail({ sender: 'alice.example@example.org', displayName: 'Alice Example' }),
    );
    expect(real.sender_internal).toBe(true);
    expect(real.display_name_matches_person.same_address).toBe(true);
    expect(real.sender_person).toMatchObject({ name: 'Alice Example', vip: true });
    const alias = index.facts(mail({ sender: 'x@evil.test', displayName: 'Carla D' }));
    expect(alias.display_name_matches_person).toMatchObject({ matched: true, vip: false });
    const addr = index.facts(
      mail({ sender: 'x@evil.test', displayName: 'alice.example@example.org' }),
    );
    expect(addr.display_name_matches_person).toMatchObject({
      matched: true,
      name: 'Alice Example',
    });
  });

  it('reports partner senders, subdomains and VIP recipients', () => {
    const f = index.facts(
      mail({
        sender: 'billing@mail.partner.example.net',
        recipients: ['alice.example@example.org', 'carla.demo@example.org'],
      }),
    );
    expect(f.sender_partner).toBe(true);
    expect(f.sender_internal).toBe(false);
    expect(f.recipient_vips).toEqual([
      { name: 'Alice Example', email: 'alice.example@example.org', title: 'CEO' },
    ]);
    expect(f.internal_domains).toEqual(['example.org']);
  });

  it('parses CSV directories with people and domain rows', () => {
    const raw = parseDirectoryCsv(
      [
        '# comment',
        'type,name,email,title,vip',
        'person,"Example, Alice",alice@example.org,"CEO, Board",yes',
        'internal_domain,,corp.example.org,,',
        'partner_domain,,partner.example.net,,',
      ].join('\n'),
    );
    expect(Directory.parse(raw)).toEqual({
      internal_domains: ['corp.example.org'],
      partner_domains: ['partner.example.net'],
      people: [
        {
          name: 'Example, Alice',
          email: 'alice@example.org',
          title: 'CEO, Board',
          vip: true,
          aliases: [],
        },
      ],
    });
  });
});
