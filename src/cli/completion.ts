import type { Command } from 'commander';
import { hookdError } from '../errors.js';
import type { CliIo } from './io.js';

/**
 * `hookd completion bash|zsh|fish` (docs/cli.md#hookd-completion): a completion script written
 * from the program's own commands and options, so that it never lags behind them. It needs no
 * hookd at completion time: every word is in the script.
 */

/** One command as completion sees it: its path of names, subcommands, flags, and the flags that take a file. */
interface Node {
  readonly path: readonly string[];
  readonly description: string;
  readonly subcommands: readonly string[];
  readonly flags: readonly { readonly names: readonly string[]; readonly description: string }[];
  readonly fileFlags: readonly string[];
  /** Fixed values of its argument (`completion`'s shell). */
  readonly values: readonly string[];
}

/** The shells an argument named `<shell>` takes. */
const SHELLS = ['bash', 'zsh', 'fish'] as const;
const HELP = { names: ['-h', '--help'], description: 'print help' };

/** Every command of `program`, the program itself first (path []). */
function nodesOf(command: Command, path: readonly string[] = []): Node[] {
  const flags = command.options.map((o) => ({
    names: [o.short, o.long].filter((n): n is string => n !== undefined),
    description: o.description,
  }));
  const fileFlags = command.options.filter((o) => /<(file|dir)>/.test(o.flags)).flatMap((o) => [o.short, o.long]);
  const node: Node = {
    path,
    description: command.description(),
    subcommands: command.commands.map((c) => c.name()),
    flags: [...flags, HELP],
    fileFlags: fileFlags.filter((n): n is string => n !== undefined),
    values: command.registeredArguments.some((a) => a.name() === 'shell') ? [...SHELLS] : [],
  };
  return [node, ...command.commands.flatMap((c) => nodesOf(c, [...path, c.name()]))];
}

/** A bash completion function: the command path from the words typed, then its words (files after a file flag). */
function bash(nodes: readonly Node[]): string {
  const cases = nodes.map((n) => {
    const words = [...n.subcommands, ...n.values, ...n.flags.flatMap((f) => f.names)].join(' ');
    return `    '${n.path.join(' ')}') words='${words}'; files='${n.fileFlags.join(' ')}' ;;`;
  });
  const subcommands = nodes
    .filter((n) => n.subcommands.length > 0)
    .map((n) => `    '${n.path.join(' ')}') subs=' ${n.subcommands.join(' ')} ' ;;`);
  return `# hookd completion for bash: source <(hookd completion bash)
_hookd() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" prev="\${COMP_WORDS[COMP_CWORD-1]}"
  local path='' word subs words files i
  for ((i = 1; i < COMP_CWORD; i++)); do
    word="\${COMP_WORDS[i]}"
    [[ "$word" == -* ]] && continue
    subs=''
    case "$path" in
${subcommands.join('\n')}
    esac
    [[ "$subs" == *" $word "* ]] && path="\${path:+$path }$word"
  done
  case "$path" in
${cases.join('\n')}
    *) words=''; files='' ;;
  esac
  if [[ -n "$files" && " $files " == *" $prev "* ]]; then
    COMPREPLY=($(compgen -f -- "$cur"))
  else
    COMPREPLY=($(compgen -W "$words" -- "$cur"))
  fi
}
complete -o default -o bashdefault -F _hookd hookd
`;
}

/** zsh runs the bash function through its bashcompinit layer. */
function zsh(nodes: readonly Node[]): string {
  return `# hookd completion for zsh: source <(hookd completion zsh)
autoload -U +X compinit && compinit
autoload -U +X bashcompinit && bashcompinit
${bash(nodes).split('\n').slice(1).join('\n')}`;
}

const quoted = (text: string) => `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

/** fish: each command offered where its parent was typed last, each flag where its command was. */
function fish(nodes: readonly Node[]): string {
  const lines = ['# hookd completion for fish: hookd completion fish | source', 'complete -c hookd -f'];
  for (const n of nodes) {
    const seen = n.path.map((name) => `__fish_seen_subcommand_from ${name}`);
    const here = n.path.length === 0 ? '__fish_use_subcommand' : seen.join('; and ');
    const under = (sub: readonly string[]) => `${here}; and not __fish_seen_subcommand_from ${sub.join(' ')}`;
    const parent = n.subcommands.length > 0 && n.path.length > 0 ? under(n.subcommands) : here;
    const children = nodes.filter(
      (c) => c.path.length === n.path.length + 1 && n.path.every((name, i) => c.path[i] === name),
    );
    for (const child of children)
      lines.push(`complete -c hookd -n ${quoted(parent)} -a ${child.path.at(-1)} -d ${quoted(child.description)}`);
    for (const value of n.values) lines.push(`complete -c hookd -n ${quoted(here)} -a ${value}`);
    for (const flag of n.flags) {
      const names = flag.names.map((name) => (name.startsWith('--') ? `-l ${name.slice(2)}` : `-s ${name.slice(1)}`));
      const file = flag.names.some((name) => n.fileFlags.includes(name)) ? ' -r -F' : '';
      lines.push(`complete -c hookd -n ${quoted(parent)} ${names.join(' ')}${file} -d ${quoted(flag.description)}`);
    }
  }
  return `${lines.join('\n')}\n`;
}

/** `hookd completion <shell>`: prints the script for bash, zsh or fish. */
export async function completionCommand(shell: string, program: Command, io: CliIo): Promise<number> {
  const nodes = nodesOf(program);
  const scripts: Record<(typeof SHELLS)[number], () => string> = {
    bash: () => bash(nodes),
    zsh: () => zsh(nodes),
    fish: () => fish(nodes),
  };
  const make = scripts[shell as (typeof SHELLS)[number]];
  if (!make) throw hookdError('CLI_USAGE', { option: '<shell>', expected: SHELLS.join(', '), got: shell });
  io.out(make().trimEnd());
  return 0;
}
