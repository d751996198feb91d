import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../../../src/cli/main.js';
import { ROOT } from '../../helpers/hookd-process.js';

/** docs/cli.md is the CLI's reference: it names every command and every flag the program has. */

const PAGE = readFileSync(join(ROOT, 'docs/cli.md'), 'utf8');

/** The page's section of a top-level command: from its `## hookd <name>` heading to the next. */
function sectionOf(name: string): string {
  const start = PAGE.indexOf(`\n## hookd ${name}\n`);
  if (start === -1) return '';
  const end = PAGE.indexOf('\n## ', start + 1);
  return PAGE.slice(start, end === -1 ? undefined : end);
}

/** Every command under `command`, with its path of names. */
const commandsOf = (command: Command, path: readonly string[] = []): { path: string[]; command: Command }[] =>
  command.commands.flatMap((c) => [{ path: [...path, c.name()], command: c }, ...commandsOf(c, [...path, c.name()])]);

describe('docs/cli.md', () => {
  const program = buildProgram({ out: () => {}, err: () => {}, env: {}, cwd: ROOT }, async () => {});

  it('has a section for every command, naming its subcommands and every one of its flags', () => {
    const missing: string[] = [];
    for (const { path, command } of commandsOf(program)) {
      const section = sectionOf(path[0] as string);
      if (section === '') missing.push(`## hookd ${path[0]}`);
      if (path.length > 1 && !section.includes(`hookd ${path.join(' ')}`)) missing.push(`hookd ${path.join(' ')}`);
      for (const option of command.options)
        if (option.long && !section.includes(option.long)) missing.push(`hookd ${path.join(' ')} ${option.long}`);
    }
    expect(missing).toEqual([]);
  });

  it('names the program-wide flags', () => {
    for (const option of program.options) expect(PAGE).toContain(option.long as string);
  });
});
