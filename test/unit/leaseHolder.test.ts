import { spawnSync } from 'node:child_process';
import { holderStarted, holderStopped, isHolderGone, newHolderId } from '../../src/ports/holderIdentity';

const withPid = (holderId: string, pid: number) => holderId.replace(/^(.+?):\d+:/, `$1:${pid}:`);

describe('lease holder ids', () => {
  const hasProcFs = /:\d+:\d+:[0-9a-f]+$/.test(newHolderId());

  it('name the host and the process', () => {
    expect(newHolderId()).toMatch(new RegExp(`^.+:${process.pid}:\\d*:[0-9a-f]{8}$`));
    expect(newHolderId()).not.toBe(newHolderId());
  });

  (hasProcFs ? it : it.skip)('tell a holder whose process ended on this host', () => {
    const ended = spawnSync(process.execPath, ['-e', '']).pid;
    expect(isHolderGone(withPid(newHolderId(), ended))).toBe(true);
    // A live process (this one's parent) is not gone.
    expect(isHolderGone(withPid(newHolderId(), process.ppid))).toBe(false);
  });

  (hasProcFs ? it : it.skip)("tell an earlier process with this pid from this process's running holders", () => {
    const id = newHolderId();
    expect(isHolderGone(id)).toBe(true);
    holderStarted(id);
    expect(isHolderGone(id)).toBe(false);
    holderStopped(id);
    expect(isHolderGone(id)).toBe(true);
  });

  it('conclude nothing about other hosts, other pid namespaces or unknown formats', () => {
    const ended = spawnSync(process.execPath, ['-e', '']).pid;
    const id = withPid(newHolderId(), ended);
    expect(isHolderGone(id.replace(/^.+?:/, 'some-other-host:'))).toBe(false);
    expect(isHolderGone(id.replace(/:(\d*):([0-9a-f]+)$/, ':1:$2'))).toBe(false);
    expect(isHolderGone(id.replace(/:(\d*):([0-9a-f]+)$/, '::$2'))).toBe(false);
    expect(isHolderGone('holder-a')).toBe(false);
  });
});
