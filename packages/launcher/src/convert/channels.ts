import { el, type XmlElement } from './xml.js';

export const GUEST_AGENT_CHANNEL = 'org.qemu.guest_agent.0';

/** The guest-agent channel, always present as in KubeVirt; libvirt chooses the socket path. */
export function convertChannels(): XmlElement[] {
  return [
    el('channel', { type: 'unix' }, el('target', { type: 'virtio', name: GUEST_AGENT_CHANNEL })),
    el('controller', { type: 'virtio-serial', index: 0 }),
  ];
}
