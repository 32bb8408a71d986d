import { readFileSync } from 'node:fs';

/** A payload from `--data` or `--file`: JSON text, or the reason it is unusable. */
export function readPayload(options: { data?: string | undefined; file?: string | undefined }): { ok: true; text: string; value: unknown } | { ok: false; message: string } {
  if (options.data !== undefined && options.file !== undefined) return { ok: false, message: 'give --data or --file, not both' };
  let text: string;
  if (options.data !== undefined) text = options.data;
  else if (options.file !== undefined) {
    try {
      text = readFileSync(options.file, 'utf8');
    } catch (error) {
      return { ok: false, message: `cannot read ${options.file}: ${(error as Error).message}` };
    }
  } else return { ok: false, message: 'needs a payload: --data JSON or --file PAYLOAD.json' };
  try {
    return { ok: true, text, value: JSON.parse(text) as unknown };
  } catch (error) {
    return { ok: false, message: `the payload is not valid JSON: ${(error as Error).message}` };
  }
}
