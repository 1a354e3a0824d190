import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { containerdConfig, kubeletConfig } from './node-config.js';

describe('the real node\'s configuration', () => {
  test('containerd: runc on cgroupfs, overlayfs, the testbed\'s CNI dirs, the own pause image, no registry', () => {
    const toml = containerdConfig({ root: '/r', state: '/s', socket: '/s/c.sock', cniConfDir: '/tb/net.d', cniBinDir: '/usr/lib/cni', sandboxImage: 'localhost/podvirt/pause:1', runc: '/usr/sbin/runc' });
    assert.match(toml, /^version = 3$/m);
    assert.match(toml, /^root = "\/r"$/m);
    assert.match(toml, /^\s+address = "\/s\/c\.sock"$/m);
    assert.match(toml, /^\s+sandbox = "localhost\/podvirt\/pause:1"$/m);
    assert.match(toml, /^\s+snapshotter = "overlayfs"$/m);
    assert.match(toml, /^\s+SystemdCgroup = false$/m);
    assert.match(toml, /^\s+restrict_oom_score_adj = true$/m);
    assert.match(toml, /^\s+BinaryName = "\/usr\/sbin\/runc"$/m);
    assert.match(toml, /^\s+bin_dirs = \["\/usr\/lib\/cni"\]$/m);
    assert.match(toml, /^\s+conf_dir = "\/tb\/net\.d"$/m);
    assert.doesNotMatch(toml, /mirrors|registry\.configs|config_path/);
  });

  test('kubelet: cgroupfs on cgroup v1, no swap check, no iptables chains, serving on the node address', () => {
    const config = JSON.parse(kubeletConfig({ nodeIP: '10.200.1.1', port: 10250, healthzPort: 10248, clientCAFile: '/ca', tlsCertFile: '/c', tlsPrivateKeyFile: '/k', resolvConf: '/etc/resolv.conf', runtimeSocket: '/s/c.sock' })) as Record<string, unknown>;
    assert.equal(config['kind'], 'KubeletConfiguration');
    assert.equal(config['address'], '10.200.1.1');
    assert.equal(config['cgroupDriver'], 'cgroupfs');
    assert.equal(config['failCgroupV1'], false);
    assert.equal(config['failSwapOn'], false);
    assert.equal(config['makeIPTablesUtilChains'], false);
    assert.equal(config['readOnlyPort'], 0);
    assert.equal(config['containerRuntimeEndpoint'], 'unix:///s/c.sock');
    assert.deepEqual(config['authentication'], { anonymous: { enabled: false }, webhook: { enabled: true }, x509: { clientCAFile: '/ca' } });
  });
});
