import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { listConfigSecrets } from './list-config-secrets.js';
import { ConfigSchema } from './schema.js';

describe('listConfigSecrets', () => {
  it('lists every token, key, channel credential and verify secret, and nothing else', () => {
    const config = ConfigSchema.parse({
      gateway: { auth: { token: 'gw-token' } },
      hooks: {
        enabled: true,
        token: 'hook-token',
        gmail: { account: 'ops@example.test', pushToken: 'gmail-push' },
        mappings: [
          { match: { path: 'gh' }, verify: { kind: 'github', secret: ['gh-1', 'gh-2'] } },
          { match: { path: 'sw' }, verify: { kind: 'standard-webhooks', publicKey: 'whpk_public-not-secret' } },
          {
            match: { path: 'tf' },
            transform: {
              module: 't.mjs',
              env: { GITHUB_TOKEN: 'tf-token', DB_PASSWORD: 'tf-pass', API_KEY: 'tf-key', REGION: 'eu-west-1' },
            },
          },
        ],
      },
      models: {
        providers: {
          openai: { api: 'openai', apiKey: 'sk-x', headers: { 'X-Api-Key': 'hdr-key', 'X-Title': 'Hookgate' } },
        },
      },
      channels: {
        telegram: { botToken: 'tg' },
        discord: { botToken: 'dc' },
        slack: { botToken: 'xoxb' },
        whatsapp: { accessToken: 'wa', phoneNumberId: '123' },
        mattermost: { baseUrl: 'http://127.0.0.1:1', token: 'mm' },
        imessage: { baseUrl: 'http://127.0.0.1:2', password: 'bb' },
        msteams: { appId: 'app', appPassword: 'teams', serviceUrl: 'http://127.0.0.1:3' },
      },
    });
    assert.deepEqual(
      new Set(listConfigSecrets(config)),
      new Set([
        'hook-token',
        'gw-token',
        'sk-x',
        'hdr-key',
        'tg',
        'dc',
        'xoxb',
        'wa',
        'mm',
        'bb',
        'teams',
        'gmail-push',
        'gh-1',
        'gh-2',
        'tf-token',
        'tf-pass',
        'tf-key',
      ]),
    );
  });
});
