import { RESERVED_HOOK_NAMES, trimSlashes, type MappingConfig, type VerifyConfig } from '../../config/index.js';
import { createSignatureVerifier, type SignatureVerifier } from './verify-signature.js';
import type { VerifyInput } from './verify-types.js';

/** A mapping that declares `verify` and may serve a given hook name. */
export interface SignatureCandidate {
  /** The mapping's id as the hook handler names it (`id`, else `mappings[<i>]`). */
  id: string;
  kind: VerifyConfig['kind'];
  /** Whether this mapping refuses the hook token. */
  required: boolean;
  verify: SignatureVerifier;
}

/** A request authenticated by signature: which mappings' keys verified it, and the sender's delivery id. */
export interface SignedBy {
  mappingIds: readonly string[];
  kinds: readonly VerifyConfig['kind'][];
  deliveryId?: string;
  retryNum?: number;
}

type GateResult = { ok: true; signedBy: SignedBy } | { ok: false; reason: string };

export interface SignatureGate {
  /**
   * Mappings with `verify` that may serve `name`: their `match.path` is `name` or absent. Known
   * from the path alone, so the decision to look for a signature is made before the body is read.
   */
  candidatesFor(name: string): readonly SignatureCandidate[];
  /** Checks the request against every candidate; it is signed when at least one verifies it. */
  verify(candidates: readonly SignatureCandidate[], input: VerifyInput): GateResult;
}

/**
 * Prepares the verifiers of `hooks.mappings` (keys decoded once).
 * @throws Error naming the mapping whose key cannot be decoded.
 */
export function createSignatureGate(mappings: readonly MappingConfig[]): SignatureGate {
  const all: Array<SignatureCandidate & { path: string | undefined }> = [];
  mappings.forEach((m, i) => {
    if (m.verify === undefined) return;
    const id = m.id ?? `mappings[${i}]`;
    let verify: SignatureVerifier;
    try {
      verify = createSignatureVerifier(m.verify);
    } catch (error) {
      throw new Error(`hooks.mappings[${i}].verify: ${(error as Error).message}`, { cause: error });
    }
    const path = m.match?.path === undefined ? undefined : trimSlashes(m.match.path);
    all.push({ id, kind: m.verify.kind, required: m.verify.required === true, verify, path });
  });
  const none: readonly SignatureCandidate[] = [];
  return {
    candidatesFor(name) {
      if (all.length === 0) return none;
      const path = trimSlashes(name);
      if (RESERVED_HOOK_NAMES.has(path)) return none;
      return all.filter((c) => c.path === undefined || c.path === path);
    },
    verify(candidates, input) {
      const mappingIds: string[] = [];
      const kinds: Array<VerifyConfig['kind']> = [];
      let deliveryId: string | undefined;
      let retryNum: number | undefined;
      const reasons = new Set<string>();
      for (const c of candidates) {
        const r = c.verify(input);
        if (!r.ok) {
          reasons.add(r.reason);
          continue;
        }
        mappingIds.push(c.id);
        if (!kinds.includes(c.kind)) kinds.push(c.kind);
        deliveryId ??= r.deliveryId;
        retryNum ??= r.retryNum;
      }
      if (mappingIds.length === 0) return { ok: false, reason: [...reasons].join('; ') };
      const signedBy: SignedBy = { mappingIds, kinds };
      if (deliveryId !== undefined) signedBy.deliveryId = deliveryId;
      if (retryNum !== undefined) signedBy.retryNum = retryNum;
      return { ok: true, signedBy };
    },
  };
}
