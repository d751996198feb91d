import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import JSON5 from 'json5';
import { appendToArray, configInvalid, inspectConfig, setValue } from '../config/index.js';
import { hookdError } from '../errors.js';
import { configFileOf, envFor } from './config-source.js';
import type { CliIo } from './io.js';

export interface MailSetupOptions {
  config?: string;
  account: string;
  model?: string;
  thinking?: string;
  imapHost?: string;
  imapPort?: string;
  imapSecure?: boolean;
  imapUser?: string;
  imapPasswordEnv?: string;
  mailbox?: string;
}

/**
 * `hookd mail setup`: writes `hooks.mail` and adds `mail` to `hooks.presets`, editing the
 * file as text so its comments and formatting stay; a second identical run writes nothing.
 */
export async function mailSetupCommand(options: MailSetupOptions, io: CliIo): Promise<number> {
  const file = configFileOf(options.config, io);
  if (!file) {
    io.err('hookd: mail setup needs --config FILE (or HOOKD_CONFIG, or a hookd.json5 in this folder)');
    return 1;
  }
  const original = existsSync(file) ? readFileSync(file, 'utf8') : '{}\n';
  const current = JSON5.parse(original) as {
    hooks?: {
      enabled?: boolean;
      token?: string;
      mail?: Record<string, unknown>;
      presets?: (string | { name: string })[];
    };
  };
  const wanted: Record<string, string> = { account: options.account };
  if (options.model) wanted.model = options.model;
  if (options.thinking) wanted.thinking = options.thinking;

  let text = original;
  for (const [key, value] of Object.entries(wanted)) {
    if (current.hooks?.mail?.[key] !== value) text = setValue(text, ['hooks', 'mail', key], value);
  }
  if (options.imapHost) {
    const env = options.imapPasswordEnv ?? 'HOOKD_IMAP_PASSWORD';
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(env))
      throw hookdError('CLI_USAGE', { option: '--imap-password-env', expected: 'a variable name', got: env });
    const secure = options.imapSecure ?? true;
    const imap: Record<string, unknown> = {
      host: options.imapHost,
      port: options.imapPort ? Number(options.imapPort) : secure ? 993 : 143,
      secure,
      user: options.imapUser ?? options.account,
      // The password never goes into the file: only a reference to the environment.
      password: `\${${env}}`,
    };
    const watch = (current.hooks?.mail as { watch?: { imap?: Record<string, unknown>; mailbox?: string } } | undefined)
      ?.watch;
    for (const [key, value] of Object.entries(imap)) {
      if (watch?.imap?.[key] !== value) text = setValue(text, ['hooks', 'mail', 'watch', 'imap', key], value);
    }
    if (options.mailbox && watch?.mailbox !== options.mailbox)
      text = setValue(text, ['hooks', 'mail', 'watch', 'mailbox'], options.mailbox);
  }
  const enabled = (current.hooks?.presets ?? []).some((p) => (typeof p === 'string' ? p : p.name) === 'mail');
  if (!enabled) text = appendToArray(text, ['hooks', 'presets'], 'mail');
  // The preset and the watcher need hooks on, with a token: a setup that leaves them off
  // would say OK while `serve` starts neither.
  const notes: string[] = [];
  if (current.hooks?.enabled !== true) {
    text = setValue(text, ['hooks', 'enabled'], true);
    notes.push('hooks were off: set hooks.enabled to true');
  }
  if (!current.hooks?.token) {
    text = setValue(text, ['hooks', 'token'], '${HOOKD_HOOK_TOKEN}');
    notes.push(
      "hooks had no token: set hooks.token to '${HOOKD_HOOK_TOKEN}'; put a token in that variable (hookd token prints one)",
    );
  }
  if (text === original) {
    io.out(`hookd: ${file} already has this mail setup; nothing changed`);
    return 0;
  }
  // The edited file must still be a valid config (a bad --model is refused here). A `${NAME}` not
  // set here may be set where hookd serves: it is no problem, and never equal to another.
  const report = inspectConfig({ data: JSON5.parse(text), baseDir: resolve(file, '..'), env: envFor(file, io) });
  const unset = new Set(report.unset?.map((u) => u.problem));
  const problems = report.problems.filter((p) => !unset.has(p));
  if (problems.length > 0) throw configInvalid(problems, file);
  writeFileSync(file, text);
  io.out(`hookd: wrote hooks.mail and the mail preset to ${file}`);
  for (const note of notes) io.out(`hookd: ${note}`);
  return 0;
}
