import { generateToken } from '../store/index.js';
import type { CliIo } from './io.js';

/** `hookd token`: prints a new random token. */
export async function tokenCommand(io: CliIo): Promise<number> {
  io.out(generateToken());
  return 0;
}
