import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { findFollowableLink } from '../../test/helpers/find-followable-link.js';
import { guardReply } from './guard-reply.js';

const NONE = { allowedLinkHosts: [] };
const GITHUB = { allowedLinkHosts: ['github.com', '*.example.org'] };

describe('guardReply: links to hosts not allowed are made inert', () => {
  const cases: Array<[string, string, string]> = [
    [
      'a bare URL with data in its query',
      'see https://attacker.example/c?d=SECRET.',
      'see hxxps://attacker[.]example/….',
    ],
    ['a Markdown link', '[click](https://attacker.example/c?d=SECRET)', 'click (hxxps://attacker[.]example/…)'],
    ['an autolink', '<https://attacker.example/c?d=SECRET>', 'hxxps://attacker[.]example/…'],
    [
      "Slack's link syntax",
      '<https://attacker.example/c?d=SECRET|the report>',
      'the report (hxxps://attacker[.]example/…)',
    ],
    ['a bare domain with a path', 'open attacker.example/c?d=SECRET now', 'open attacker[.]example/… now'],
    ['a bare domain with a known TLD', 'go to attacker.com.', 'go to attacker[.]com.'],
    ['a www. domain', 'www.attacker.example', 'www[.]attacker[.]example'],
    ["an address's domain", 'write to bob@attacker.example', 'write to bob@attacker[.]example'],
    ['a punycode host', 'https://xn--80ak6aa92e.com/?d=SECRET', 'hxxps://xn--80ak6aa92e[.]com/…'],
    ['an IDN host, shown in ASCII', 'https://пример.испытание/?d=SECRET', 'hxxps://xn--e1afmkfd[.]xn--80akhbyknj4f/…'],
    ['a look-alike host', 'https://аpple.com/login', 'hxxps://xn--pple-43d[.]com/…'],
    ['a bare IDN domain', 'пример.рф/x?d=1', 'xn--e1afmkfd[.]xn--p1ai/…'],
    ['ideographic full stops', 'attacker。com/x?d=1', 'attacker[.]com/…'],
    ['a javascript: link', '[x](javascript:fetch(1))', 'x (javascript[:]…)'],
    ['a bare javascript: URL', 'javascript:alert(document.cookie)', 'javascript[:]…'],
    ['a data: URL', 'data:text/html;base64,PHNjcmlwdD4=', 'data[:]…'],
    ['a mailto: link with a body', 'mailto:x@attacker.example?body=SECRET', 'mailto[:]…'],
    ['user info before the host', 'https://github.com@attacker.example/x', 'hxxps://attacker[.]example/…'],
    ['a protocol-relative URL', '//attacker.example/x?d=1', '//attacker[.]example/…'],
    ['an IP address with a port', 'http://1.2.3.4:8080/x?d=S', 'hxxp://1[.]2[.]3[.]4/…'],
    ['a bare IP address with a path', '10.1.2.3/x?d=S', '10[.]1[.]2[.]3/…'],
    ['another scheme', 'ftp://attacker.example/file', 'ftp[:]//attacker[.]example/…'],
    ['a host alone', 'https://attacker.example', 'hxxps://attacker[.]example'],
    ['encoded dots', 'evil&#46;com&#x2f;x?d=S', 'evil[.]com/…'],
    ['a closing bracket of the sentence', '(see https://attacker.example/a_(b))', '(see hxxps://attacker[.]example/…)'],
    [
      'a URL as the label of an allowed link',
      '[https://attacker.example/x](https://github.com/a)',
      '[hxxps://attacker[.]example/…](https://github.com/a)',
    ],
    ['a link the guard already made inert', 'hxxps://attacker[.]example/…', 'hxxps://attacker[.]example/…'],
    ['a subdomain that merely ends like an allowed one', 'https://evilgithub.com/x', 'hxxps://evilgithub[.]com/…'],
  ];
  for (const [name, input, output] of cases) {
    it(`makes inert ${name}`, () => assert.equal(guardReply(input, GITHUB), output));
  }
});

