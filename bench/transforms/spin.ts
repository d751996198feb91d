// The bench's hostile transform: spins `payload.ms` of CPU (until its time-out cuts it), then skips.
export default function spin({ payload }: { payload: { ms: number } }) {
  const end = Date.now() + payload.ms;
  while (Date.now() < end) {}
  return null;
}
