/**
 * The Sendmail milter protocol, version 6, as Postfix speaks it (`smtpd_milters`,
 * `milter_protocol = 6`): the command and reply codes and the negotiation flags of libmilter's
 * `mfdef.h`. Every packet is a 4-byte big-endian length (the command byte included), the command
 * byte, then its data (NUL-terminated strings, 32-bit big-endian numbers).
 */

/** The protocol version this milter speaks. */
export const MILTER_VERSION = 6;

/** Commands, MTA → milter (SMFIC_*). */
export const CMD = {
  abort: 0x41, // 'A'
  body: 0x42, // 'B'
  connect: 0x43, // 'C'
  macro: 0x44, // 'D'
  eob: 0x45, // 'E' end of body: decide now
  helo: 0x48, // 'H'
  quitNc: 0x4b, // 'K' quit, a new connection follows on this socket
  header: 0x4c, // 'L'
  mail: 0x4d, // 'M'
  eoh: 0x4e, // 'N'
  optneg: 0x4f, // 'O'
  quit: 0x51, // 'Q'
  rcpt: 0x52, // 'R'
  data: 0x54, // 'T'
  unknown: 0x55, // 'U'
} as const;

/** Replies and modifications, milter → MTA (SMFIR_*). */
export const REPLY = {
  addRcpt: 0x2b, // '+'
  delRcpt: 0x2d, // '-'
  accept: 0x61, // 'a'
  continue: 0x63, // 'c'
  addHeader: 0x68, // 'h'
  insHeader: 0x69, // 'i'
  chgHeader: 0x6d, // 'm'
  progress: 0x70, // 'p'
  quarantine: 0x71, // 'q'
  reject: 0x72, // 'r'
  tempfail: 0x74, // 't'
  replyCode: 0x79, // 'y'
  optneg: 0x4f, // 'O'
} as const;

/** Actions the milter may take (SMFIF_*), offered by the MTA in OPTNEG. */
export const ACTION = {
  addHeaders: 0x01,
  changeBody: 0x02,
  addRcpt: 0x04,
  delRcpt: 0x08,
  changeHeaders: 0x10,
  quarantine: 0x20,
} as const;

/** Protocol steps (SMFIP_*): events not sent, and events answered with no reply (NR). */
export const STEP = {
  noConnect: 0x1,
  noHelo: 0x2,
  noMail: 0x4,
  noRcpt: 0x8,
  noBody: 0x10,
  noHeaders: 0x20,
  noEoh: 0x40,
  nrHeader: 0x80,
  noUnknown: 0x100,
  noData: 0x200,
  skip: 0x400,
  rcptRej: 0x800,
  nrConnect: 0x1000,
  nrHelo: 0x2000,
  nrMail: 0x4000,
  nrRcpt: 0x8000,
  nrData: 0x10000,
  nrUnknown: 0x20000,
  nrEoh: 0x40000,
  nrBody: 0x80000,
  headerLeadingSpace: 0x100000,
} as const;

/** The actions this milter uses: add and change headers (tags, forged fields out), quarantine. */
export const WANTED_ACTIONS = ACTION.addHeaders | ACTION.changeHeaders | ACTION.quarantine;

/**
 * The steps it asks for: no reply to anything before the end of the body (each reply is a round
 * trip Postfix waits for), no unknown commands. Only the steps the MTA offers are taken.
 */
export const WANTED_STEPS =
  STEP.noUnknown |
  STEP.nrConnect |
  STEP.nrHelo |
  STEP.nrMail |
  STEP.nrRcpt |
  STEP.nrData |
  STEP.nrEoh |
  STEP.nrBody |
  STEP.nrHeader;
