"""Pastes a file's bytes into an interactive bash through a real pty, as a terminal would.

Usage: paste.py on|off FILE WORKDIR
  on:  bash's readline has bracketed paste on; the paste is wrapped in ESC[200~ … ESC[201~.
  off: bracketed paste off; the bytes are sent as they are.
Then Enter, and waits until bash has run what it got (PROMPT_COMMAND prints a numbered mark
before each prompt). Prints what the terminal showed, then `done` or `timeout`.
"""
import os
import pty
import select
import sys
import time

mode, path, workdir = sys.argv[1], sys.argv[2], sys.argv[3]
text = open(path, 'rb').read()
rc = os.path.join(workdir, 'bashrc')
with open(rc, 'w') as f:
    f.write(f"bind 'set enable-bracketed-paste {mode}'\n")
    f.write("PS1='$ '\nPS2='> '\nn=0\nPROMPT_COMMAND='n=$((n+1)); echo \"<<mark-$n>>\"'\n")

env = {
    'PATH': os.environ.get('PATH', '/usr/bin:/bin'),
    'HOME': workdir,
    'TERM': 'xterm',
    'LANG': 'C.UTF-8',
    'LC_ALL': 'C.UTF-8',
    'HISTFILE': os.path.join(workdir, 'history'),
}
pid, fd = pty.fork()
if pid == 0:
    os.chdir(workdir)
    os.execvpe('bash', ['bash', '--noprofile', '--rcfile', rc, '-i'], env)

seen = b''


def until(mark, seconds):
    global seen
    end = time.time() + seconds
    while mark not in seen:
        left = end - time.time()
        if left <= 0:
            return False
        ready, _, _ = select.select([fd], [], [], left)
        if ready:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                return False
            if not chunk:
                return False
            seen += chunk
    return True


ok = until(b'<<mark-1>>', 20)
if ok:
    paste = b'\x1b[200~' + text + b'\x1b[201~' if mode == 'on' else text
    os.write(fd, paste)
    os.write(fd, b'\r')
    ok = until(b'<<mark-2>>', 30)
if not ok:
    os.write(fd, b'\x03')
os.write(fd, b'exit\r')
# Until bash has gone (the pty reads as closed).
until(b'\x00not printed', 10)
os.waitpid(pid, 0)
sys.stdout.write(seen.decode('utf-8', 'replace'))
sys.stdout.write('\ndone\n' if ok else '\ntimeout\n')
