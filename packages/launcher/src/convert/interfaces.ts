import { VmiInvalidError, type NicAttachment } from '@podvirt/api';
import { el, type XmlElement } from './xml.js';

/** The interface fields the converter reads (from @podvirt/api's VMI). */
interface ConvertibleInterface {
  readonly name: string;
  readonly model?: string;
  readonly bootOrder?: number;
  readonly pciAddress?: string;
}

const PCI_ADDRESS = /^([0-9a-fA-F]{4}):([0-9a-fA-F]{2}):([0-9a-fA-F]{2})\.([0-7])$/;

function modelType(model: string | undefined): string {
  return model === undefined || model === 'virtio' ? 'virtio-non-transitional' : model;
}

/**
 * Pod-network interfaces → `<interface type="ethernet">` on the tap the network set-up made:
 * the model, the guest MAC, the pod link's MTU, alias `ua-<name>`, the option ROM only when
 * the NIC boots, and a fixed PCI slot when asked.
 */
export function convertInterfaces(ifaces: readonly ConvertibleInterface[] | undefined, attachments: ReadonlyMap<string, NicAttachment>): XmlElement[] {
  return (ifaces ?? []).map((iface, i) => {
    const at = attachments.get(iface.name);
    if (at === undefined) throw VmiInvalidError.at(`spec.domain.devices.interfaces[${i}]`, 'NotFound', `interface ${JSON.stringify(iface.name)} has no pod network wired for it`);
    const pci = iface.pciAddress === undefined ? undefined : PCI_ADDRESS.exec(iface.pciAddress);
    if (pci === null) throw VmiInvalidError.at(`spec.domain.devices.interfaces[${i}].pciAddress`, 'Invalid', `${JSON.stringify(iface.pciAddress)} is not a PCI address such as 0000:81:01.0`);
    return el(
      'interface',
      { type: 'ethernet' },
      el('target', { dev: at.tap, managed: 'no' }),
      el('model', { type: modelType(iface.model) }),
      el('mac', { address: at.mac }),
      el('mtu', { size: at.mtu }),
      el('alias', { name: `ua-${iface.name}` }),
      iface.bootOrder === undefined ? el('rom', { enabled: 'no' }) : el('boot', { order: iface.bootOrder }),
      pci !== undefined && el('address', { type: 'pci', domain: `0x${pci[1] ?? ''}`, bus: `0x${pci[2] ?? ''}`, slot: `0x${pci[3] ?? ''}`, function: `0x${pci[4] ?? ''}` }),
    );
  });
}