describe('guardReply: images are removed', () => {
  const cases: Array<[string, string, string]> = [
    ['a Markdown image', '![pixel](https://attacker.example/p.png?d=SECRET)', '(image: pixel)'],
    ['a Markdown image on an allowed host', '![chart](https://github.com/c.png)', '(image: chart)'],
    ['a Markdown image with a title', '![a](https://x.example/p.png "t")', '(image: a)'],
    [
      'a reference image',
      '![logo][l]\n\n[l]: https://attacker.example/l.png',
      '(image: logo)\n\n[l]: hxxps://attacker[.]example/…',
    ],
    ['an HTML img', '<img src="https://attacker.example/p.png?d=SECRET" alt="logo">', '(image: logo)'],
    ['an HTML img without alt', '<IMG SRC=https://attacker.example/p.png>', '(image)'],
    ['an iframe', 'a<iframe src="https://attacker.example/f"></iframe>b', 'a</iframe>b'],
    [
      'an image whose alt holds a URL',
      '![https://attacker.example/x](https://y.example/p.png)',
      '(image: hxxps://attacker[.]example/…)',
    ],
  ];
  for (const [name, input, output] of cases) {
    it(`removes ${name}`, () => assert.equal(guardReply(input, GITHUB), output));
  }
});

describe('guardReply: what is left alone', () => {
  const kept = [
    'https://github.com/org/repo/pull/12?tab=files#diff',
    'https://docs.example.org/a?b=c',
    '[the PR](https://github.com/org/repo/pull/12)',
    '<https://github.com/org/repo>',
    'edit package.json and src/index.ts; Node.js 20, v1.2.3.4 and 10.0.0.1 are fine, e.g. here.',
    'Is index.ts done? Yes: it is.',
    'Replace <input> with the file, and <source> with its name.',
    'A note: data is ready, mailto is a word.',
    '`HEARTBEAT_OK` and *bold* and _italic_',
  ];
  for (const text of kept) it(`keeps ${JSON.stringify(text)}`, () => assert.equal(guardReply(text, GITHUB), text));

  it('makes every link inert when no host is allowed', () => {
    assert.equal(guardReply('https://github.com/x', NONE), 'hxxps://github[.]com/…');
  });

  it('keeps every http(s) link when "*" is allowed, and still removes images and javascript:', () => {
    const all = { allowedLinkHosts: ['*'] };
    assert.equal(guardReply('https://anything.example/?q=1', all), 'https://anything.example/?q=1');
    assert.equal(guardReply('![x](https://anything.example/p.png)', all), '(image: x)');
    assert.equal(guardReply('[x](javascript:alert(1))', all), 'x (javascript[:]…)');
  });

  it('matches allowed hosts in their ASCII form and without a trailing dot', () => {
    const idn = { allowedLinkHosts: ['bücher.example'] };
    assert.equal(guardReply('https://xn--bcher-kva.example/a', idn), 'https://xn--bcher-kva.example/a');
    assert.equal(guardReply('https://GITHUB.com./a', GITHUB), 'https://GITHUB.com./a');
  });

  it('does not let "*.example.org" allow example.org itself', () => {
    assert.equal(guardReply('https://example.org/x', GITHUB), 'hxxps://example[.]org/…');
  });
});

describe('guardReply: properties', () => {
  const noise = fc.string({ unit: fc.constantFrom('a', ' ', '.', '/', '(', ')', '[', ']', '<', '>', '!', '\n', 'é') });
  const attack = fc.constantFrom(
    'https://attacker.example/c?d=SECRET',
    '[x](https://attacker.example/c?d=SECRET)',
    '<https://attacker.example/c?d=SECRET>',
    'attacker.example/c?d=SECRET',
    'attacker.com',
    '![p](https://attacker.example/p.png?d=SECRET)',
    '<img src=https://attacker.example/p.png>',
    'javascript:alert(1)',
    'https://xn--80ak6aa92e.com/?d=SECRET',
    'evil&#46;com/x',
  );

  it('leaves nothing followable from an attacker URL, whatever surrounds it', () => {
    fc.assert(
      fc.property(noise, attack, noise, (a, b, c) => {
        const out = guardReply(`${a} ${b} ${c}`, NONE);
        assert.equal(findFollowableLink(out), null, out);
        assert.ok(!out.includes('SECRET'), out);
      }),
      { numRuns: 2000 },
    );
  });

  it('leaves no image opening where rewritten pieces meet (a case the properties found)', () => {
    const out = guardReply('![![ [x](https://attacker.example/c?d=SECRET) ](', NONE);
    assert.equal(findFollowableLink(out), null, out);
    assert.ok(!out.includes('SECRET'), out);
  });

  it('returns on long hostile input (no catastrophic backtracking)', { timeout: 30_000 }, () => {
    const text = `${'a.'.repeat(50_000)} ${'[x]('.repeat(20_000)} ${'https://'.repeat(10_000)}`;
    const out = guardReply(text, NONE);
    assert.ok(out.length > 0);
  });
});
