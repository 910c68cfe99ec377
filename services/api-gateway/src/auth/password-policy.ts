/**
 * The password rule of Trawl accounts (docs/security.md): at least 12 characters (a passphrase of
 * a few words qualifies), at most 1024; at least 5 different characters and not one short piece
 * repeated; not containing the username; not one of the well-known long passwords. Applied to the
 * first admin (TRAWL_ADMIN_PASSWORD) and to every password an admin sets.
 */
export const PASSWORD_MIN_CHARS = 12;
export const PASSWORD_MAX_CHARS = 1024;

/** Long passwords at the top of breach lists (compared without case). */
const COMMON = new Set([
  '123456789012',
  '1234567890123',
  '12345678901234',
  '1q2w3e4r5t6y',
  'administrator',
  'changeme1234',
  'iloveyou1234',
  'password1234',
  'password123!',
  'passw0rd1234',
  'qwerty123456',
  'qwertyuiop12',
  'qwertyuiopasdfgh',
]);

/** Why a password is too weak (empty: it is acceptable). */
export function passwordProblems(password: string, username?: string): string[] {
  const chars = [...password];
  if (chars.length < PASSWORD_MIN_CHARS) {
    return [
      `must be at least ${PASSWORD_MIN_CHARS} characters (a passphrase of a few words is fine)`,
    ];
  }
  if (chars.length > PASSWORD_MAX_CHARS)
    return [`must be at most ${PASSWORD_MAX_CHARS} characters`];
  const problems: string[] = [];
  if (new Set(chars).size < 5) problems.push('must use at least 5 different characters');
  else if (repeatsShortPiece(chars)) problems.push('must not be one short piece repeated');
  const lower = password.toLowerCase();
  if (username && username.length >= 3 && lower.includes(username.toLowerCase())) {
    problems.push('must not contain the username');
  }
  if (COMMON.has(lower)) problems.push('is a well-known password');
  return problems;
}

/** `abcabcabcabc`: the whole password is a piece of at most 4 characters, repeated. */
function repeatsShortPiece(chars: string[]): boolean {
  for (let period = 1; period <= 4; period++) {
    let same = true;
    for (let i = period; i < chars.length && same; i++) same = chars[i] === chars[i - period];
    if (same) return true;
  }
  return false;
}
