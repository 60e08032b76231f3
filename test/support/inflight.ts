/**
 * Waits on the emulator's count of area calls still being handled (`GET /_emulator/inflight`):
 * until one is held (a caller is in flight), or until none is (hangs and late answers have ended,
 * and are in the call log). Polls the count; no sleeping in place of it.
 */
import { request } from 'undici';

export async function untilInFlight(emulatorUrl: string, until: 'some' | 'none', ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    const { count } = (await (await request(`${emulatorUrl}/_emulator/inflight`)).body.json()) as { count: number };
    if (until === 'some' ? count > 0 : count === 0) return;
    if (Date.now() > deadline) throw new Error(`safety limit: the emulator had ${until === 'some' ? 'no call in flight' : `${count} calls still in flight`} after ${ms} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
