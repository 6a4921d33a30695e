// Loads editors/vscode/extension.js with a stub `vscode` module, activates
// it and checks what it registered: the adapter is `<gpudbg.path> dap`, a
// configuration without launch.json becomes a launch of the open Python
// file, and a launch without program or coreFile is refused.
'use strict';
const assert = require('assert');
const Module = require('module');
const path = require('path');

const registered = {};
const messages = [];
const stub = {
  workspace: { getConfiguration: (s) => ({ get: (k) => (s === 'gpudbg' && k === 'path' ? '/opt/venv/bin/gpudbg' : undefined) }) },
  window: {
    activeTextEditor: { document: { languageId: 'python' } },
    showInformationMessage: (m) => { messages.push(m); return Promise.resolve(); },
    showErrorMessage: (m) => { messages.push(m); return Promise.resolve(); },
  },
  debug: {
    registerDebugAdapterDescriptorFactory: (type, f) => { registered.factory = [type, f]; return { dispose() {} }; },
    registerDebugConfigurationProvider: (type, p) => { registered.provider = [type, p]; return { dispose() {} }; },
  },
  commands: { registerCommand: (name, fn) => { registered.command = name; return { dispose() {} }; } },
  DebugAdapterExecutable: class { constructor(command, args, options) { Object.assign(this, { command, args, options }); } },
};
const load = Module._load;
Module._load = function (request, ...rest) { return request === 'vscode' ? stub : load.call(this, request, ...rest); };

const ext = require(path.resolve(process.argv[2], 'extension.js'));
const context = { subscriptions: [] };
ext.activate(context);
assert.strictEqual(context.subscriptions.length, 3);
assert.strictEqual(registered.factory[0], 'gpudbg');
assert.strictEqual(registered.provider[0], 'gpudbg');
assert.strictEqual(registered.command, 'gpudbg.focus');
const d = registered.factory[1].createDebugAdapterDescriptor({ configuration: { cwd: '/w' } });
assert.strictEqual(d.command, '/opt/venv/bin/gpudbg');
assert.deepStrictEqual(d.args, ['dap']);
const filled = registered.provider[1].resolveDebugConfiguration(undefined, {});
assert.deepStrictEqual([filled.type, filled.request, filled.program], ['gpudbg', 'launch', '${file}']);
const kept = { type: 'gpudbg', request: 'launch', name: 'x', coreFile: 'c.nvcudmp' };
assert.strictEqual(registered.provider[1].resolveDebugConfiguration(undefined, kept), kept);
Promise.resolve(registered.provider[1].resolveDebugConfiguration(undefined, { type: 'gpudbg', request: 'launch', name: 'y' }))
  .then((r) => {
    assert.strictEqual(r, undefined);
    assert.ok(messages.some((m) => m.includes('"program"')));
    console.log('ok - extension');
  })
  .catch((e) => { console.error(e); process.exit(1); });
