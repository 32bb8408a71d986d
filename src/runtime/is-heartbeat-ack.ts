/** The token an agent answers with when a heartbeat needs no attention. */
export const HEARTBEAT_ACK = 'HEARTBEAT_OK';

/**
 * Whether a reply is only a heartbeat acknowledgement: it contains `HEARTBEAT_OK` (markup such
 * as `**` or backticks around it allowed) and at most `ackMaxChars` other characters beside it.
 * Such replies are never delivered.
 */
export function isHeartbeatAck(reply: string, ackMaxChars: number): boolean {
  const text = reply.trim();
  const at = text.indexOf(HEARTBEAT_ACK);
  if (at === -1) return false;
  const rest = (text.slice(0, at) + text.slice(at + HEARTBEAT_ACK.length)).replace(/[*_`~\s.!]/g, '');
  return rest.length <= ackMaxChars;
}
