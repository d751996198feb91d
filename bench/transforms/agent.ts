// The bench's transform: the same action as the bench's template mapping, built in code.
interface Payload {
  title: string;
  body: string;
  source: string;
}

export default function transform({ payload }: { payload: Payload }) {
  return { message: `${payload.title}: ${payload.body}`, wakeMode: 'next-heartbeat' as const, deliver: false };
}
