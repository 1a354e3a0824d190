export { Kubelet, type KubeletOptions } from './kubelet.js';
export { containerArgv, defaultImageTable, imageMapFrom, type ImageCommand, type ImageMap, type ImageMapEntry } from './image-map.js';
export { computePodStatus, type ContainerRecord, type ContainerState } from './pod-status.js';
