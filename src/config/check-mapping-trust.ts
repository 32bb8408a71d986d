import type { Issue } from '../common/errors.js';
import { TEMPLATE_TAG } from '../common/template-syntax.js';
import type { MappingConfig } from './schema.js';

/**
 * The parts of the dangerous combination a mapping holds: whoever can send it is not verified,
 * its content reaches the model unwrapped, and the reply goes where the request says (or back
 * to the request). Together they let anyone holding the hook token make the model send the data
 * it can reach to an address of their choosing. Each part is described for the error; `null`
 * when the mapping lacks one of them.
 */
function findExfiltrationRisk(m: MappingConfig): string[] | null {
  // With `verify.required`, only the holder of that sender's secret reaches the mapping. Without
  // it the hook token opens it, and one token is shared by every sender of every hook.
  if (m.verify?.required === true) return null;
  if (m.allowUnsafeExternalContent !== true) return null;
  // A wake makes no reply; a transform may still turn the action into a run.
  if (m.action === 'wake' && m.transform === undefined) return null;
  if (m.action === 'ignore') return null;
  const targets: string[] = [];
  const fromRequest = m.to === undefined ? [] : requestExpressions(m.to);
  if (m.deliver !== false && fromRequest.length > 0) {
    targets.push(`its reply goes to a recipient drawn from the request (to: "${m.to}")`);
  }
  if (m.transform !== undefined) {
    targets.push('its transform may set the reply\'s "channel", "to" and "deliver" from the payload');
  }
  if (m.waitForCompletion === true && m.returnReply === true) {
    targets.push('its reply is returned to the caller (returnReply: true)');
  }
  if (targets.length === 0) return null;
  return [
    m.verify === undefined
      ? 'its sender is not verified (no verify: anyone holding the hook token can send it)'
      : 'its sender is not verified (verify without required: true also takes the hook token)',
    'its content reaches the model unwrapped (allowUnsafeExternalContent: true)',
    ...targets,
  ];
}

/** The `{{ }}` expressions of a template that read the request (everything but `now`). */
function requestExpressions(template: string): string[] {
  return [...template.matchAll(TEMPLATE_TAG)].map((t) => t[1]!.trim()).filter((e) => e !== 'now');
}

/**
 * The trust rule of a mapping: the dangerous combination is an issue unless `acceptRisk` names
 * `exfiltration`, then a warning; `acceptRisk` on a mapping without it is a warning too.
 */
export function checkMappingTrust(m: MappingConfig, index: number): { issue: Issue | null; warning: Issue | null } {
  const at = `hooks.mappings[${index}]`;
  const name = `mapping "${m.id ?? `mappings[${index}]`}"`;
  const parts = findExfiltrationRisk(m);
  const accepted = m.acceptRisk?.includes('exfiltration') === true;
  if (parts === null) {
    const warning = accepted
      ? { path: `${at}.acceptRisk`, message: `${name} does not run the exfiltration risk it accepts; drop acceptRisk` }
      : null;
    return { issue: null, warning };
  }
  const combination = `${name}: ${parts.join('; ')}`;
  if (accepted) {
    return {
      issue: null,
      warning: {
        path: `${at}.acceptRisk`,
        message: `${combination}. Accepted: a payload can make the model send what it can reach to a place of its choosing`,
      },
    };
  }
  return {
    issue: {
      path: at,
      message:
        `${combination}. Together they let a payload make the model send what it can reach to a place of its ` +
        'choosing. Verify the sender (verify with required: true), drop allowUnsafeExternalContent, or fix the ' +
        'reply\'s target; or, knowing this, set acceptRisk: ["exfiltration"]',
    },
    warning: null,
  };
}
