import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../../..');
const root = mkdtempSync(join(tmpdir(), 'hookd-bin-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

// A copy of bin/hookd.js beside a src/ and a dist/ whose entry points say which one ran.
mkdirSync(join(root, 'bin'));
copyFileSync(join(ROOT, 'bin/hookd.js'), join(root, 'bin/hookd.js'));
symlinkSync(join(ROOT, 'node_modules'), join(root, 'node_modules'));
writeFileSync(join(root, 'package.json'), '{ "type": "module" }\n');
for (const dir of ['src/cli', 'dist/cli']) mkdirSync(join(root, dir), { recursive: true });
writeFileSync(
  join(root, 'src/cli/main.ts'),
  "export async function main(argv: string[]): Promise<number> { console.log('src', argv.join(' ')); return 0; }\n",
);
writeFileSync(
  join(root, 'dist/cli/main.js'),
  "export async function main(argv) { console.log('dist', argv.join(' ')); return 0; }\n",
);
const past = new Date(Date.now() - 60_000);
utimesSync(join(root, 'src/cli/main.ts'), past, past);
utimesSync(join(root, 'src/cli'), past, past);
utimesSync(join(root, 'src'), past, past);

const run = () => execFileSync(process.execPath, [join(root, 'bin/hookd.js'), 'a', 'b'], { encoding: 'utf8' }).trim();

describe('bin/hookd.js', () => {
  it('runs src/ through tsx when dist/ was never built', () => {
    expect(run()).toBe('src a b');
  });

  it('runs dist/ while it is newer than every source file, and src/ again after a source change', () => {
    writeFileSync(join(root, 'dist/BUILT'), 'now\n');
    expect(run()).toBe('dist a b');
    writeFileSync(join(root, 'src/cli/new.ts'), 'export {};\n');
    expect(run()).toBe('src a b');
  });

  it('runs dist/ where there is no src/, as the installed package ships it (no BUILT stamp, no tsx needed)', () => {
    const pkg = mkdtempSync(join(tmpdir(), 'hookd-bin-package-'));
    try {
      for (const dir of ['bin', 'dist/cli']) mkdirSync(join(pkg, dir), { recursive: true });
      copyFileSync(join(ROOT, 'bin/hookd.js'), join(pkg, 'bin/hookd.js'));
      copyFileSync(join(root, 'dist/cli/main.js'), join(pkg, 'dist/cli/main.js'));
      writeFileSync(join(pkg, 'package.json'), '{ "type": "module" }\n');
      const out = execFileSync(process.execPath, [join(pkg, 'bin/hookd.js'), 'c'], { encoding: 'utf8' });
      expect(out.trim()).toBe('dist c');
    } finally {
      rmSync(pkg, { recursive: true, force: true });
    }
  });
});
