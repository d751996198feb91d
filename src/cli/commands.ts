import type { Command } from 'commander';
import type { CliIo } from './io.js';

/** Runs a command's body and keeps its exit code. */
export type Runner = (body: () => Promise<number>) => Promise<void>;

/** What a file of command definitions is given: the program to add to, the runner, and the io. */
export interface CommandContext {
  readonly program: Command;
  readonly run: Runner;
  readonly io: CliIo;
}

/** The option every command that reads a config takes. */
export const CONFIG_OPTION = [
  '-c, --config <file>',
  'config file (JSON5); default: $HOOKD_CONFIG, else ./hookd.json5',
] as const;

/** The option every command that talks to a running gateway takes. */
export const URL_OPTION = [
  '-u, --url <url>',
  "the gateway's URL; default $HOOKD_URL, else http://<server.host>:<server.port>",
] as const;

/** `--header K:V`, `--query K=V`: each one given adds to the list. */
export const collect = (value: string, previous: string[]) => [...previous, value];

/** Each command is loaded when it runs: `hookd token` need not load the gateway. */
export const load = {
  serve: () => import('./serve.js'),
  check: () => import('./check.js'),
  try: () => import('./try.js'),
  send: () => import('./send.js'),
  presets: () => import('./presets.js'),
  mailSetup: () => import('./mail-setup.js'),
  mailWatch: () => import('./mail-watch.js'),
  token: () => import('./token.js'),
  init: () => import('./init.js'),
  test: () => import('./test.js'),
  requests: () => import('./requests.js'),
  replay: () => import('./replay.js'),
  runs: () => import('./runs.js'),
  cancel: () => import('./cancel.js'),
  alerts: () => import('./alerts.js'),
  completion: () => import('./completion.js'),
};
