// virnetprotocol.x: every message is a 4-byte length word (counting itself), a 24-byte header
// and an XDR body.
import { ProtocolError } from '../errors.js';
import { XdrWriter } from '../xdr/xdr-writer.js';

export const MESSAGE_MAX = 33554432; // VIR_NET_MESSAGE_MAX, length word included
export const LENGTH_WORD = 4; // VIR_NET_MESSAGE_LEN_MAX
export const HEADER_SIZE = 24; // VIR_NET_MESSAGE_HEADER_MAX
export const STRING_MAX = 4194304; // VIR_NET_MESSAGE_STRING_MAX / REMOTE_STRING_MAX
export const UUID_SIZE = 16; // VIR_UUID_BUFLEN

export const REMOTE_PROGRAM = 0x20008086;
export const QEMU_PROGRAM = 0x20008087;
export const KEEPALIVE_PROGRAM = 0x6b656570;
export const PROTOCOL_VERSION = 1; // the same for all three programs

export const MessageType = {
  CALL: 0,
  REPLY: 1,
  MESSAGE: 2,
  STREAM: 3,
  CALL_WITH_FDS: 4,
  REPLY_WITH_FDS: 5,
  STREAM_HOLE: 6,
} as const;

export const MessageStatus = { OK: 0, ERROR: 1, CONTINUE: 2 } as const;

export interface MessageHeader {
  readonly prog: number;
  readonly vers: number;
  readonly proc: number;
  readonly type: number;
  readonly serial: number;
  readonly status: number;
}

/** One message as it travels: the header plus the XDR-encoded body. */
export interface Message {
  readonly header: MessageHeader;
  readonly body: Buffer;
}

/** Encodes a whole frame (length word, header, body) ready to write to the socket. */
export function encodeMessage(header: MessageHeader, writeBody?: (w: XdrWriter) => void): Buffer {
  const w = new XdrWriter();
  w.uint(0).uint(header.prog).uint(header.vers).int(header.proc).int(header.type).uint(header.serial).int(header.status);
  writeBody?.(w);
  const frame = w.toBuffer();
  if (frame.length > MESSAGE_MAX) throw new ProtocolError(`message of ${frame.length} bytes exceeds ${MESSAGE_MAX}`);
  frame.writeUInt32BE(frame.length, 0);
  return frame;
}

/** Splits one frame (without its length word) into header and body. */
export function decodeMessage(frame: Buffer): Message {
  if (frame.length < HEADER_SIZE) throw new ProtocolError(`frame of ${frame.length} bytes is shorter than a header`);
  const header: MessageHeader = {
    prog: frame.readUInt32BE(0),
    vers: frame.readUInt32BE(4),
    proc: frame.readInt32BE(8),
    type: frame.readInt32BE(12),
    serial: frame.readUInt32BE(16),
    status: frame.readInt32BE(20),
  };
  return { header, body: frame.subarray(HEADER_SIZE) };
}
