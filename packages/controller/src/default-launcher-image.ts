// The launcher image that matches this controller: same repository release, same version.

import { readFileSync } from 'node:fs';
import { LAUNCHER_IMAGE_REPOSITORY } from './launcher-layout.js';

/** This package's version; compiled code sits in dist/src, two levels below package.json. */
export function controllerVersion(): string {
  const text = readFileSync(new URL('../../package.json', import.meta.url), 'utf8');
  const version: unknown = (JSON.parse(text) as { version?: unknown }).version;
  return typeof version === 'string' ? version : '0.0.0';
}

export function defaultLauncherImage(): string {
  return `${LAUNCHER_IMAGE_REPOSITORY}:${controllerVersion()}`;
}
